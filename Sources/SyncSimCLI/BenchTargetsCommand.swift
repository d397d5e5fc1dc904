import ArgumentParser
import Foundation
import Measurement
import MergeWorkloads
import Simulation

/// `syncsim bench targets`: every cell of the MergeCore issue's merge table, judged against
/// its targets, and optionally against a baseline build, run by run in turns.
public struct BenchTargetsCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "targets",
        abstract: "Run every cell of the merge targets and judge them.",
        discussion: """
            A round runs every cell once: per workload, the server role at K = 10 and \
            K = 100, the client role with L = D and with L = 10^4, and the smaller points of \
            the growth fits. Each run is a fresh `syncsim bench merge` process (as the \
            README's figures are measured), unless --in-process. A cell's figure is the median \
            over the rounds. Targets are judged only at the size they are set at \
            (--instructions 1000000 --objects 10000); tests never judge them. With \
            --baseline, the baseline build runs each cell too, in turns with this one (the \
            first of each pair alternates by round), and every pair must give the same \
            digests. Writes targets.csv, targets_runs.csv and, with --baseline, \
            targets_compare.csv.
            """
    )

    @Option(help: "Rounds: each cell runs once per round; its figure is the median.")
    public var rounds: Int = 3

    @Option(help: "Only this workload's cells (default: all).")
    public var workload: BenchMergeCommand.WorkloadChoice = .all

    @Option(help: "Instructions merged per full-size cell (the targets are set at 10^6).")
    public var instructions: Int = TargetSuite.targetInstructions

    @Option(help: "Objects N of the map and churn workloads (the targets are set at 10^4).")
    public var objects: Int = TargetSuite.targetObjects

    @Option(help: "The seed of every workload.")
    public var seed: UInt64 = 1

    @Option(
        help: ArgumentHelp(
            "The syncsim executable measured (default: this one).",
            valueName: "path"))
    public var candidate: String?

    @Option(
        help: ArgumentHelp(
            "A syncsim executable to run in turns with the candidate.",
            valueName: "path"))
    public var baseline: String?

    @Flag(help: "Measure in this process (one heap for all runs: peak memory reads lower).")
    public var inProcess: Bool = false

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "Print only the table, the verdicts and the summary line.")
    public var quiet: Bool = false

    public init() {}

    public func validate() throws {
        guard (1...99).contains(rounds) else {
            throw ValidationError("--rounds must be between 1 and 99.")
        }
        guard (100...WorkloadLimits.instructionsMax).contains(instructions) else {
            throw ValidationError(
                "--instructions must be between 100 and \(WorkloadLimits.instructionsMax).")
        }
        guard (1...WorkloadLimits.objectsMax).contains(objects) else {
            throw ValidationError("--objects must be between 1 and \(WorkloadLimits.objectsMax).")
        }
        if inProcess && (candidate != nil || baseline != nil) {
            throw ValidationError(
                "--in-process measures this build; it cannot run --candidate or --baseline.")
        }
        for (name, path) in [("--candidate", candidate), ("--baseline", baseline)] {
            if let path, !FileManager.default.isExecutableFile(atPath: path) {
                throw ValidationError(
                    "\(name) '\(path)' is not an executable file; build one with "
                        + "'swift build -c release --product syncsim'.")
            }
        }
    }

    public func run() throws {
        let cells = TargetSuite.cells(instructions: instructions, objects: objects, seed: seed)
            .filter { workload == .all || $0.kind.rawValue == workload.rawValue }
        let measured: any TargetRunner =
            inProcess
            ? InProcessTargetRunner()
            : ProcessTargetRunner(executable: candidate ?? Self.ownExecutable)
        let other: (any TargetRunner)? = baseline.map { ProcessTargetRunner(executable: $0) }
        var runs = [TargetRun]()
        do {
            for round in 1...rounds {
                for cell in cells {
                    // With a baseline, the first of the pair alternates by round.
                    var builds: [(TargetRun.Build, any TargetRunner)] = [(.candidate, measured)]
                    if let other {
                        let pair = (TargetRun.Build.baseline, other)
                        builds.insert(pair, at: round % 2 == 1 ? 0 : 1)
                    }
                    for (build, runner) in builds {
                        let sample = try runner.run(cell)
                        runs.append(
                            TargetRun(
                                round: round, build: build, cell: cell,
                                sample: sample))
                        if !quiet {
                            print(
                                "round \(round)/\(rounds) \(build.rawValue) \(cell.title): "
                                    + String(format: "%.2f M/s", sample.rate / 1e6))
                        }
                    }
                }
            }
        } catch let failure as TargetRunFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            throw ExitCode.failure
        }
        let report = TargetReport(
            runs: runs, instructions: instructions, objects: objects,
            seed: seed)
        do {
            try OutputDirectory.prepare(outputDirectory)
            var files = [
                (report.checksText(), "\(outputDirectory)/targets.csv"),
                (report.runsText(), "\(outputDirectory)/targets_runs.csv"),
            ]
            if baseline != nil {
                files.append((report.compareText(), "\(outputDirectory)/targets_compare.csv"))
            }
            try AtomicFile.write(all: files)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
        print(report.summaryText(withBaseline: baseline != nil))
        let problems = report.digestProblems()
        for problem in problems {
            FileHandle.standardError.write(Data("error: \(problem)\n".utf8))
        }
        if !problems.isEmpty { throw ExitCode.failure }
    }

    /// This process's executable (Linux: `/proc/self/exe`).
    static var ownExecutable: String {
        let link = "/proc/self/exe"
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link) {
            return target
        }
        return CommandLine.arguments[0]
    }
}

