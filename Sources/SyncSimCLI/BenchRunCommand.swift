import ArgumentParser
import Foundation
import Measurement
import Simulation

/// `syncsim bench run`: how fast the simulator runs a scenario, measured as the README's
/// "Performance" figures are: each run a fresh `syncsim run` process, in rounds, and with a
/// baseline build in turns with the candidate, so that the machine's drift from hour to hour
/// falls on both alike. Every run must give the same digest.
public struct BenchRunCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract:
            "Measure the simulator: a scenario's run in fresh processes, in rounds, in turns with a baseline build.",
        discussion: """
            Each round runs `syncsim run` once with the arguments after --, in a fresh process \
            with its own results directory (removed after): the candidate (default: this \
            executable) and, with --baseline, the baseline build too, the first of the pair \
            alternating by round. From each run it reads the simulation's wall time, events \
            per second, speed-up and peak memory (its timings.csv), the whole process's CPU \
            time, and the digest. Writes DIR/bench_run_runs.csv (every run), \
            DIR/bench_run.csv (per build: medians and ranges over the rounds) and, with \
            --baseline, DIR/bench_run_compare.csv (candidate over baseline, round by round: \
            the median ratio and its range, the geometric mean with its 95 % interval, and \
            whether that says faster, slower or not resolved). Every run must give the same \
            digest (timings never decide the exit status): exits 1 \
            when they differ (the files are written first) or when a run fails.
            """
    )

    @Option(help: "Rounds (1 ... 99): each build runs once per round; its figures are medians.")
    public var rounds: Int = 5

    @Option(
        help: ArgumentHelp(
            "The syncsim executable measured (default: this one).", valueName: "path"))
    public var candidate: String?

    @Option(
        help: ArgumentHelp(
            "A syncsim executable to run in turns with the candidate (the build before a change).",
            valueName: "path"))
    public var baseline: String?

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "No progress lines: the table and the summary line.")
    public var quiet: Bool = false

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp(
            """
            After --, the arguments of `syncsim run`: a scenario (default: the embedded \
            default), --seed, --clients, --duration, --reset-mode, --set … (not --out or \
            --quiet, which bench run gives each run).
            """, valueName: "run-arguments"))
    public var runArguments: [String] = []

    public init() {}

    public func validate() throws {
        guard (1...99).contains(rounds) else {
            throw ValidationError("--rounds must be between 1 and 99.")
        }
        for (name, path) in [("--candidate", candidate), ("--baseline", baseline)] {
            if let path, !FileManager.default.isExecutableFile(atPath: path) {
                throw ValidationError(
                    "\(name) '\(path)' is not an executable file; build one with "
                        + "'swift build -c release --product syncsim'.")
            }
        }
        for argument in runArguments {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init)
            if let name, ["--out", "--quiet", "--help", "-h"].contains(name) {
                throw ValidationError(
                    "'\(argument)' after --: bench run gives each run its own --out and --quiet; leave it out."
                )
            }
        }
    }

    public func run() throws {
        // The run's arguments are checked as `run` checks them, and its scenario read, before
        // anything runs: a bad option is a usage error, a bad file exits 2 naming the field.
        let parsed: RunCommand
        do {
            parsed = try RunCommand.parse(runArguments)
        } catch {
            FileHandle.standardError.write(
                Data("error: after --: \(RunCommand.message(for: error))\n".utf8))
            throw ExitCode(64)
        }
        let (scenario, _) = try CommandSupport.loadScenario(
            parsed.scenario, settings: parsed.settings.compactMap(ScenarioSetting.init))
        let candidateRunner = SimulatorRunner(
            executable: candidate ?? BenchTargetsCommand.ownExecutable, arguments: runArguments)
        let baselineRunner = baseline.map {
            SimulatorRunner(executable: $0, arguments: runArguments)
        }
        let described = (["run"] + runArguments).map(CommandSupport.shellWord).joined(
            separator: " ")
        print(
            "bench run: scenario=\(scenario.name) rounds=\(rounds) baseline=\(baseline == nil ? "none" : "yes") commit=\(BuildInfo.gitCommit) build=\(BuildInfo.configuration)"
        )
        if !quiet { print("each run: syncsim \(described)") }
        var runs: [SimulatorRun] = []
        do {
            for round in 1...rounds {
                var builds: [(SimulatorRun.Build, SimulatorRunner)] = [
                    (.candidate, candidateRunner)
                ]
                if let baselineRunner {
                    // The first of the pair alternates by round.
                    builds.insert((.baseline, baselineRunner), at: round % 2 == 1 ? 0 : 1)
                }
                for (order, (build, runner)) in builds.enumerated() {
                    let sample = try runner.run()
                    runs.append(
                        SimulatorRun(round: round, build: build, first: order == 0, sample: sample))
                    if !quiet {
                        print("round \(round)/\(rounds) \(build.rawValue): \(sample.text)")
                    }
                }
            }
        } catch let failure as TargetRunFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            throw ExitCode.failure
        }
        let report = SimulatorBenchReport(runs: runs)
        do {
            try OutputDirectory.prepare(outputDirectory)
            var files = [
                (report.runsText(), "\(outputDirectory)/bench_run_runs.csv"),
                (report.summaryText(), "\(outputDirectory)/bench_run.csv"),
            ]
            if baseline != nil {
                files.append((report.compareText(), "\(outputDirectory)/bench_run_compare.csv"))
            }
            try AtomicFile.write(all: files)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
        print(report.tableText())
        print(report.summaryLine())
        let problems = report.digestProblems()
        for problem in problems {
            FileHandle.standardError.write(Data("error: \(problem)\n".utf8))
        }
        if !problems.isEmpty { throw ExitCode.failure }
    }
}

