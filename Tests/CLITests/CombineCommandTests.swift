import Foundation
import Measurement
import Testing

@testable import SyncSimCLI

/// `sweep --shard I/N` and `syncsim combine`: a sweep split into shards and combined again is
/// the sweep one command makes, file for file; shards that do not make one sweep are refused.
@Suite(.serialized) final class CombineCommandTests {
    /// Two variants × five seeds, small.
    static let sweep = [
        "sweep", "--seeds", "1-5", "--clients", "6", "--duration", "1h", "--quiet",
        "--reset-modes", "recoverUnsyncedChanges,discardUnsyncedChanges",
    ]
    private let directories = TemporaryDirectories()

    func shards(_ count: Int, extra: [String] = []) throws -> [String] {
        try (1...count).map { index in
            let directory = try directories.make()
            let status = syncsimStatus(
                Self.sweep + extra + ["--shard", "\(index)/\(count)", "--out", directory])
            #expect(status == 0)
            return directory
        }
    }

    @Test func shardsCombinedAreTheWholeSweepFileForFile() throws {
        let whole = try directories.make()
        // With a cohort, so that the timelines carry its columns through the shards too.
        let timeline = [
            "--timeline", "20m", "--set", #"cohorts=[{"name":"half","clientsPercent":50}]"#,
        ]
        #expect(syncsimStatus(Self.sweep + timeline + ["--out", whole]) == 0)
        #expect(csvColumn("cohort1_clients_online_mean", in: "\(whole)/sweep_timeline.csv") != nil)
        let parts = try shards(3, extra: timeline)
        // Shard 1 of 3 of five seeds is seed 1; shard 2 seeds 2-3; shard 3 seeds 4-5.
        #expect(csvColumn("seed", in: "\(parts[1])/runs.csv") == ["2", "3", "2", "3"])
        let combined = try directories.make()
        // In any order.
        #expect(syncsimStatus(["combine", parts[2], parts[0], parts[1], "--out", combined]) == 0)
        for file in [
            "runs.csv", "clients.csv", "sweep.csv", "sweep_paired.csv", "sweep_timeline.csv",
            "timelines/variant-0-seed-1.csv", "timelines/variant-1-seed-5.csv",
        ] {
            let bytes = try #require(fileBytes("\(whole)/\(file)"))
            #expect(bytes == fileBytes("\(combined)/\(file)"), "\(file) differs once combined")
        }
        // A timeline that is not its run's is refused, and so is a shard that lost one.
        let timelines = "\(parts[1])/timelines"
        try FileManager.default.removeItem(atPath: "\(timelines)/variant-1-seed-3.csv")
        try FileManager.default.copyItem(
            atPath: "\(timelines)/variant-1-seed-2.csv", toPath: "\(timelines)/variant-1-seed-3.csv"
        )
        #expect(
            syncsimStatus(["combine"] + parts + ["--out", try directories.make(), "--quiet"])
                == 65)
        try FileManager.default.removeItem(atPath: "\(timelines)/variant-1-seed-3.csv")
        #expect(
            syncsimStatus(["combine"] + parts + ["--out", try directories.make(), "--quiet"])
                == 65)
        // The sweeps table too: the same options (no shard), digest, seeds and run IDs.
        let sweeps = { (directory: String) throws -> String in
            let path = try self.directories.make() + "/sweeps.csv"
            #expect(
                syncsimStatus([
                    "export", "--database", "\(directory)/results.sqlite",
                    "--table", "sweeps", "--output", path,
                ]) == 0)
            return String(decoding: try #require(fileBytes(path)), as: UTF8.self)
        }
        let wholeSweeps = try sweeps(whole)
        #expect(wholeSweeps == (try sweeps(combined)))
        #expect(!wholeSweeps.contains("shard"))
        #expect((try sweeps(parts[0])).contains(#"""shard"":""1/3"""#))
        #expect(
            syncsimStatus([
                "compare", whole, combined, "--require-identical", "--quiet",
                "--out", try directories.make(),
            ]) == 0)
    }

    @Test func shardsThatDoNotMakeOneSweepAreRefusedWith312() throws {
        let parts = try shards(3)
        let whole = try directories.make()
        #expect(syncsimStatus(Self.sweep + ["--out", whole]) == 0)
        let otherClients = try directories.make()
        #expect(
            syncsimStatus(
                Self.sweep.map { $0 == "6" ? "5" : $0 } + ["--shard", "2/3", "--out", otherClients])
                == 0)
        let refused: [([String], String)] = [
            ([parts[0], parts[2]], "shards 2/3 missing"),
            ([parts[0], parts[1], parts[1], parts[2]], "shards 2/3 given twice"),
            ([parts[0], whole, parts[2]], "is not a shard"),
            ([parts[0], otherClients, parts[2]], "in its options"),
        ]
        for (inputs, reason) in refused {
            let out = try directories.make() + "/combined"
            let store = CombinedSweepProbe(paths: inputs)
            #expect(store.reason?.contains(reason) == true, "\(inputs): \(store.reason ?? "none")")
            #expect(syncsimStatus(["combine"] + inputs + ["--out", out]) == 65)
            #expect(!FileManager.default.fileExists(atPath: out), "combine wrote \(out)")
        }
        #expect(syncsimStatus(["combine"]) == 64)
        #expect(
            syncsimStatus([
                "combine", try directories.make(), "--out",
                try directories.make(),
            ]) == 66)
    }

    @Test func runsOfTwoToolchainsAreNotOneSweep() throws {
        var inputs = try shards(2).map { directory in
            let path = directory + "/results.sqlite"
            let store = try ResultStore(path: path, access: .readOnly)
            return ShardInput(path: path, sweep: try store.sweep(nil).0, runs: try store.runs())
        }
        #expect(throws: Never.self) { _ = try CombinedSweep(inputs) }
        inputs[1].runs[0].record.toolchain = "Swift 9.9"
        #expect {
            _ = try CombinedSweep(inputs)
        } throws: { error in
            "\(error)".contains("two toolchains") && "\(error)".hasPrefix("error 312")
        }
    }

    @Test func badShardsAreUsageErrors() throws {
        for shard in ["0/3", "4/3", "3", "a/b", "1/0", "1/3/4"] {
            #expect(
                syncsimStatus(
                    Self.sweep + [
                        "--shard", shard, "--out",
                        try directories.make(),
                    ]) == 64, "\(shard)")
        }
        // More shards than seeds: every shard would not hold a seed.
        #expect(
            syncsimStatus(
                Self.sweep + [
                    "--shard", "6/6", "--out",
                    try directories.make(),
                ]) == 64)
    }

    /// A suite of two sweeps (three and four seeds).
    func suiteFile() throws -> String {
        let path = try directories.make() + "/pair.json"
        try Data(
            """
            { "name": "pair", "sweeps": [
                { "name": "modes", "seeds": "3-5", "resetModes": "recoverUnsyncedChanges,manual",
                  "clients": 8, "duration": "1h" },
                { "name": "lossy", "seeds": "1-4", "clients": 6, "duration": "1h",
                  "set": ["network.lossPerMillion=50000"] } ] }
            """.utf8
        ).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `suite --shard I/N`, combined: the suite one `suite` command makes, file for file, its
    /// digest too; held against that suite as a baseline, every sweep is identical.
    @Test func suiteShardsCombinedAreTheWholeSuiteFileForFile() throws {
        let suite = try suiteFile()
        let whole = try directories.make()
        #expect(syncsimStatus(["suite", suite, "--quiet", "--out", whole]) == 0)
        let parts = try (1...3).map { index in
            let directory = try directories.make()
            #expect(
                syncsimStatus([
                    "suite", suite, "--quiet", "--shard", "\(index)/3", "--out", directory,
                ])
                    == 0)
            return directory
        }
        // Shard 2 of 3: seed 4 of `modes` (3-5), seeds 2 of `lossy` (1-4).
        #expect(csvColumn("seed", in: "\(parts[1])/runs.csv") == ["4", "4", "2"])
        let combined = try directories.make()
        #expect(syncsimStatus(["combine", parts[2], parts[0], parts[1], "--out", combined]) == 0)
        for file in [
            "suite.csv", "runs.csv", "clients.csv", "sweeps/modes/sweep.csv",
            "sweeps/modes/sweep_paired.csv", "sweeps/lossy/sweep.csv",
            "sweeps/lossy/sweep_paired.csv",
        ] {
            let bytes = try #require(fileBytes("\(whole)/\(file)"))
            #expect(bytes == fileBytes("\(combined)/\(file)"), "\(file) differs")
        }
        let suites = { (directory: String) in
            try ResultStore(path: directory + "/results.sqlite", access: .readOnly).suites()
        }
        #expect(try suites(combined).map(\.record) == suites(whole).map(\.record))
        #expect(try suites(combined).map(\.sweepIds) == suites(whole).map(\.sweepIds))

        let gated = try directories.make()
        #expect(
            syncsimStatus([
                "combine", parts[0], parts[1], parts[2], "--baseline", whole,
                "--require-identical", "--quiet", "--out", gated,
            ]) == 0)
        #expect(
            csvColumn("verdict", in: "\(gated)/suite_compare.csv") == ["identical", "identical"])
    }

    /// Suite shards that make no one suite, mixed with a sweep's, or run with a baseline are
    /// refused, with nothing written.
    @Test func suiteShardsThatDoNotMakeOneSuiteAreRefused() throws {
        let suite = try suiteFile()
        let run = { (extra: [String]) -> String in
            let directory = try! self.directories.make()
            #expect(syncsimStatus(["suite", suite, "--quiet", "--out", directory] + extra) == 0)
            return directory
        }
        let (first, second) = (run(["--shard", "1/2"]), run(["--shard", "2/2"]))
        let onlyModes = run(["--shard", "2/2", "--only", "modes"])
        let sweepShard = try directories.make()
        #expect(
            syncsimStatus(Self.sweep + ["--shard", "2/2", "--out", sweepShard]) == 0)
        for (shards, status) in [
            ([first, onlyModes], Int32(65)),  // other sweeps
            ([first, sweepShard], 65),  // a sweep's shard
            ([first], 65),  // shard 2/2 missing
            ([first, second, second], 65),  // given twice
        ] {
            let out = try directories.make()
            #expect(syncsimStatus(["combine"] + shards + ["--out", out]) == status)
            #expect(fileBytes(out + "/results.sqlite") == nil)
        }
        // A sweep's shards with --baseline; --shard with --baseline; more shards than seeds.
        let out = try directories.make()
        #expect(
            syncsimStatus(["combine", sweepShard, "--baseline", first, "--out", out]) == 64)
        #expect(
            syncsimStatus(["suite", suite, "--shard", "1/2", "--baseline", first, "--out", out])
                == 64)
        #expect(syncsimStatus(["suite", suite, "--shard", "1/4", "--out", out]) == 64)
        #expect(syncsimStatus(["suite", suite, "--shard", "0/4", "--out", out]) == 64)
        #expect(fileBytes(out + "/results.sqlite") == nil)
    }

    @Test func shardRangesCoverTheSeedsOnceInNearlyEqualParts() {
        for total in 1...40 {
            for count in 1...total {
                let ranges = (1...count).map {
                    SweepShard(index: $0, count: count).range(of: total)
                }
                #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == total)
                #expect(
                    zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                let sizes = ranges.map(\.count)
                #expect(sizes.min()! >= 1 && sizes.max()! - sizes.min()! <= 1)
            }
        }
        #expect(SweepShard("2/4") == SweepShard(index: 2, count: 4))
        #expect(SweepShard("5/4") == nil && SweepShard("0/1") == nil && SweepShard("1/") == nil)
    }
}

/// The reason `CombinedSweep` gives for refusing the sweeps at `paths` (nil: it combines them).
private struct CombinedSweepProbe {
    var reason: String?

    init(paths: [String]) {
        do {
            let inputs = try paths.map { path in
                let database = CompareCommand.databasePath(path)
                let store = try ResultStore(path: database, access: .readOnly)
                return ShardInput(
                    path: database, sweep: try store.sweep(nil).0,
                    runs: try store.runs())
            }
            _ = try CombinedSweep(inputs)
            reason = nil
        } catch {
            reason = "\(error)"
        }
    }
}