/// A cell run that failed: the message names the build and the command that reproduces it.
struct TargetRunFailure: Error {
    var message: String
}

/// A `syncsim` child process of `bench targets` or `bench run`, run to its end. Both streams
/// go to files (a pipe read only after the process ends could fill and stall it); the CPU time
/// is the child's user and system time (`getrusage(RUSAGE_CHILDREN)`).
struct ChildProcess {
    /// The command line, quoted for a shell (for messages).
    var command: String
    var status: Int32
    var output: String
    var errors: String
    var cpuSeconds: Double

    /// Runs `executable` with `arguments` and waits for it.
    /// - Throws: when it cannot be started, or its streams' files cannot be made.
    static func run(_ executable: String, _ arguments: [String]) throws(TargetRunFailure)
        -> ChildProcess
    {
        let command = ([executable] + arguments).map(CommandSupport.shellWord).joined(
            separator: " ")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("syncsim-child-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outputPath, errorPath) = ("\(directory)/stdout", "\(directory)/stderr")
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath),
            let errors = FileHandle(forWritingAtPath: errorPath)
        else {
            throw TargetRunFailure(message: "could not create files in \(directory)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        let cpuBefore = childrenCPUSeconds()
        do {
            try process.run()
        } catch {
            throw TargetRunFailure(message: "could not start \(executable): \(error)")
        }
        process.waitUntilExit()
        let cpuSeconds = childrenCPUSeconds() - cpuBefore
        try? output.close()
        try? errors.close()
        return ChildProcess(
            command: command, status: process.terminationStatus,
            output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "",
            cpuSeconds: cpuSeconds)
    }

    /// A failure naming the command, its status and `text` (what it printed), or nil when it
    /// exited with status 0.
    func failure(showing text: String) -> TargetRunFailure? {
        guard status != 0 else { return nil }
        return TargetRunFailure(
            message: "\(command) exited with status \(status): "
                + text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// User and system CPU seconds of the children this process has waited for.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_CHILDREN.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double {
            Double(time.tv_sec) + Double(time.tv_usec) / 1e6
        }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Runs one cell of the suite and returns what it measured.
protocol TargetRunner {
    func run(_ cell: TargetCell) throws -> TargetSample
}

/// Runs `executable bench merge … --csv FILE` in a fresh process and reads its row.
struct ProcessTargetRunner: TargetRunner {
    var executable: String

    func run(_ cell: TargetCell) throws -> TargetSample {
        let csv = FileManager.default.temporaryDirectory
            .appendingPathComponent("syncsim-targets-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: csv) }
        let child = try ChildProcess.run(
            executable, ["bench", "merge"] + cell.benchArguments + ["--csv", csv])
        if let failure = child.failure(showing: child.errors) { throw failure }
        guard let text = try? String(contentsOfFile: csv, encoding: .utf8),
            let sample = TargetSample.parse(csv: text)
        else {
            throw TargetRunFailure(
                message: "\(child.command) wrote no CSV row with the columns "
                    + TargetSample.columns.joined(separator: ", "))
        }
        return sample
    }
}

/// Runs a cell in this process (`MergeBenchmark.run`).
struct InProcessTargetRunner: TargetRunner {
    func run(_ cell: TargetCell) throws -> TargetSample {
        let inputs = MergeInputs.generate(cell.parameters, role: cell.role)
        let measurement: MergeMeasurement
        do {
            measurement = try MergeBenchmark.run(inputs)
        } catch {
            throw TargetRunFailure(
                message: "\(error); reproduce: syncsim bench merge "
                    + cell.benchArguments.joined(separator: " "))
        }
        return TargetSample(
            mergeCpuSeconds: Double(measurement.mergeCpuNs) / 1e9,
            instructionsMerged: measurement.instructionsMerged,
            encodedBytesPerInstruction: measurement.encodedBytesPerInstruction,
            peakMemoryBytesPerInstruction: measurement.peakMemoryBytesPerInstruction,
            replicaDigest: hexDigits(measurement.replicaDigest),
            changesetDigest: hexDigits(measurement.changesetDigest))
    }
}

/// One run of the suite.
struct TargetRun: Sendable {
    enum Build: String, Sendable {
        case candidate, baseline
    }

    var round: Int
    var build: Build
    var cell: TargetCell
    var sample: TargetSample
}

/// The suite's runs, judged and written out. The samples per cell, the checks and the
/// comparisons are derived once, when the report is made.
struct TargetReport {
    let runs: [TargetRun]
    let instructions: Int
    let objects: Int
    let seed: UInt64
    /// The candidate's cells in the order they ran, and each one's samples in round order
    /// (looked up only; never iterated).
    let cells: [TargetCell]
    let candidate: [TargetCell: [TargetSample]]
    let checks: [TargetCheck]
    let comparisons: [Comparison]

    init(runs: [TargetRun], instructions: Int, objects: Int, seed: UInt64) {
        (self.runs, self.instructions, self.objects, self.seed) = (
            runs, instructions, objects, seed
        )
        (cells, candidate) = Self.samples(runs, .candidate)
        checks = TargetSuite.checks(
            candidate, instructions: instructions, objects: objects, seed: seed)
        let baseline = Self.samples(runs, .baseline).samples
        comparisons = cells.compactMap { [candidate] cell in
            Comparison(cell: cell, candidate: candidate[cell]!, baseline: baseline[cell])
        }
    }

    /// Each cell's samples of `build`, in round order; the cells in the order they ran.
    static func samples(_ runs: [TargetRun], _ build: TargetRun.Build) -> (
        cells: [TargetCell], samples: [TargetCell: [TargetSample]]
    ) {
        var cells = [TargetCell]()
        var samples = [TargetCell: [TargetSample]]()
        for run in runs where run.build == build {
            if samples[run.cell] == nil { cells.append(run.cell) }
            samples[run.cell, default: []].append(run.sample)
        }
        return (cells, samples)
    }

    func checksText() -> String {
        CSV.line(TargetCheck.csvColumns) + checks.map { CSV.line($0.csvFields) }.joined()
    }

    static let runColumns = [
        "round", "build", "workload", "column", "role", "clients", "instructions",
        "local_instructions", "objects", "seed", "merge_cpu_seconds", "instructions_per_second",
        "encoded_bytes_per_instruction", "peak_memory_bytes_per_instruction", "replica_digest",
        "changeset_digest",
    ]

    func runsText() -> String {
        CSV.line(Self.runColumns)
            + runs.map { run in
                let cell = run.cell
                let sample = run.sample
                return CSV.line([
                    String(run.round), run.build.rawValue, cell.kind.rawValue, cell.column.id,
                    cell.role.rawValue, String(cell.clients), String(cell.instructions),
                    cell.localInstructions.map(String.init) ?? "", String(cell.objects),
                    String(cell.seed), String(format: "%.6f", sample.mergeCpuSeconds),
                    String(format: "%.0f", sample.rate),
                    String(format: "%.2f", sample.encodedBytesPerInstruction),
                    sample.peakMemoryBytesPerInstruction.map { String(format: "%.1f", $0) } ?? "",
                    sample.replicaDigest, sample.changesetDigest,
                ])
            }.joined()
    }

    /// Per cell with a baseline: both medians, and the candidate's time over the baseline's,
    /// round by round (median, lowest, highest), and whether every pair's digests agree.
    struct Comparison {
        var cell: TargetCell
        var candidateRate: Double
        var baselineRate: Double
        var timeRatio: Double
        var low: Double
        var high: Double
        var digestsMatch: Bool

        /// nil without the baseline's samples of the cell, or with another count of them.
        init?(cell: TargetCell, candidate ours: [TargetSample], baseline theirs: [TargetSample]?) {
            guard let theirs, !ours.isEmpty, ours.count == theirs.count else { return nil }
            let ratios = zip(ours, theirs).map {
                $0.mergeCpuSeconds / max($1.mergeCpuSeconds, 1e-9)
            }
            self.cell = cell
            candidateRate = TargetSuite.median(ours.map(\.rate))
            baselineRate = TargetSuite.median(theirs.map(\.rate))
            (timeRatio, low, high) = (TargetSuite.median(ratios), ratios.min()!, ratios.max()!)
            digestsMatch = zip(ours, theirs).allSatisfy {
                $0.replicaDigest == $1.replicaDigest && $0.changesetDigest == $1.changesetDigest
            }
        }
    }

    static let compareColumns = [
        "workload", "column", "instructions", "candidate_instructions_per_second",
        "baseline_instructions_per_second", "time_ratio_median", "time_ratio_low",
        "time_ratio_high", "digests_match",
    ]

    func compareText() -> String {
        CSV.line(Self.compareColumns)
            + comparisons.map { item in
                CSV.line([
                    item.cell.kind.rawValue, item.cell.column.id, String(item.cell.instructions),
                    String(format: "%.0f", item.candidateRate),
                    String(format: "%.0f", item.baselineRate),
                    String(format: "%.4f", item.timeRatio), String(format: "%.4f", item.low),
                    String(format: "%.4f", item.high), item.digestsMatch ? "true" : "false",
                ])
            }.joined()
    }

    /// Cells whose rounds gave different digests (the merge is deterministic, so a build
    /// that does is broken), and with a baseline, cells where the builds merged differently.
    func digestProblems() -> [String] {
        var problems = [String]()
        for cell in cells {
            // Counted only: how many distinct digests the rounds gave.
            let digests = Set(candidate[cell]!.map { $0.replicaDigest + $0.changesetDigest })
            if digests.count > 1 {
                problems.append(
                    "\(cell.title) gave different digests in different rounds; reproduce: "
                        + "syncsim bench merge " + cell.benchArguments.joined(separator: " "))
            }
        }
        for item in comparisons where !item.digestsMatch {
            problems.append(
                "\(item.cell.title): the candidate and the baseline "
                    + "merged differently (digests differ), so this is not a "
                    + "performance comparison")
        }
        return problems
    }

    func summaryText(withBaseline: Bool) -> String {
        var lines = [
            "",
            "M instructions merged per CPU second, median over the rounds "
                + "(slowest–fastest), N=\(instructions):", "",
            TargetSuite.table(
                candidate, instructions: instructions, objects: objects,
                seed: seed), "",
        ]
        if withBaseline {
            lines.append("candidate time / baseline time, median over the rounds (low–high):")
            for item in comparisons {
                lines.append(
                    "  \(item.cell.title): "
                        + String(
                            format: "%.3f (%.3f–%.3f)", item.timeRatio, item.low,
                            item.high)
                        + (item.digestsMatch ? "" : "  DIGESTS DIFFER"))
            }
            lines.append("")
        }
        for check in checks {
            let sense = check.atLeast ? "≥" : "≤"
            var line =
                "\(check.verdict.rawValue): \(check.workload) \(check.target) "
                + String(format: "%.3f", check.median) + " \(check.unit) "
                + "(rounds \(String(format: "%.3f", check.low))–"
                + "\(String(format: "%.3f", check.high))), target \(sense) "
                + String(format: "%g", check.threshold)
            if check.everyRound == false && check.verdict == .met {
                line += "; not in every round"
            }
            lines.append(line)
        }
        let count = { (verdict: TargetCheck.Verdict) in
            checks.filter { $0.verdict == verdict }.count
        }
        lines.append(
            "targets met=\(count(.met)) not_met=\(count(.notMet)) "
                + "not_judged=\(count(.notJudged))")
        return lines.joined(separator: "\n")
    }
}
