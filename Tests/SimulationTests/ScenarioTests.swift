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