/// What one run of the simulator measured.
struct SimulatorSample: Sendable, Equatable {
    /// The simulation's wall time, events per second, speed-up over real time and peak
    /// resident memory, as the run's `timings.csv` gives them.
    var wallSeconds: Double
    var eventsPerSecond: Double
    var speedUp: Double
    var peakResidentBytes: Double
    /// User and system CPU time of the whole process (start-up and writing the results too).
    var cpuSeconds: Double
    /// The run's trace digest (16 hex digits).
    var digest: String

    var text: String {
        String(
            format: "%.2f s wall, %.2f s CPU, %.0f events/s, %.0f MiB, digest=%@",
            wallSeconds, cpuSeconds, eventsPerSecond, peakResidentBytes / 1_048_576,
            digest)
    }

    /// The sample of a run from its `timings.csv` (header and one row) and its standard
    /// output (the `digest=` line); nil when either lacks what is read.
    static func parse(timings: String, output: String, cpuSeconds: Double) -> SimulatorSample? {
        guard let records = CSV.records(timings), records.count >= 2 else { return nil }
        let (header, row) = (records[0], records[records.count - 1])
        func value(_ column: String) -> Double? {
            guard let index = header.firstIndex(of: column), index < row.count else { return nil }
            return Double(row[index])
        }
        let digestLine = output.split(whereSeparator: \.isNewline).last {
            $0.hasPrefix("digest=")
        }
        guard let wall = value("wall_seconds"), let events = value("events_per_second"),
            let speedUp = value("speed_up"), let peak = value("peak_resident_bytes"),
            let digestLine
        else { return nil }
        return SimulatorSample(
            wallSeconds: wall, eventsPerSecond: events, speedUp: speedUp,
            peakResidentBytes: peak, cpuSeconds: cpuSeconds,
            digest: String(digestLine.dropFirst("digest=".count)))
    }
}

/// Runs `executable run ARGUMENTS --out TMP --quiet` in a fresh process and reads what it
/// measured.
struct SimulatorRunner {
    var executable: String
    var arguments: [String]

    func run() throws -> SimulatorSample {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("syncsim-bench-run-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try ChildProcess.run(
            executable, ["run"] + arguments + ["--out", "\(directory)/out", "--quiet"])
        if let failure = child.failure(showing: child.errors + child.output) { throw failure }
        guard
            let timings = try? String(
                contentsOfFile: "\(directory)/out/timings.csv", encoding: .utf8),
            let sample = SimulatorSample.parse(
                timings: timings, output: child.output, cpuSeconds: child.cpuSeconds)
        else {
            throw TargetRunFailure(
                message:
                    "\(child.command) wrote no timings.csv row with wall_seconds, events_per_second, speed_up and peak_resident_bytes, or no digest= line"
            )
        }
        return sample
    }
}

/// One run of `bench run`.
struct SimulatorRun: Sendable {
    /// Candidate or baseline, as `bench targets` names its builds.
    typealias Build = TargetRun.Build

    var round: Int
    var build: Build
    /// Whether it ran first in its round.
    var first: Bool
    var sample: SimulatorSample
}

/// The runs of `bench run`, summarised per build and compared round by round.
struct SimulatorBenchReport {
    let runs: [SimulatorRun]

