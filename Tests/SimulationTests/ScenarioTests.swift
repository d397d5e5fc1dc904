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
            error(#"{ "workload": { "erasePercent": 50, "addIntegerPercent": 30, "listPercent": 30 } }"#)?
                .code == .inconsistent)
        let twice = error(
            #"{ "faults": [ { "kind": "breakingSchemaChange", "atSeconds": 10 }, { "kind": "breakingSchemaChange", "atSeconds": 20 } ] }"#
        )
        #expect(twice?.field == "faults[1].kind")
        #expect(twice?.code == .inconsistent)
        let revoke = try decode(
            #"{ "faults": [ { "kind": "revokeAccess", "atSeconds": 10, "partitionsPercent": 30 } ] }"#)
        #expect(revoke.faults[0].partitionsPercent == 30)
        #expect(
            error(#"{ "faults": [ { "kind": "terminateSync", "atSeconds": 10, "partitionsPercent": 30 } ] }"#)?
                .field == "faults[0].partitionsPercent")
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
