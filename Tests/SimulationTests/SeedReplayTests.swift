import Foundation
import Testing

@testable import Simulation

/// Replays every seed in Data/seeds/: each is a run that once failed and must pass now.
@Suite struct SeedReplayTests {
    struct SeedFile: Decodable {
        var scenario: String
        var seed: UInt64
        var clients: UInt32?
        var durationSeconds: UInt64?
        var failure: String
        var fixedIn: String
    }

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func seedFiles() -> [String] {
        let directory = repository.appendingPathComponent("Data/seeds").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func thereAreSeedsToReplay() {
        #expect(!Self.seedFiles().isEmpty)
    }

    @Test(arguments: seedFiles())
    func replay(file: String) throws {
        let data = try Data(
            contentsOf: Self.repository.appendingPathComponent("Data/seeds/\(file)"))
        let entry = try JSONDecoder().decode(SeedFile.self, from: data)
        var scenario =
            entry.scenario == "default"
            ? try Scenario.decode(bytes: Array(Scenario.defaultScenarioJSON.utf8), file: "default")
            : try Scenario.load(path: Self.repository.appendingPathComponent(entry.scenario).path)
                .scenario
        if let clients = entry.clients { scenario.clientsCount = clients }
        if let duration = entry.durationSeconds {
            scenario.durationSeconds = duration
            scenario.faults = scenario.faults.filter { $0.atSeconds < duration }
        }
        let result = World(scenario: scenario, seed: entry.seed).run()
        #expect(result.passed, "\(file) (once: \(entry.failure)) fails again: \(result.failures)")
        #expect(result.converged)
    }
}