    static let runsColumns = [
        "round", "build", "first", "wall_seconds", "cpu_seconds", "events_per_second",
        "speed_up", "peak_resident_bytes", "digest",
    ]
    static let summaryColumns = [
        "build", "runs", "wall_seconds_median", "wall_seconds_min", "wall_seconds_max",
        "cpu_seconds_median", "cpu_seconds_min", "cpu_seconds_max", "events_per_second_median",
        "speed_up_median", "peak_resident_bytes_median", "peak_resident_bytes_max", "digest",
        "digests_agree",
    ]
    static let compareColumns = [
        "rounds", "wall_ratio_median", "wall_ratio_min", "wall_ratio_max", "wall_ratio_geomean",
        "wall_ratio_low95", "wall_ratio_high95", "candidate_faster_rounds", "wall_verdict",
        "cpu_ratio_median", "cpu_ratio_min", "cpu_ratio_max", "peak_ratio_median", "same_digest",
    ]

    /// The wall-time ratios' geometric mean with its 95 % confidence interval (Student's t on
    /// the logarithms of the per-round ratios; nil with fewer than two rounds), the rounds the
    /// candidate was faster in, and what they say: `faster` or `slower` when the interval
    /// lies wholly below or above 1, else `not resolved`.
    struct RatioEstimate: Equatable {
        var geometricMean: Double
        var interval: ClosedRange<Double>?
        var fasterRounds: Int
        var verdict: String
    }

    func wallEstimate() -> RatioEstimate {
        let ratios = ratios(\.wallSeconds)
        let logs = Summary.of(ratios.map { Foundation.log($0) })
        var interval: ClosedRange<Double>?
        var verdict = "not resolved"
        if ratios.count >= 2 {
            let (low, high) = (
                exp(logs.mean - logs.confidenceHalfWidth95),
                exp(logs.mean + logs.confidenceHalfWidth95)
            )
            interval = low...high
            if high < 1 { verdict = "faster" } else if low > 1 { verdict = "slower" }
        }
        return RatioEstimate(
            geometricMean: exp(logs.mean), interval: interval,
            fasterRounds: ratios.filter { $0 < 1 }.count, verdict: verdict)
    }

    /// The builds that ran, candidate first.
    var builds: [SimulatorRun.Build] {
        [.candidate, .baseline].filter { build in runs.contains { $0.build == build } }
    }

    func samples(_ build: SimulatorRun.Build) -> [SimulatorSample] {
        runs.filter { $0.build == build }.map(\.sample)
    }

    /// The digest every run of `build` gave, or nil when they differ.
    func digest(_ build: SimulatorRun.Build) -> String? {
        let digests = samples(build).map(\.digest)
        guard let first = digests.first, digests.allSatisfy({ $0 == first }) else { return nil }
        return first
    }

    /// Per round, candidate over baseline, for `value`.
    func ratios(_ value: (SimulatorSample) -> Double) -> [Double] {
        let rounds = Set(runs.map(\.round)).sorted()
        return rounds.compactMap { round in
            let pair = runs.filter { $0.round == round }
            guard let candidate = pair.first(where: { $0.build == .candidate }),
                let baseline = pair.first(where: { $0.build == .baseline }),
                value(baseline.sample) > 0
            else { return nil }
            return value(candidate.sample) / value(baseline.sample)
        }
    }

    func runsText() -> String {
        var text = CSV.line(Self.runsColumns)
        for run in runs {
            let sample = run.sample
            text += CSV.line([
                String(run.round), run.build.rawValue, String(run.first),
                CSV.real(sample.wallSeconds), CSV.real(sample.cpuSeconds),
                CSV.real(sample.eventsPerSecond), CSV.real(sample.speedUp),
                String(UInt64(sample.peakResidentBytes)), sample.digest,
            ])
        }
        return text
    }

    func summaryText() -> String {
        var text = CSV.line(Self.summaryColumns)
        for build in builds {
            let samples = samples(build)
            let wall = Summary.of(samples.map(\.wallSeconds))
            let cpu = Summary.of(samples.map(\.cpuSeconds))
            let peak = Summary.of(samples.map(\.peakResidentBytes))
            let digest = digest(build)
            text += CSV.line([
                build.rawValue, String(samples.count), CSV.real(wall.p50), CSV.real(wall.min),
                CSV.real(wall.max), CSV.real(cpu.p50), CSV.real(cpu.min), CSV.real(cpu.max),
                CSV.real(Summary.of(samples.map(\.eventsPerSecond)).p50),
                CSV.real(Summary.of(samples.map(\.speedUp)).p50), CSV.real(peak.p50),
                String(UInt64(peak.max)), digest ?? "", String(digest != nil),
            ])
        }
        return text
    }

