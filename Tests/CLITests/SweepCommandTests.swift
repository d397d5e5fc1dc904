import Foundation
import Testing

@testable import Measurement
@testable import Simulation
@testable import SyncSimCLI

/// `syncsim sweep` end to end, in process: the same files with one thread or two, every run the
/// run its reproduction line replays, and bad input refused before anything is written.
@Suite(.serialized) final class SweepCommandTests {
    /// Four small runs: two seeds × two reset modes.
    static let small = [
        "--seeds", "5-6", "--reset-modes", "recoverUnsyncedChanges,discardUnsyncedChanges",
        "--clients", "20", "--duration", "2h", "--quiet",
    ]
    static let files = ["runs.csv", "clients.csv", "sweep.csv", "sweep_paired.csv"]

    private let directories = TemporaryDirectories()

    func rows(_ path: String) throws -> [String] {
        String(decoding: try #require(fileBytes(path)), as: UTF8.self)
            .components(separatedBy: "\r\n").dropLast()
    }

    @Test func oneThreadAndTwoGiveByteIdenticalFiles() throws {
        let serial = try directories.make()
        let parallel = try directories.make()
        #expect(syncsimStatus(["sweep", "--jobs", "1", "--out", serial] + Self.small) == 0)
        #expect(syncsimStatus(["sweep", "--jobs", "2", "--out", parallel] + Self.small) == 0)
        for file in Self.files {
            let bytes = try #require(fileBytes("\(serial)/\(file)"))
            #expect(bytes == fileBytes("\(parallel)/\(file)"), "\(file) differs with 2 jobs")
        }
        // Variant-major, seeds ascending: 5, 6 in recover, then 5, 6 in discard.
        let runs = try rows("\(serial)/runs.csv")
        #expect(runs.count == 5)
        #expect(csvColumn("seed", in: "\(serial)/runs.csv") == ["5", "6", "5", "6"])
        #expect(
            csvColumn("reset_mode", in: "\(serial)/sweep.csv")?.first
                == "recoverUnsyncedChanges")
        #expect(runs[3].contains(#"""resetMode"":""discardUnsyncedChanges"""#))
        // sweep.csv: a row per variant and metric; sweep_paired.csv: the second variant only.
        let metrics = try rows("\(serial)/sweep.csv").count - 1
        #expect(metrics % 2 == 0 && metrics > 40)
        #expect(try rows("\(serial)/sweep_paired.csv").count - 1 == metrics / 2)
        let passed = try rows("\(serial)/sweep.csv").filter { $0.contains(",passed,") }
        #expect(passed.map { $0.components(separatedBy: ",")[5] } == ["1.000000", "1.000000"])
    }

    /// Each run of a sweep is the run `syncsim run` makes with the variant's overrides: its
    /// reproduction line replays it bit for bit.
    @Test func everyRunIsTheRunItsReproductionLineMakes() throws {
        let sweep = try directories.make()
        let arguments = [
            "sweep", "--seeds", "2", "--backup-intervals", "0,45m", "--clients", "8",
            "--duration", "2h", "--jobs", "2", "--out", sweep, "--quiet",
            "--vary", "workload.listPercent=0,25", "--set", "network.lossPerMillion=2000",
        ]
        #expect(syncsimStatus(arguments) == 0)
        let digests = try #require(csvColumn("trace_digest", in: "\(sweep)/runs.csv"))
        #expect(digests.count == 8)
        #expect(Set(digests).count == 8)
        #expect(
            try rows("\(sweep)/sweep.csv")[0].hasPrefix(
                "variant,reset_mode,backup_interval_seconds,workload.listPercent,metric,"))

