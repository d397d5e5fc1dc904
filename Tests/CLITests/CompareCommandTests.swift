import Foundation
import Testing

@testable import Measurement
@testable import SyncSimCLI

/// `syncsim compare` end to end, in process: the same sweep twice is identical, a changed one
/// is named run by run and fails `--require-identical`, and bad input writes nothing.
@Suite(.serialized) final class CompareCommandTests {
    /// Four small runs: two seeds × two reset modes.
    static let small = [
        "--seeds", "3-4", "--reset-modes", "recoverUnsyncedChanges,manual", "--clients", "10",
        "--duration", "1h", "--quiet",
    ]

    private let directories = TemporaryDirectories()

    @Test func theSameSweepTwiceIsIdenticalAndAChangedOneIsNot() throws {
        let baseline = try directories.make()
        let again = try directories.make()
        let changed = try directories.make()
        let out = try directories.make()
        #expect(syncsimStatus(["sweep", "--out", baseline, "--jobs", "1"] + Self.small) == 0)
        #expect(syncsimStatus(["sweep", "--out", again, "--jobs", "2"] + Self.small) == 0)
        let lossy = ["--set", "network.lossPerMillion=50000"]
        #expect(syncsimStatus(["sweep", "--out", changed] + Self.small + lossy) == 0)

        // A directory or its database, either way.
        #expect(
            syncsimStatus([
                "compare", baseline, again + "/results.sqlite", "--out", out, "--require-identical",
                "--quiet",
            ]) == 0)
        #expect(csvColumn("identical", in: out + "/compare_runs.csv") == ["1", "1", "1", "1"])
        #expect(csvColumn("seed", in: out + "/compare_runs.csv") == ["3", "4", "3", "4"])
        let unchanged = try #require(csvColumn("mean_difference", in: out + "/compare.csv"))
        #expect(unchanged.count > 40 && unchanged.allSatisfy { $0 == "0.000000" })

        #expect(
            syncsimStatus(["compare", baseline, changed, "--out", out, "--require-identical"]) == 1)
        #expect(csvColumn("identical", in: out + "/compare_runs.csv") == ["0", "0", "0", "0"])
        let baselineDigests = csvColumn("trace_digest", in: baseline + "/runs.csv")
        #expect(
            csvColumn("baseline_trace_digest", in: out + "/compare_runs.csv") == baselineDigests)
        #expect(
            csvColumn("candidate_trace_digest", in: out + "/compare_runs.csv")
                == csvColumn("trace_digest", in: changed + "/runs.csv"))
        // Lost messages went up in every run pair, which compare.csv shows seed by seed.
        let metrics = try #require(csvColumn("metric", in: out + "/compare.csv"))
        let higher = try #require(csvColumn("higher_in_candidate", in: out + "/compare.csv"))
        let lost = metrics.indices.filter { metrics[$0] == "messages_lost" }
        #expect(lost.count == 2 && lost.allSatisfy { higher[$0] == "2" })
        // Without --require-identical a difference is a result, not a failure.
        #expect(syncsimStatus(["compare", baseline, changed, "--out", out, "--quiet"]) == 0)
    }

    @Test func badInputExitsWithTheDatabaseStatusAndWritesNothing() throws {
        let directory = try directories.make()
        let out = directory + "/out"
        let runOnly = directory + "/run"
        #expect(
            syncsimStatus([
                "run", "--out", runOnly, "--clients", "5", "--duration", "1h", "--quiet",
            ])
                == 0)
        let sweep = directory + "/sweep"
        #expect(syncsimStatus(["sweep", "--out", sweep] + Self.small) == 0)
        let otherSeeds = directory + "/other"
        #expect(
            syncsimStatus(
                ["sweep", "--out", otherSeeds, "--seeds", "7-8"] + Self.small.dropFirst(2)) == 0)

        #expect(syncsimStatus(["compare", directory + "/missing", sweep, "--out", out]) == 66)
        #expect(syncsimStatus(["compare", runOnly, sweep, "--out", out]) == 65)  // no sweep: 310
        #expect(syncsimStatus(["compare", sweep, otherSeeds, "--out", out]) == 65)  // no seed: 311
        #expect(
            syncsimStatus(["compare", sweep, sweep, "--candidate-sweep", "2", "--out", out]) == 65)
        #expect(syncsimStatus(["compare", sweep]) == 64)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
