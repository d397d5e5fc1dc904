import ArgumentParser
import Foundation
import Testing

@testable import SyncSimCLI

/// `syncsim bench run`: the simulator's speed, each run a fresh process, through stand-in
/// executables (the real build's end to end is in `scripts/check-debug-release.sh`, which runs
/// the release build in turns with the debug build). Tests never judge a timing: the stand-ins
/// report made-up ones.
@Suite("bench run")
struct BenchRunTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("syncsim-bench-run-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\r\n").dropLast()
    }

    /// A stand-in for `syncsim`: answers `run … --out DIR --quiet` with a `timings.csv` whose
    /// wall time is `seconds` and a `digest=` line, records its arguments in `NAME.args`, or
    /// fails with `status`. With `alternate`, every other run gives another digest.
    func standIn(
        in directory: URL, name: String, seconds: String, digest: String, status: Int = 0,
        alternate: String? = nil
    ) throws -> String {
        let log = directory.appendingPathComponent("\(name).args").path
        let counter = directory.appendingPathComponent("\(name).count").path
        let script = """
            #!/bin/sh
            echo "$@" >> '\(log)'
            if [ \(status) -ne 0 ]; then echo "run failed: stand-in" >&2; exit \(status); fi
            out=""
            while [ $# -gt 0 ]; do
              if [ "$1" = --out ]; then out="$2"; fi
              shift
            done
            mkdir -p "$out"
            printf 'run_id,seed,wall_seconds,events_per_second,speed_up,peak_resident_bytes,peak_resident_bytes_per_client\\r\\n1,1,\(seconds),1000.0,86400.0,1048576,1048.576\\r\\n' > "$out/timings.csv"
            count=$(cat '\(counter)' 2>/dev/null || echo 0)
            echo $((count + 1)) > '\(counter)'
            digest=\(digest)
            if [ -n "\(alternate ?? "")" ] && [ $((count % 2)) -eq 1 ]; then digest=\(alternate ?? ""); fi
            echo "seed=1 scenario=stand-in"
            echo "digest=$digest"
            """
        let path = directory.appendingPathComponent(name).path
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    @Test("in turns with a baseline: every run's figures, medians per build, ratios round by round")
    func inTurns() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fast = try standIn(in: directory, name: "fast", seconds: "2.0", digest: "aa")
        let slow = try standIn(in: directory, name: "slow", seconds: "4.0", digest: "aa")
        let out = directory.appendingPathComponent("out")
        try BenchRunCommand.parse([
            "--rounds", "3", "--candidate", fast, "--baseline", slow, "--quiet", "--out",
            out.path, "--", "--clients", "7", "--set", "seed=5",
        ]).run()
        // Each run got the run's arguments, then its own results directory and --quiet.
        let arguments = try String(
            contentsOf: directory.appendingPathComponent("fast.args"), encoding: .utf8
        ).split(separator: "\n")
        #expect(arguments.count == 3)
        #expect(arguments.allSatisfy { $0.hasPrefix("run --clients 7 --set seed=5 --out ") })
        #expect(arguments.allSatisfy { $0.hasSuffix("/out --quiet") })

        let runs = try lines(out.appendingPathComponent("bench_run_runs.csv"))
        #expect(runs[0] == SimulatorBenchReport.runsColumns.joined(separator: ","))
        #expect(runs.count == 1 + 6)
        // The first of each pair alternates: baseline in odd rounds, candidate in even ones.
        #expect(runs[1].hasPrefix("1,baseline,true,4.000000,"))
        #expect(runs[2].hasPrefix("1,candidate,false,2.000000,"))
        #expect(runs[3].hasPrefix("2,candidate,true,2.000000,"))
        #expect(runs[4].hasPrefix("2,baseline,false,4.000000,"))
        #expect(runs[1].hasSuffix(",1000.000000,86400.000000,1048576,aa"))

        let summary = try lines(out.appendingPathComponent("bench_run.csv"))
        #expect(summary[0] == SimulatorBenchReport.summaryColumns.joined(separator: ","))
        #expect(summary.count == 3)
        #expect(summary[1].hasPrefix("candidate,3,2.000000,2.000000,2.000000,"))
        #expect(summary[1].hasSuffix(",1048576,aa,true"))
        #expect(summary[2].hasPrefix("baseline,3,4.000000,4.000000,4.000000,"))

        let compare = try lines(out.appendingPathComponent("bench_run_compare.csv"))
        #expect(compare[0] == SimulatorBenchReport.compareColumns.joined(separator: ","))
        #expect(compare.count == 2)
        // Every round 0.5: the geometric mean's interval is 0.5 too, wholly below 1.
        #expect(
            compare[1].hasPrefix(
                "3,0.500000,0.500000,0.500000,0.500000,0.500000,0.500000,3,faster,"))
        #expect(compare[1].hasSuffix(",1.000000,true"))
    }

    @Test("digests that differ between builds, or between rounds of one build, fail the run")
    func differingDigests() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let candidate = try standIn(in: directory, name: "a", seconds: "1.0", digest: "aa")
        let other = try standIn(in: directory, name: "b", seconds: "1.0", digest: "bb")
        let unsteady = try standIn(
            in: directory, name: "c", seconds: "1.0", digest: "aa", alternate: "cc")
        let out = directory.appendingPathComponent("out")
        let base = ["--rounds", "2", "--quiet", "--out", out.path, "--candidate", candidate]
        // Another build's digest: the files are written, the exit status is 1.
        #expect(throws: ExitCode.failure) {
            try BenchRunCommand.parse(base + ["--baseline", other]).run()
        }
        let compare = try lines(out.appendingPathComponent("bench_run_compare.csv"))
        #expect(compare[1].hasSuffix(",false"))
        // One build whose two runs differ: not reproducible.
        #expect(throws: ExitCode.failure) {
            try BenchRunCommand.parse(
                ["--rounds", "2", "--quiet", "--out", out.path, "--candidate", unsteady]
            ).run()
        }
        let summary = try lines(out.appendingPathComponent("bench_run.csv"))
        #expect(summary.count == 2)
        #expect(summary[1].hasSuffix(",,false"))
        let report = SimulatorBenchReport(runs: [
            SimulatorRun(round: 1, build: .candidate, first: true, sample: sample("aa")),
            SimulatorRun(round: 2, build: .candidate, first: true, sample: sample("cc")),
        ])
        #expect(report.digestProblems().count == 1)
        #expect(report.digestProblems()[0].contains("(aa, cc)"))
    }

    func sample(_ digest: String, wall: Double = 1) -> SimulatorSample {
        SimulatorSample(
            wallSeconds: wall, eventsPerSecond: 1, speedUp: 1, peakResidentBytes: 1,
            cpuSeconds: 1, digest: digest)
    }

    /// Rounds whose candidate / baseline wall ratios are `ratios`.
    func report(_ ratios: [Double]) -> SimulatorBenchReport {
        SimulatorBenchReport(
            runs: ratios.enumerated().flatMap { round, ratio in
                [
                    SimulatorRun(
                        round: round + 1, build: .baseline, first: true,
                        sample: sample("aa", wall: 10)),
                    SimulatorRun(
                        round: round + 1, build: .candidate, first: false,
                        sample: sample("aa", wall: 10 * ratio)),
                ]
            })
    }

    @Test("the wall ratio's geometric mean and its interval decide faster, slower or not resolved")
    func ratioEstimate() {
        // Ratios on both sides of 1: the interval holds 1.
        let mixed = report([0.9, 1.1, 1.0]).wallEstimate()
        #expect(abs(mixed.geometricMean - exp((log(0.9) + log(1.1)) / 3)) < 1e-12)
        #expect(mixed.interval.map { $0.contains(1) } == true)
        #expect(mixed.fasterRounds == 1)
        #expect(mixed.verdict == "not resolved")
        // Steady ratios: t(0.975, 3) · sd / √4 on the logarithms, wholly above 1.
        let slower = report([1.10, 1.12, 1.11, 1.13]).wallEstimate()
        let logs = [1.10, 1.12, 1.11, 1.13].map { log($0) }
        let mean = logs.reduce(0, +) / 4
        let sd = (logs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 3).squareRoot()
        let half = 3.182_446_305_284_263 * sd / 2
        #expect(abs(slower.interval!.lowerBound - exp(mean - half)) < 1e-9)
        #expect(abs(slower.interval!.upperBound - exp(mean + half)) < 1e-9)
        #expect(slower.verdict == "slower" && slower.fasterRounds == 0)
        // One round: no interval, nothing resolved.
        let single = report([0.5]).wallEstimate()
        #expect(single.interval == nil && single.verdict == "not resolved")
        #expect(report([0.5]).compareText().contains(",0.500000,,,1,not resolved,"))
    }

    @Test("a failing run stops with status 1; bad options, arguments and scenarios run nothing")
    func failures() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let failing = try standIn(
            in: directory, name: "failing", seconds: "1.0", digest: "aa", status: 3)
        let good = try standIn(in: directory, name: "good", seconds: "1.0", digest: "aa")
        let out = directory.appendingPathComponent("out")
        #expect(throws: ExitCode.failure) {
            try BenchRunCommand.parse(["--candidate", failing, "--quiet", "--out", out.path])
                .run()
        }
        #expect(!FileManager.default.fileExists(atPath: out.path))
        // Usage errors, found before anything runs.
        for arguments in [
            ["--rounds", "0"],
            ["--rounds", "100"],
            ["--baseline", directory.appendingPathComponent("none").path],
            ["--", "--out", "x"],
            ["--", "--quiet"],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") {
                try BenchRunCommand.parse(arguments)
            }
        }
        // The run's own options are checked as `run` checks them (64), its scenario read (2).
        let scenario = directory.appendingPathComponent("bad.json")
        try Data(#"{"name": "bad", "clientsCount": "many"}"#.utf8).write(to: scenario)
        for (arguments, status) in [
            (["--", "--clients", "0"], Int32(64)),
            (["--", "--no-such-option"], 64),
            (["--", scenario.path], 2),
            (["--", "--set", "workload.listPercent=900"], 2),
        ] {
            #expect(throws: ExitCode(status), "\(arguments)") {
                try BenchRunCommand.parse(
                    ["--candidate", good, "--quiet", "--out", out.path] + arguments
                ).run()
            }
        }
        #expect(!FileManager.default.fileExists(atPath: out.path))
        #expect(
            !FileManager.default.fileExists(
                atPath: directory.appendingPathComponent("good.args").path))
    }

    @Test("a run's figures are read from its timings.csv and its digest line")
    func parsing() {
        let timings =
            "run_id,seed,wall_seconds,events_per_second,speed_up,peak_resident_bytes,peak_resident_bytes_per_client\r\n1,1,10.5,366000.0,7910.0,522000000,522000.0\r\n"
        let sample = SimulatorSample.parse(
            timings: timings, output: "seed=1 scenario=default\ndigest=8763bf8edd8dee93\n",
            cpuSeconds: 11.25)
        #expect(
            sample
                == SimulatorSample(
                    wallSeconds: 10.5, eventsPerSecond: 366_000, speedUp: 7_910,
                    peakResidentBytes: 522_000_000, cpuSeconds: 11.25,
                    digest: "8763bf8edd8dee93"))
        #expect(SimulatorSample.parse(timings: timings, output: "no digest", cpuSeconds: 1) == nil)
        #expect(
            SimulatorSample.parse(
                timings: "wall_seconds\r\n1.0\r\n", output: "digest=aa", cpuSeconds: 1)
                == nil)
    }
}
