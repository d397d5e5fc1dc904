import Foundation
import Testing

@testable import Simulation

@Suite struct ScenarioDecodingTests {
    func decode(_ json: String) throws(ScenarioError) -> Scenario {
        try Scenario.decode(bytes: Array(json.utf8), file: "test.json")
    }

    func error(_ json: String) -> ScenarioError? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func theEmbeddedDefaultEqualsTheFileInData() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Data/scenarios/default.json")
        let onDisk = try String(contentsOf: url, encoding: .utf8)
        #expect(onDisk == Scenario.defaultScenarioJSON)
        let scenario = try decode(Scenario.defaultScenarioJSON)
        #expect(scenario.name == "default")
        #expect(scenario.clientsCount == 1_000)
        #expect(scenario.faults.count == 2)
    }

    @Test func anEmptyObjectGivesTheDocumentedDefaults() throws {
        #expect(try decode("{}") == Scenario())
    }

    @Test func everyScenarioInDataDecodes() throws {
        let directory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Data/scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".json")
        }.sorted()
        #expect(!files.isEmpty)
        for file in files {
            _ = try Scenario.load(path: directory.appendingPathComponent(file).path)
        }
    }

    func decode(_ json: String, setting texts: [String]) throws -> Scenario {
        let settings = try texts.map { text in try #require(ScenarioSetting(text)) }
        return try Scenario.decode(bytes: Array(json.utf8), file: "test.json", settings: settings)
    }

    @Test func settingsChangeFieldsAsTheFileWould() throws {
        let json = Scenario.defaultScenarioJSON
        // Every field set to the value it has: the same scenario.
        let same = try decode(
            json,
            setting: [
                "workload.zipfExponent=0.99", "seed=1", "clientReset.mode=recoverUnsyncedChanges",
                "server.clientRecoveryEnabled=true", "name=\"default\"",
            ])
        #expect(same == (try decode(json)))
        let changed = try decode(
            json,
            setting: [
                "workload.listPercent=20", "clientReset.mode=manual", "faults=[]",
                "network.latencySigma=0.25",
            ])
        var expected = try decode(json)
        expected.workload.listPercent = 20
        expected.clientReset.mode = .manual
        expected.faults = []
        expected.network.latencySigma = 0.25
        #expect(changed == expected)
        // A missing object is created; the last setting of a path wins.
        let empty = try decode(
            "{}", setting: ["server.backupIntervalSeconds=60", "server.backupIntervalSeconds=90"])
        #expect(empty.server.backupIntervalSeconds == 90)
    }

    @Test func aBadSettingIsReportedWithTheFieldAndTheSetting() throws {
        func failure(_ text: String) -> ScenarioError? {
            do {
                _ = try decode("{ \"seed\": 3 }", setting: [text])
                return nil
            } catch {
                return error as? ScenarioError
            }
        }
        let unknown = try #require(failure("workload.listPercnt=2"))
        #expect(unknown.code == .unknownField)
        #expect(unknown.field == "workload.listPercnt")
        #expect(unknown.file == "test.json with --set workload.listPercnt=2")
        #expect(failure("seed.low=2")?.code == .wrongType)
        #expect(failure("seed.low=2")?.field == "seed")
        #expect(failure("workload.listPercent=101")?.code == .outOfRange)
        #expect(failure("workload.listPercent=ten")?.code == .wrongType)  // a bare string
        #expect(ScenarioSetting("noequals") == nil)
        #expect(ScenarioSetting("a..b=1") == nil)
        #expect(ScenarioSetting("=1") == nil)
        #expect(ScenarioSetting("name=a=b")?.valueText == "a=b")
    }

    @Test func malformedJSON() {
        let failure = error("{ \"clientsCount\": 3, }x")
        #expect(failure?.code == .malformedJSON)
        #expect(failure?.description.contains("test.json") == true)
    }

    @Test func unknownFieldIsNamedWithItsPath() {
        let failure = error(#"{ "network": { "latencyMsMedian": 5 } }"#)
        #expect(failure?.code == .unknownField)
        #expect(failure?.field == "network.latencyMsMedian")
        #expect(failure?.fix.contains("latencyMillisecondsMedian") == true)
    }

    @Test func wrongTypes() {
        #expect(error(#"{ "clientsCount": "many" }"#)?.code == .wrongType)
        #expect(error(#"{ "clientsCount": 2.5 }"#)?.code == .wrongType)
        #expect(error(#"{ "clientsCount": true }"#)?.code == .wrongType)
        #expect(error(#"{ "workload": 3 }"#)?.field == "workload")
        #expect(error("[1, 2]")?.code == .wrongType)
    }

    @Test func outOfRangeNamesTheFieldAndTheRange() {
        let failure = error(#"{ "clientsCount": 0 }"#)
        #expect(failure?.code == .outOfRange)
        #expect(failure?.field == "clientsCount")
        #expect(failure?.fix.contains("between 1 and 100000") == true)
        #expect(error(#"{ "workload": { "keyDistribution": "pareto" } }"#)?.code == .outOfRange)
        #expect(error(#"{ "network": { "latencySigma": -1 } }"#)?.field == "network.latencySigma")
    }

    @Test func faultsMustBeInsideTheRun() {
        let failure = error(
            #"{ "durationSeconds": 100, "faults": [ { "kind": "terminateSync", "atSeconds": 100 } ] }"#
        )
        #expect(failure?.field == "faults[0].atSeconds")
        #expect(error(#"{ "faults": [ { "atSeconds": 5 } ] }"#)?.field == "faults[0].kind")
    }

    @Test func inconsistentFields() {
        #expect(
            error(#"{ "workload": { "erasePercent": 60, "addIntegerPercent": 50 } }"#)?.code
                == .inconsistent)
        #expect(
            error(#"{ "network": { "reconnectSecondsMin": 10, "reconnectSecondsMax": 5 } }"#)?.code
                == .inconsistent)
    }

    @Test func clientResetFieldsDecodeAndAreChecked() throws {
        let scenario = try decode(
            #"{ "clientReset": { "mode": "manual", "manualHandling": "nextLaunch", "relaunchSecondsMean": 60 }, "server": { "clientRecoveryEnabled": false }, "workload": { "listPercent": 20 } }"#
        )
        #expect(scenario.clientReset.mode == .manual)
        #expect(scenario.clientReset.manualHandling == .nextLaunch)
        #expect(scenario.clientReset.relaunchSecondsMean == 60)
        #expect(!scenario.server.clientRecoveryEnabled)
        #expect(scenario.workload.listPercent == 20)
        #expect(try decode("{}").clientReset.mode == .recoverUnsyncedChanges)
        let unknownMode = error(#"{ "clientReset": { "mode": "recover" } }"#)
        #expect(unknownMode?.field == "clientReset.mode")
        #expect(unknownMode?.fix.contains("\"recoverOrDiscardUnsyncedChanges\"") == true)
        #expect(
            error(#"{ "server": { "clientRecoveryEnabled": 1 } }"#)?.field
                == "server.clientRecoveryEnabled")
        #expect(
            error(
                #"{ "workload": { "erasePercent": 50, "addIntegerPercent": 30, "listPercent": 30 } }"#
            )?
            .code == .inconsistent)
        let twice = error(
            #"{ "faults": [ { "kind": "breakingSchemaChange", "atSeconds": 10 }, { "kind": "breakingSchemaChange", "atSeconds": 20 } ] }"#
        )
        #expect(twice?.field == "faults[1].kind")
        #expect(twice?.code == .inconsistent)
        let revoke = try decode(
            #"{ "faults": [ { "kind": "revokeAccess", "atSeconds": 10, "partitionsPercent": 30 } ] }"#
        )
        #expect(revoke.faults[0].partitionsPercent == 30)
        let readOnly = try decode(
            #"{ "faults": [ { "kind": "revokeWriteAccess", "atSeconds": 10, "partitionsPercent": 40 } ] }"#
        )
        #expect(
            readOnly.faults[0]
                == FaultSpec(kind: .revokeWriteAccess, atSeconds: 10, partitionsPercent: 40))
        #expect(
            error(
                #"{ "faults": [ { "kind": "terminateSync", "atSeconds": 10, "partitionsPercent": 30 } ] }"#
            )?
            .field == "faults[0].partitionsPercent")
    }

    @Test func maxOfflineFieldsDecodeAndAreChecked() throws {
        let scenario = try decode(
            #"{ "server": { "clientMaxOfflineSeconds": 86400, "historyCompactionIntervalSeconds": 600 } }"#
        )
        #expect(scenario.server.clientMaxOfflineSeconds == 86_400)
        #expect(scenario.server.historyCompactionIntervalSeconds == 600)
        #expect(try decode("{}").server.clientMaxOfflineSeconds == 0)
        let never = error(#"{ "server": { "historyCompactionIntervalSeconds": 0 } }"#)
        #expect(never?.code == .outOfRange)
        #expect(never?.field == "server.historyCompactionIntervalSeconds")
        #expect(
            error(#"{ "server": { "clientMaxOfflineSeconds": -5 } }"#)?.field
                == "server.clientMaxOfflineSeconds")
    }

    @Test func crashFieldsDecodeAndAreChecked() throws {
        let scenario = try decode(
            #"{ "crashes": { "appCrashesPerDay": 2.5, "appRelaunchSecondsMean": 30, "serverRestartSeconds": 90 }, "faults": [ { "kind": "appCrash", "atSeconds": 10, "clientsPercent": 40 }, { "kind": "serverCrash", "atSeconds": 20 } ] }"#
        )
        #expect(scenario.crashes.appCrashesPerDay == 2.5)
        #expect(scenario.crashes.appRelaunchSecondsMean == 30)
        #expect(scenario.crashes.serverRestartSeconds == 90)
        #expect(scenario.faults.map(\.kind) == [.appCrash, .serverCrash])
        #expect(scenario.faults.map(\.clientsPercent) == [40, 100])
        #expect(try decode("{}").crashes == CrashSpec())
        let negative = error(#"{ "crashes": { "appCrashesPerDay": -1 } }"#)
        #expect(negative?.code == .outOfRange)
        #expect(negative?.field == "crashes.appCrashesPerDay")
        #expect(
            error(#"{ "crashes": { "serverRestartSeconds": 0 } }"#)?.field
                == "crashes.serverRestartSeconds")
        #expect(error(#"{ "crashes": { "appCrashRate": 1 } }"#)?.code == .unknownField)
        let misplaced = error(
            #"{ "faults": [ { "kind": "serverCrash", "atSeconds": 10, "clientsPercent": 30 } ] }"#)
        #expect(misplaced?.code == .inconsistent)
        #expect(misplaced?.field == "faults[0].clientsPercent")
        #expect(misplaced?.fix == "remove it, or make the fault's kind appCrash")
    }

    @Test func swarmFieldsDecodeAndAreChecked() throws {
        let scenario = try decode(
            #"{ "swarm": { "faultsPerDay": 6, "kinds": ["serverCrash", "revokeAccess", "serverCrash"], "undoSecondsMean": 120 } }"#
        )
        #expect(scenario.swarm.faultsPerDay == 6)
        #expect(scenario.swarm.kinds == [.serverCrash, .revokeAccess, .serverCrash])
        #expect(scenario.swarm.undoSecondsMean == 120)
        #expect(try decode("{}").swarm.kinds == SwarmSpec.drawableKinds)
        #expect(!SwarmSpec.drawableKinds.contains(.restoreAccess))
        let undo = error(#"{ "swarm": { "kinds": ["terminateSync", "restoreAccess"] } }"#)
        #expect(undo?.code == .inconsistent)
        #expect(undo?.field == "swarm.kinds[1]")
        let unknown = error(#"{ "swarm": { "kinds": ["meteorStrike"] } }"#)
        #expect(unknown?.code == .outOfRange)
        #expect(unknown?.field == "swarm.kinds[0]")
        #expect(error(#"{ "swarm": { "kinds": [] } }"#)?.field == "swarm.kinds")
        #expect(error(#"{ "swarm": { "faultsPerDay": -2 } }"#)?.field == "swarm.faultsPerDay")
    }

    @Test func aMissingFileIsUnreadable() {
        do {
            _ = try Scenario.load(path: "/nonexistent/scenario.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.file == "/nonexistent/scenario.json")
        }
    }
}