    func compareText() -> String {
        let wall = Summary.of(ratios(\.wallSeconds))
        let cpu = Summary.of(ratios(\.cpuSeconds))
        let peak = Summary.of(ratios(\.peakResidentBytes))
        let estimate = wallEstimate()
        return CSV.line(Self.compareColumns)
            + CSV.line([
                String(wall.count), CSV.real(wall.p50), CSV.real(wall.min), CSV.real(wall.max),
                CSV.real(estimate.geometricMean),
                estimate.interval.map { CSV.real($0.lowerBound) } ?? "",
                estimate.interval.map { CSV.real($0.upperBound) } ?? "",
                String(estimate.fasterRounds), estimate.verdict,
                CSV.real(cpu.p50), CSV.real(cpu.min), CSV.real(cpu.max), CSV.real(peak.p50),
                String(sameDigest),
            ])
    }

    /// Whether every run of every build gave one digest.
    var sameDigest: Bool {
        guard let first = runs.first?.sample.digest else { return true }
        return runs.allSatisfy { $0.sample.digest == first }
    }

    /// The per-build figures as a Markdown table.
    func tableText() -> String {
        var lines = [
            "| build | runs | wall s, median (range) | CPU s, median (range) | events/s | speed-up | peak MiB | digest |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for build in builds {
            let samples = samples(build)
            let wall = Summary.of(samples.map(\.wallSeconds))
            let cpu = Summary.of(samples.map(\.cpuSeconds))
            lines.append(
                String(
                    format:
                        "| %@ | %ld | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.0f | %.0f× | %.0f | %@ |",
                    build.rawValue, samples.count, wall.p50, wall.min, wall.max, cpu.p50,
                    cpu.min, cpu.max, Summary.of(samples.map(\.eventsPerSecond)).p50,
                    Summary.of(samples.map(\.speedUp)).p50,
                    Summary.of(samples.map(\.peakResidentBytes)).p50 / 1_048_576,
                    digest(build) ?? "differs"))
        }
        return lines.joined(separator: "\n")
    }

    /// One line: the candidate's median wall time, and with a baseline the ratios.
    func summaryLine() -> String {
        let candidate = Summary.of(samples(.candidate).map(\.wallSeconds))
        var line = String(
            format: "bench run: candidate wall=%.2f s (%.2f–%.2f)", candidate.p50, candidate.min,
            candidate.max)
        if builds.contains(.baseline) {
            let baseline = Summary.of(samples(.baseline).map(\.wallSeconds))
            let wall = Summary.of(ratios(\.wallSeconds))
            let cpu = Summary.of(ratios(\.cpuSeconds))
            line += String(
                format:
                    " baseline wall=%.2f s (%.2f–%.2f) wall ratio=%.3f (%.3f–%.3f) CPU ratio=%.3f (%.3f–%.3f)",
                baseline.p50, baseline.min, baseline.max, wall.p50, wall.min, wall.max, cpu.p50,
                cpu.min, cpu.max)
            let estimate = wallEstimate()
            if let interval = estimate.interval {
                line += String(
                    format: " geomean=%.3f (95%% CI %.3f–%.3f)", estimate.geometricMean,
                    interval.lowerBound, interval.upperBound)
            }
            line +=
                " faster in \(estimate.fasterRounds) of \(wall.count) rounds: \(estimate.verdict)"
        }
        line += " digest=" + (sameDigest ? (runs.first?.sample.digest ?? "") : "differs")
        return line
    }

    /// What the digests say is wrong: runs of one build that differ (the run is not
    /// reproducible), or builds that differ.
    func digestProblems() -> [String] {
        var problems: [String] = []
        for build in builds where digest(build) == nil {
            let digests = samples(build).map(\.digest).joined(separator: ", ")
            problems.append(
                "the \(build.rawValue)'s runs gave different digests (\(digests)): the same run twice must give the same digest; see README \"Reproducing a failing seed\""
            )
        }
        if problems.isEmpty, !sameDigest {
            problems.append(
                "the candidate's digest \(digest(.candidate) ?? "") differs from the baseline's \(digest(.baseline) ?? ""): the change alters the runs (see `syncsim run --checkpoints` to find where)"
            )
        }
        return problems
    }
}
