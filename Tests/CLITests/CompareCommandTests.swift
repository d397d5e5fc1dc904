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

    /// Two `syncsim run` results: the same seed twice is the same run; a restore at 1 h parts
    /// the runs between the checkpoints around it; runs of other seeds are refused.
    @Test func runsAreComparedWhenNeitherDatabaseHoldsASweep() throws {
        let run = ["run", "--clients", "6", "--duration", "2h", "--checkpoints", "200", "--quiet"]
        let (plain, again, restored, otherSeed, out) = (
            try directories.make(), try directories.make(), try directories.make(),
            try directories.make(), try directories.make()
        )
        #expect(syncsimStatus(run + ["--out", plain]) == 0)
        #expect(syncsimStatus(run + ["--out", again]) == 0)
        let restore = #"[{"kind":"restoreFromBackup","atSeconds":3600}]"#
        #expect(syncsimStatus(run + ["--set", "faults=\(restore)", "--out", restored]) == 0)
        #expect(syncsimStatus(run + ["--seed", "2", "--out", otherSeed]) == 0)

        #expect(syncsimStatus(["compare", plain, again, "--require-identical", "--out", out]) == 0)
        let unmoved = try #require(csvColumn("difference", in: out + "/compare_run.csv"))
        #expect(unmoved.count > 40 && unmoved.allSatisfy { $0 == "0" || $0 == "0.000000" })

        #expect(
            syncsimStatus(["compare", plain, restored, "--require-identical", "--out", out]) == 1)
        let metric = try #require(csvColumn("metric", in: out + "/compare_run.csv"))
        let difference = try #require(csvColumn("difference", in: out + "/compare_run.csv"))
        let resets = try #require(metric.firstIndex(of: "resets_recovered"))
        #expect(Int(difference[resets])! > 0)
        // The checkpoints agree before the restore (3,600 s) and not after it.
        let checkpoints = { (directory: String) throws -> [RunComparison.Checkpoint] in
            let bytes = try #require(fileBytes(directory + "/checkpoints.csv"))
            return try #require(
                RunComparison.Checkpoint.parse(String(decoding: bytes, as: UTF8.self)))
        }
        let (before, after) = (try checkpoints(plain), try checkpoints(restored))
        guard case .at(let lastEqual?, let parted) = RunComparison.divergence(before, after) else {
            Issue.record("the checkpoints do not part after an agreeing stretch")
            return
        }
        #expect(lastEqual.simulatedTimeNs <= 3_600_000_000_000)
        #expect(parted.simulatedTimeNs >= 3_600_000_000_000)

        // Refused: other seeds (314), a run that is not there (313), runs and sweeps at once.
        let refused = try directories.make() + "/refused"
        #expect(syncsimStatus(["compare", plain, otherSeed, "--out", refused]) == 65)
        #expect(
            syncsimStatus(["compare", plain, again, "--baseline-run", "9", "--out", refused])
                == 65)
        #expect(!FileManager.default.fileExists(atPath: refused))
        #expect(
            syncsimStatus([
                "compare", plain, again, "--baseline-run", "1",
                "--candidate-sweep", "1",
            ]) == 64)
    }
}
