import Foundation
import Testing

@testable import Simulation

/// Replays every seed in Data/seeds/: each is a run that once failed and must pass now.
@Suite struct SeedReplayTests {
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
        let entry = try JSONDecoder().decode(FailureCapsule.self, from: data)
        let settings = try (entry.settings ?? []).map { text in
            try #require(ScenarioSetting(text), "\(file): setting '\(text)' is not PATH=VALUE")
        }
        var scenario =
            entry.scenario == "default"
            ? try Scenario.decode(
                bytes: Array(Scenario.defaultScenarioJSON.utf8), file: "default",
                settings: settings)
            : try Scenario.load(
                path: Self.repository.appendingPathComponent(entry.scenario).path,
                settings: settings
            ).scenario
        scenario.applyOverrides(
            clientsCount: entry.clients, durationSeconds: entry.durationSeconds,
            resetMode: entry.resetMode, backupIntervalSeconds: entry.backupIntervalSeconds)
        let result = World(scenario: scenario, seed: entry.seed).run()
        #expect(result.passed, "\(file) (once: \(entry.failure)) fails again: \(result.failures)")
        #expect(result.converged)
    }
}
