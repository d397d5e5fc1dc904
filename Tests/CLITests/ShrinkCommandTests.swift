import Foundation
import Testing

@testable import SyncSimCLI

/// `syncsim shrink`: a failed run's capsule in, a smaller failing run out.
@Suite(.serialized) final class ShrinkCommandTests {
    let directories = TemporaryDirectories()

    /// Four clients in two partitions for an hour, with a download gap planted every 5th
    /// download: the run fails.
    static let sabotaged = """
        { "name": "sabotaged", "clientsCount": 4, "partitionsCount": 2, "durationSeconds": 3600,
          "workload": { "writesPerMinuteOnline": 2, "objectsPerPartition": 50 },
          "connectivity": { "onlineSecondsMean": 900, "offlineSecondsMean": 300 },
          "sabotage": { "kind": "downloadGap", "every": 5 } }
        """

    /// The failed run's capsule shrinks; the smallest run's capsule replays to its digest; the
    /// files are written whole.
    @Test func aFailedRunsCapsuleShrinksAndTheResultReplays() throws {
        let directory = try directories.make()
        let scenario = directory + "/sabotaged.json"
        try Data(Self.sabotaged.utf8).write(to: URL(fileURLWithPath: scenario))
        #expect(
            syncsimStatus(["run", scenario, "--seed", "2", "--out", directory, "--quiet"]) == 1)
        let capsule = directory + "/capsule-seed-2.json"
        let out = directory + "/shrunk"
        #expect(
            syncsimStatus(["shrink", capsule, "--max-runs", "12", "--out", out, "--quiet"]) == 0)
        let runs = try #require(csvColumn("verdict", in: out + "/shrink.csv"))
        #expect(runs.count >= 2 && runs.count <= 12)
        #expect(runs[0] == "kept")
        // The search's first run is the failed run itself, bit for bit.
        let original = try JSONDecoder().decode(
            FailureCapsuleDigest.self, from: try #require(fileBytes(capsule)))
        #expect(try #require(csvColumn("digest", in: out + "/shrink.csv")).first == original.digest)
        let shrunk = try JSONDecoder().decode(
            FailureCapsuleFields.self,
            from: try #require(fileBytes(out + "/capsule-shrunk-seed-2.json")))
        #expect(shrunk.seed == 2 && shrunk.scenario == scenario)
        #expect(
            shrunk.clients <= 4 && shrunk.reproduce.hasPrefix("syncsim run \(scenario) --seed 2"))
        // The sabotage is planted in the file, not set: no setting names it.
        #expect(!shrunk.settings.contains { $0.hasPrefix("sabotage") })

        // Replaying the smallest run fails with the digest the capsule records.
        let replay = directory + "/replay"
        var arguments = [
            "run", scenario, "--seed", "2", "--clients", String(shrunk.clients),
            "--duration", String(shrunk.durationSeconds), "--out", replay, "--quiet",
        ]
        for setting in shrunk.settings { arguments += ["--set", setting] }
        #expect(syncsimStatus(arguments) == 1)
        let replayed = try JSONDecoder().decode(
            FailureCapsuleFields.self,
            from: try #require(fileBytes(replay + "/capsule-seed-2.json")))
        #expect(replayed.digest == shrunk.digest)
    }

    @Test func aCapsuleThatCannotBeReadExits2AndOneThatPassesExits1() throws {
        let directory = try directories.make()
        let out = directory + "/out"
        #expect(syncsimStatus(["shrink", directory + "/missing.json", "--out", out]) == 2)
        let broken = directory + "/broken.json"
        try Data(#"{ "scenario": "default", "failure": "x", "fixedIn": "" }"#.utf8)
            .write(to: URL(fileURLWithPath: broken))
        #expect(syncsimStatus(["shrink", broken, "--out", out]) == 2)
        let scenario = directory + "/clean.json"
        try Data(
            Self.sabotaged.replacingOccurrences(
                of: #""sabotage": { "kind": "downloadGap", "every": 5 }"#, with: #""seed": 1"#
            ).utf8
        ).write(to: URL(fileURLWithPath: scenario))
        let passing = directory + "/passing.json"
        try Data(
            #"{ "scenario": "\#(scenario)", "seed": 2, "failure": "x", "fixedIn": "" }"#.utf8
        ).write(to: URL(fileURLWithPath: passing))
        #expect(syncsimStatus(["shrink", passing, "--out", out, "--quiet"]) == 1)
        #expect(fileBytes(out + "/shrink.csv") == nil)
        #expect(syncsimStatus(["shrink", passing, "--max-runs", "0"]) == 64)
    }
}

/// The digest of a capsule as `run` writes it (no size overrides).
private struct FailureCapsuleDigest: Decodable {
    var digest: String
}

/// The fields of a capsule these tests read.
private struct FailureCapsuleFields: Decodable {
    var scenario: String
    var seed: UInt64
    var clients: UInt32
    var durationSeconds: UInt64
    var settings: [String]
    var digest: String
    var reproduce: String

    enum CodingKeys: String, CodingKey {
        case scenario, seed, clients, durationSeconds, settings, digest, reproduce
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        scenario = try container.decode(String.self, forKey: .scenario)
        seed = try container.decode(UInt64.self, forKey: .seed)
        clients = try container.decode(UInt32.self, forKey: .clients)
        durationSeconds = try container.decode(UInt64.self, forKey: .durationSeconds)
        settings = try container.decodeIfPresent([String].self, forKey: .settings) ?? []
        digest = try container.decode(String.self, forKey: .digest)
        reproduce = try container.decode(String.self, forKey: .reproduce)
    }
}