        let command = try #require(try SyncSimCommand.parseAsRoot(arguments) as? SweepCommand)
        let plan = try SweepPlan.make(
            path: nil, settings: [try #require(ScenarioSetting("network.lossPerMillion=2000"))],
            size: try SizeOverrides.parse(["--clients", "8", "--duration", "2h"]),
            seeds: [1, 2], resetModes: [nil], backupIntervals: ["0", "45m"],
            varies: [try #require(SweepPlan.parseVary("workload.listPercent=0,25"))])
        for (index, job) in plan.jobs.enumerated() {
            let line = command.reproduceLine(job, plan.variants[job.variant])
            let single = try directories.make()
            var replay = Array(line.split(separator: " ").map(String.init).dropFirst())
            replay += ["--out", single, "--quiet"]
            #expect(syncsimStatus(replay) == 0, "\(line)")
            let digest = csvColumn("trace_digest", in: "\(single)/runs.csv")
            #expect(digest == [digests[index]], "\(line) does not replay run \(index) of the sweep")
        }
        #expect(
            command.reproduceLine(plan.jobs[7], plan.variants[3])
                == "syncsim run --seed 2 --clients 8 --duration 2h --backup-interval 45m --set network.lossPerMillion=2000 --set workload.listPercent=25"
        )
    }

    /// `--vary PATH=[V1,V2]` takes whole JSON values, arrays included: here no fault against a
    /// restore from backup, seed for seed.
    @Test func aVariedArrayGivesOneVariantPerItem() throws {
        let sweep = try directories.make()
        let restore = #"[{"kind":"restoreFromBackup","atSeconds":5400}]"#
        let arguments = [
            "sweep", "--seeds", "1", "--clients", "10", "--duration", "2h",
            "--backup-intervals", "30m", "--out", sweep, "--quiet",
            "--vary", "faults=[[], \(restore)]",
        ]
        #expect(syncsimStatus(arguments) == 0)
        let summary = "\(sweep)/sweep.csv"
        let labels = try #require(csvColumn("faults", in: summary))
        let metrics = try #require(csvColumn("metric", in: summary))
        let means = try #require(csvColumn("mean", in: summary))
        let lost = metrics.indices.filter { metrics[$0] == "writes_lost_to_restore" }
        #expect(lost.map { labels[$0] } == ["[]", restore])
        #expect(lost.map { means[$0] == "0.000000" } == [true, false])

        let command = try #require(try SyncSimCommand.parseAsRoot(arguments) as? SweepCommand)
        let plan = try SweepPlan.make(
            path: nil, settings: [],
            size: try SizeOverrides.parse(["--clients", "10", "--duration", "2h"]),
            seeds: [1], resetModes: [nil], backupIntervals: ["30m"],
            varies: [try #require(SweepPlan.parseVary("faults=[[], \(restore)]"))])
        #expect(
            command.reproduceLine(plan.jobs[1], plan.variants[1])
                == "syncsim run --seed 1 --clients 10 --duration 2h --backup-interval 30m --set 'faults=\(restore)'"
        )
        let single = try directories.make()
        let replay = [
            "run", "--seed", "1", "--clients", "10", "--duration", "2h", "--backup-interval", "30m",
            "--set", "faults=\(restore)", "--out", single, "--quiet",
        ]
        #expect(syncsimStatus(replay) == 0)
        #expect(
            csvColumn("trace_digest", in: "\(single)/runs.csv")
                == csvColumn("trace_digest", in: "\(sweep)/runs.csv")?.suffix(1).map { $0 })
    }

    /// Healing may last 1 s but reconnecting takes 30 s: those runs fail. The sweep still
    /// writes every run, exits 1, and leaves a capsule per failed run that replays it.
    @Test func failedRunsExit1WithCapsulesAfterEverythingIsWritten() throws {
        let directory = try directories.make()
        let scenario = directory + "/failing.json"
        let json = """
            { "name": "failing", "clientsCount": 20, "partitionsCount": 2, "durationSeconds": 3600,
              "network": { "lossPerMillion": 200000, "reconnectSecondsMin": 30, "reconnectSecondsMax": 60 } }
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: scenario))
        let arguments = [
            "sweep", scenario, "--seeds", "3-4", "--vary", "healing.secondsMax=1,7200", "--out",
            directory, "--quiet",
        ]
        #expect(syncsimStatus(arguments) == 1)
        #expect(csvColumn("passed", in: "\(directory)/runs.csv") == ["0", "0", "1", "1"])
        let passed = try rows("\(directory)/sweep.csv").filter { $0.contains(",passed,") }
        // variant, reset_mode, backup_interval_seconds, healing.secondsMax, metric, runs, mean
        #expect(passed.map { $0.components(separatedBy: ",")[6] } == ["0.000000", "1.000000"])
        for seed in [3, 4] {
            let capsule = try #require(
                fileBytes("\(directory)/capsule-variant-0-seed-\(seed).json"))
            let decoded = try JSONDecoder().decode(FailureCapsule.self, from: capsule)
            #expect(decoded.settings == ["healing.secondsMax=1"])
            #expect(decoded.failure.contains("not quiescent"))
            #expect(
                decoded.reproduce
                    == "syncsim run \(scenario) --seed \(seed) --set healing.secondsMax=1")
            let replay = try directories.make()
            #expect(
                syncsimStatus([
                    "run", scenario, "--seed", "\(seed)", "--set", "healing.secondsMax=1", "--out",
                    replay, "--quiet",
                ]) == 1)
            let digest = try #require(decoded.digest)
            #expect(csvColumn("trace_digest", in: "\(replay)/runs.csv") == [digest])
        }
        #expect(
            !FileManager.default.fileExists(atPath: "\(directory)/capsule-variant-1-seed-3.json"))
    }

    /// The sweep is recorded in the database: `export` makes its files again byte for byte,
    /// and a second sweep into the same directory is kept apart from the first.
    @Test func exportMakesASweepsFilesAgainFromTheDatabase() throws {
        let directory = try directories.make()
        let database = "\(directory)/results.sqlite"
        #expect(syncsimStatus(["sweep", "--jobs", "2", "--out", directory] + Self.small) == 0)
        let first = try Self.files.suffix(2).map { try #require(fileBytes("\(directory)/\($0)")) }
        let second = [
            "sweep", "--out", directory, "--seeds", "9", "--backup-intervals", "0,1h",
            "--clients", "10", "--duration", "1h", "--quiet",
        ]
        #expect(syncsimStatus(second) == 0)
        let latest = try Self.files.suffix(2).map { try #require(fileBytes("\(directory)/\($0)")) }
        #expect(latest != first)

        func export(_ arguments: [String]) -> (status: Int32, bytes: Data?) {
            let output = "\(directory)/export.csv"
            try? FileManager.default.removeItem(atPath: output)
            let status = syncsimStatus(
                ["export", "--database", database, "--output", output] + arguments)
            return (status, fileBytes(output))
        }
        #expect(export(["--table", "sweep", "--sweep", "1"]).bytes == first[0])
        #expect(export(["--table", "sweep_paired", "--sweep", "1"]).bytes == first[1])
        #expect(export(["--table", "sweep"]).bytes == latest[0])
        #expect(export(["--table", "sweep_paired", "--sweep", "2"]).bytes == latest[1])
        #expect(export(["--table", "sweeps"]).status == 0)
        let list = "\(directory)/export.csv"
        #expect(csvColumn("sweep_id", in: list) == ["1", "2"])
        #expect(csvColumn("runs", in: list) == ["4", "18"])
        #expect(csvColumn("first_run_id", in: list) == ["1", "5"])
        #expect(csvColumn("last_seed", in: list) == ["6", "9"])
        #expect(csvColumn("options_json", in: list)?.last
            == #"{"backupIntervals":"0,1h","clients":10,"duration":"1h","seeds":"1-9"}"#)

        // A sweep that is not there: 65, no file. --sweep with a run table: 64.
        #expect(export(["--table", "sweep", "--sweep", "3"]) == (65, nil))
        #expect(export(["--table", "runs", "--sweep", "1"]) == (64, nil))
    }

    @Test func badInputExits64AndWritesNothing() throws {
        let directory = try directories.make()
        let out = directory + "/out"
        for arguments in [
            ["--seeds", "0"], ["--seeds", "7-3"], ["--seeds", "x"], ["--seeds", "1-20000"],
            ["--reset-modes", "recover"],
            ["--reset-modes", "manual,manual"], ["--backup-intervals", "1h,3600"],
            ["--backup-intervals", "1h,"], ["--jobs", "0"], ["--clients", "0"],
            ["--duration", "2 days"], ["--set", "seed"], ["--vary", "seed"],
            ["--vary", "workload.listPercent=1,1"], ["--vary", "workload.listPercent=1,"],
            ["--vary", "seed=1,2", "--vary", "seed=3"],
            ["--vary", "clientReset.mode=manual,discardUnsyncedChanges", "--reset-modes", "all"],
            ["--vary", "server.backupIntervalSeconds=60,120", "--backup-intervals", "1h,2h"],
            // 4 modes × 30 values × 100 seeds = 12,000 runs, more than 10,000.
            [
                "--seeds", "100", "--reset-modes", "all", "--vary",
                "seed=" + (1...30).map(String.init).joined(separator: ","),
            ],
        ] {
            #expect(syncsimStatus(["sweep", "--out", out] + arguments) == 64, "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func aMalformedScenarioExits2AndAFileAsOutputExits3() throws {
        let directory = try directories.make()
        let scenario = directory + "/bad.json"
        try Data("{ \"durationSeconds\": \"long\" }".utf8).write(to: URL(fileURLWithPath: scenario))
        #expect(syncsimStatus(["sweep", scenario, "--out", directory + "/out"]) == 2)
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
        let file = directory + "/not-a-directory"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: file))
        #expect(syncsimStatus(["sweep", "--out", file] + Self.small) == 3)
        #expect(fileBytes(file) == Data("keep me".utf8))
    }

    @Test func listsParse() {
        #expect(SweepPlan.parseSeeds("3", first: 10) == [10, 11, 12])
        #expect(SweepPlan.parseSeeds("4-6", first: 10) == [4, 5, 6])
        #expect(SweepPlan.parseSeeds("6-6", first: 10) == [6])
        #expect(SweepPlan.parseSeeds("2", first: UInt64(Int64.max)) == nil)
        #expect(SweepPlan.parseSeeds("-3", first: 1) == nil)
        #expect(SweepPlan.parseSeeds("1-2-3", first: 1) == nil)
        #expect(SweepPlan.parseResetModes("all")?.count == 4)
        #expect(
            SweepPlan.parseResetModes("manual,recoverUnsyncedChanges") == [
                .manual, .recoverUnsyncedChanges,
            ])
        #expect(SweepPlan.parseResetModes("") == nil)
        #expect(SweepPlan.parseBackupIntervals("0,1h,1d") == ["0", "1h", "1d"])
        #expect(SweepPlan.parseBackupIntervals("60,1m") == nil)
        #expect(
            SweepPlan.parseVary("a.b=1,x,\"y\"")?.map(\.text) == ["a.b=1", "a.b=x", "a.b=\"y\""])
        #expect(SweepPlan.parseVary("a.b=") == nil)
        // One JSON array: its items, each as typed, may be arrays, objects or hold commas.
        #expect(
            SweepPlan.parseVary(#"faults=[[], [{"kind":"restoreFromBackup","atSeconds":1800}]]"#)?
                .map(\.text)
                == ["faults=[]", #"faults=[{"kind":"restoreFromBackup","atSeconds":1800}]"#])
        #expect(
            SweepPlan.parseVary(#"a=[1, "x,y]", {"k":[1,2]}, "q\"]"]"#)?.map(\.text)
                == ["a=1", #"a="x,y]""#, #"a={"k":[1,2]}"#, #"a="q\"]""#])
        for malformed in ["a=[]", "a=[1,1]", "a=[1,", "a=[1]]", #"a=["x"#] {
            #expect(SweepPlan.parseVary(malformed) == nil, "\(malformed)")
        }
        #expect(SweepPlan.shortDuration(21_600) == "6h")
        #expect(SweepPlan.shortDuration(90) == "90s")
    }
}
