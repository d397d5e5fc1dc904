import ArgumentParser
import Foundation
import Measurement
import Simulation

/// `syncsim compare`: one sweep against another, run by run: the regression check between two
/// builds (or two scenarios) of the same sweep.
public struct CompareCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two sweeps run by run, or two runs: the same, or how they differ.",
        discussion: """
            Matches the runs of two sweeps by variant (equal labels) and seed. Runs with the \
            same trace digest are the same run, event for event; for the others, the \
            difference candidate - baseline of every metric, seed by seed, says how the change \
            moved it. Writes DIR/compare.csv (per variant and metric: the paired differences, \
            as in sweep_paired.csv) and DIR/compare_runs.csv (per run pair: both run IDs and \
            trace digests). Typical use: run one sweep with the build before a change and with \
            the build after, into two directories, then compare them. Exits 1 with \
            --require-identical unless every run of either sweep has its twin in the other.

            Two databases that hold no sweep (the results of `syncsim run`), or \
            --baseline-run/--candidate-run, compare two runs of one seed instead: the same \
            run, or every metric's difference in DIR/compare_run.csv and, when both \
            directories hold a checkpoints.csv of their run (`run --checkpoints N`), the \
            last checkpoint at which the runs agree.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The baseline: a results database, or a directory holding results.sqlite.",
            valueName: "baseline"))
    public var baseline: String

    @Argument(
        help: ArgumentHelp(
            "The candidate: a results database, or a directory holding results.sqlite.",
            valueName: "candidate"))
    public var candidate: String

    @Option(
        name: .customLong("baseline-sweep"),
        help: ArgumentHelp(
            "The baseline's sweep (its sweep_id). Default: its last.", valueName: "id"))
    public var baselineSweep: Int64?

    @Option(
        name: .customLong("candidate-sweep"),
        help: ArgumentHelp("The candidate's sweep. Default: its last.", valueName: "id"))
    public var candidateSweep: Int64?

    @Option(
        name: .customLong("baseline-run"),
        help: ArgumentHelp(
            "Compare runs: the baseline's run (its run_id). Default: its last.",
            valueName: "id"))
    public var baselineRun: Int64?

    @Option(
        name: .customLong("candidate-run"),
        help: ArgumentHelp(
            "Compare runs: the candidate's run (its run_id). Default: its last.",
            valueName: "id"))
    public var candidateRun: Int64?

    @Option(
        name: .customLong("out"),
        help: "The directory of the comparison's files (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(
        name: .customLong("require-identical"),
        help: """
            Exit 1 unless the sweeps are the same runs: the same variants and seeds, every pair \
            with the same trace digest (a regression gate for a change meant to keep results).
            """)
    public var requireIdentical = false

    @Flag(help: "Print only the verdict line.")
    public var quiet = false

    public init() {}

    public func validate() throws {
        if (baselineRun != nil || candidateRun != nil)
            && (baselineSweep != nil || candidateSweep != nil)
        {
            throw ValidationError(
                "Give runs (--baseline-run, --candidate-run) or sweeps (--baseline-sweep, "
                    + "--candidate-sweep) to compare, not both.")
        }
    }

    public func run() throws {
        let baselinePath = Self.databasePath(baseline)
        let candidatePath = Self.databasePath(candidate)
        var sweepComparison: SweepComparison?
        var runsIdentical: Bool?
        do throws(MeasurementError) {
            let beforeStore = try ResultStore(path: baselinePath, access: .readOnly)
            let afterStore = try ResultStore(path: candidatePath, access: .readOnly)
            let beforeSweeps = try beforeStore.sweeps()
            let afterSweeps = try afterStore.sweeps()
            let noSweeps =
                baselineSweep == nil && candidateSweep == nil && beforeSweeps.isEmpty
                && afterSweeps.isEmpty
            let runs = baselineRun != nil || candidateRun != nil || noSweeps
            if runs {
                runsIdentical = try compareRuns(beforeStore, afterStore)
            } else {
                let comparison = SweepComparison(
                    baseline: try beforeStore.sweep(baselineSweep),
                    candidate: try afterStore.sweep(candidateSweep))
                sweepComparison = comparison
                if let reason = comparison.incomparableReason {
                    throw MeasurementError.sweepsNotComparable(
                        path: baselinePath, candidate: candidatePath, reason: reason)
                }
                try OutputDirectory.prepare(outputDirectory)
                try AtomicFile.write(all: [
                    (comparison.differencesText(), "\(outputDirectory)/compare.csv"),
                    (comparison.runsText(), "\(outputDirectory)/compare_runs.csv"),
                ])
            }
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
        if let runsIdentical {
            if requireIdentical && !runsIdentical { throw ExitCode(1) }
            return
        }
        guard let comparison = sweepComparison else { return }
        if !quiet {
            ComparisonPrinter.print(
                comparison, baseline: baselinePath, candidate: candidatePath,
                checkpointDirectories: (baseline, candidate), outputDirectory: outputDirectory)
        }
        let differing = comparison.differingRuns.count
        print(
            "verdict=\(comparison.isIdentical ? "identical" : "changed") runs=\(comparison.comparedRuns) differing=\(differing)"
        )
        if requireIdentical && !comparison.isIdentical { throw ExitCode(1) }
    }

    /// The run form: run `baselineRun` (or the last) of `before` against `candidateRun` (or
    /// the last) of `after`, with their checkpoints where both directories hold them. Writes
    /// `compare_run.csv`, prints the report and the verdict line.
    /// - Returns: whether the runs are the same run.
    private func compareRuns(
        _ before: ResultStore, _ after: ResultStore
    ) throws(MeasurementError) -> Bool {
        let comparison = RunComparison(
            baseline: try Self.run(baselineRun, of: before),
            candidate: try Self.run(candidateRun, of: after))
        if let reason = comparison.incomparableReason {
            throw MeasurementError.runsNotComparable(
                path: before.path, candidate: after.path, reason: reason)
        }
        try OutputDirectory.prepare(outputDirectory)
        try AtomicFile.write(comparison.metricsText(), to: "\(outputDirectory)/compare_run.csv")
        if !quiet {
            RunComparisonPrinter.print(
                comparison,
                baseline: (before.path, checkpoints(baseline, comparison.baseline)),
                candidate: (after.path, checkpoints(candidate, comparison.candidate)),
                outputDirectory: outputDirectory)
        }
        print(
            "verdict=\(comparison.isIdentical ? "identical" : "changed") runs=1 "
                + "differing=\(comparison.isIdentical ? 0 : 1)")
        return comparison.isIdentical
    }

    /// Run `runId` of `store`, or its last.
    static func run(_ runId: Int64?, of store: ResultStore) throws(MeasurementError) -> StoredRun {
        let runs = try store.runs()
        if let runId {
            guard let run = runs.first(where: { $0.runId == runId }) else {
                throw .runNotFound(path: store.path, runId: runId, lastRunId: runs.last?.runId)
            }
            return run
        }
        guard let last = runs.last else {
            throw .runNotFound(path: store.path, runId: nil, lastRunId: nil)
        }
        return last
    }

    /// The checkpoints of `run` in the directory `argument`, if it is one and its
    /// `checkpoints.csv` is that run's (its last row is the run's end), else why not.
    private func checkpoints(_ argument: String, _ run: StoredRun)
        -> Result<[RunComparison.Checkpoint], CheckpointsMissing>
    {
        Self.checkpoints(at: argument + "/checkpoints.csv", of: run.record)
    }

    /// The checkpoints in the file at `path` when they are `run`'s (the last row is the run's
    /// end: its trace digest after its last event), else why not. `compare` reads a run's
    /// `checkpoints.csv` and a sweep's `checkpoints/variant-V-seed-S.csv` through this.
    static func checkpoints(at path: String, of run: RunRecord)
        -> Result<[RunComparison.Checkpoint], CheckpointsMissing>
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(CheckpointsMissing(reason: "no \(path)"))
        }
        guard let rows = RunComparison.Checkpoint.parse(String(decoding: data, as: UTF8.self)),
            let last = rows.last
        else {
            return .failure(CheckpointsMissing(reason: "\(path) is not a checkpoints file"))
        }
        guard last.traceDigest == run.traceDigest, last.events == run.eventsCount else {
            return .failure(
                CheckpointsMissing(
                    reason: "\(path) is another run's (it ends at digest \(last.traceDigest))"))
        }
        return .success(rows)
    }

    /// `path` itself, or `path/results.sqlite` when `path` is a directory.
    static func databasePath(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
            isDirectory.boolValue
        {
            return path + "/results.sqlite"
        }
        return path
    }
}

/// The console report of a comparison: what was matched, which runs differ, and the headline
/// metrics' paired differences where they moved.
enum ComparisonPrinter {
    /// At most this many differing runs are listed (all are in `compare_runs.csv`).
    static let runsListed = 10
    /// At most this many metrics' differences are shown (all are in `compare.csv`).
    static let metricsShown = 12

    /// `checkpointDirectories`: the arguments as given; where both are directories of sweeps
    /// run with `--checkpoints`, each listed differing run says where its pair parts.
    static func print(
        _ comparison: SweepComparison, baseline: String, candidate: String,
        checkpointDirectories: (baseline: String, candidate: String), outputDirectory: String
    ) {
        for (role, path, sweep) in [
            ("baseline", baseline, comparison.baseline),
            ("candidate", candidate, comparison.candidate),
        ] {
            let record = sweep.record
            Swift.print(
                "\(role): \(path) sweep \(sweep.sweepId): \(record.scenarioName), \(record.variantLabels.count) variants × \(SweepComparison.range(record.seeds)), commit \(record.gitCommit), digest \(record.digest)"
            )
        }
        if comparison.baseline.record.scenarioHash != comparison.candidate.record.scenarioHash {
            Swift.print(
                "note: the sweeps ran different scenario files (hash \(comparison.baseline.record.scenarioHash) and \(comparison.candidate.record.scenarioHash))"
            )
        }
        let matched = comparison.matched
        Swift.print(
            "matched: \(matched.count) variants × \(matched.first?.seeds.count ?? 0) seeds = \(comparison.comparedRuns) run pairs"
        )
        for (side, variants) in [
            ("baseline", comparison.baselineOnly), ("candidate", comparison.candidateOnly),
        ] where !variants.isEmpty {
            Swift.print("  only in the \(side): " + variants.map(title).joined(separator: "; "))
        }
        for (side, seeds) in [
            ("baseline", comparison.baselineOnlySeeds),
            ("candidate", comparison.candidateOnlySeeds),
        ] where !seeds.isEmpty {
            Swift.print("  seeds only in the \(side): \(SweepComparison.range(seeds))")
        }
        let differing = comparison.differingRuns
        Swift.print(
            "identical runs (same trace digest): \(comparison.comparedRuns - differing.count) of \(comparison.comparedRuns)"
        )
        for pair in differing.prefix(runsListed) {
            let entry = matched[pair.matched]
            let seed = entry.seeds[pair.seedOrdinal]
            Swift.print(
                "  differs: \(title(entry.labels)), seed \(seed): baseline run \(entry.baselineRunIds[pair.seedOrdinal]) \(entry.baseline[pair.seedOrdinal].traceDigest), candidate run \(entry.candidateRunIds[pair.seedOrdinal]) \(entry.candidate[pair.seedOrdinal].traceDigest)"
            )
            if let parting = Self.parting(
                checkpointDirectories, variants: (entry.baselineVariant, entry.candidateVariant),
                seed: seed,
                runs: (entry.baseline[pair.seedOrdinal], entry.candidate[pair.seedOrdinal]))
            {
                Swift.print("    checkpoints: " + RunComparisonPrinter.describe(parting))
            }
        }
        if differing.count > runsListed {
            Swift.print("  … and \(differing.count - runsListed) more (compare_runs.csv)")
        }
        if !differing.isEmpty {
            let names = SweepCSV.metricNames(
                matched.map { SweepVariant(labels: $0.labels, runs: $0.candidate) })
            let moved = names.filter { name in
                matched.contains { entry in
                    SweepCSV.differences(of: name, entry.candidate, entry.baseline).contains {
                        $0 != 0
                    }
                }
            }
            Swift.print(
                "metrics that moved in some run pair: \(moved.count) of \(names.count)"
                    + (moved.isEmpty
                        ? "" : ": " + moved.map(MetricName.snakeCase).joined(separator: ", ")))
            // The headline metrics that moved, then the others, at most `metricsShown`.
            let headline = SweepSummaryPrinter.headline.filter { moved.contains($0.name) }
            let others = moved.filter { name in !headline.contains { $0.name == name } }
                .map { (name: $0, label: MetricName.snakeCase($0)) }
            let shown = (headline + others).prefix(metricsShown)
            if !shown.isEmpty {
                Swift.print("")
                Swift.print(
                    "Δ candidate − baseline, seed by seed: mean [95% confidence interval]"
                )
            }
            for (name, label) in shown {
                Swift.print("  \(label)")
                for entry in matched {
                    let pairs = SweepCSV.differences(of: name, entry.candidate, entry.baseline)
                    Swift.print(
                        "    \(entry.candidateVariant)  \(SweepSummaryPrinter.difference(pairs))  \(title(entry.labels))"
                    )
                }
            }
        }
        Swift.print("Results: \(outputDirectory)/compare.csv, \(outputDirectory)/compare_runs.csv")
    }

    /// `reset_mode=manual, backup_interval_seconds=3600, …`.
    static func title(_ labels: [SweepLabel]) -> String {
        labels.map { "\($0.column)=\($0.value)" }.joined(separator: ", ")
    }
}

extension ComparisonPrinter {
    /// Where the runs of `seed` in the baseline's variant and the candidate's part, from the
    /// checkpoint files of both sweeps' directories (`sweep --checkpoints`); nil when either
    /// file is missing, unreadable, or not that run's (its last row is not the run's end: the
    /// file of another sweep in the same directory).
    static func parting(
        _ directories: (baseline: String, candidate: String), variants: (Int, Int), seed: UInt64,
        runs: (baseline: RunRecord, candidate: RunRecord)
    ) -> RunComparison.Divergence? {
        let read = {
            (directory: String, variant: Int, run: RunRecord) -> [RunComparison.Checkpoint]? in
            let path = directory + "/" + SweepCommand.checkpointsFile(variant: variant, seed: seed)
            return try? CompareCommand.checkpoints(at: path, of: run).get()
        }
        guard let before = read(directories.baseline, variants.0, runs.baseline),
            let after = read(directories.candidate, variants.1, runs.candidate)
        else { return nil }
        return RunComparison.divergence(before, after)
    }
}

/// Why a side's checkpoints are not used.
struct CheckpointsMissing: Error {
    var reason: String
}

/// The console report of two runs compared: the runs, whether they are the same, the metrics
/// that moved, and where their checkpoints part.
enum RunComparisonPrinter {
    static func print(
        _ comparison: RunComparison,
        baseline: (
            path: String, checkpoints: Result<[RunComparison.Checkpoint], CheckpointsMissing>
        ),
        candidate: (
            path: String, checkpoints: Result<[RunComparison.Checkpoint], CheckpointsMissing>
        ),
        outputDirectory: String
    ) {
        for (role, path, run) in [
            ("baseline", baseline.path, comparison.baseline),
            ("candidate", candidate.path, comparison.candidate),
        ] {
            let record = run.record
            Swift.print(
                "\(role): \(path) run \(run.runId): seed \(record.seed), \(record.scenarioName), \(record.eventsCount) events, commit \(record.gitCommit), digest \(record.traceDigest)"
            )
        }
        if comparison.baseline.record.scenarioHash != comparison.candidate.record.scenarioHash
            || comparison.baseline.record.optionsJSON != comparison.candidate.record.optionsJSON
        {
            Swift.print("note: the runs had different scenario files or options")
        }
        guard !comparison.isIdentical else {
            Swift.print("the same run: equal trace digests")
            Swift.print("Results: \(outputDirectory)/compare_run.csv")
            return
        }
        let rows = comparison.metrics
        let moved = rows.filter(\.moved)
        Swift.print("the runs differ; metrics that moved: \(moved.count) of \(rows.count)")
        for row in moved.prefix(ComparisonPrinter.metricsShown) {
            let text = { (value: MetricValue?) in value.map(CSV.value) ?? "-" }
            Swift.print(
                "  \(MetricName.snakeCase(row.name)): \(text(row.baseline)) → \(text(row.candidate))"
                    + (row.difference == nil ? "" : " (Δ \(row.differenceText))"))
        }
        if moved.count > ComparisonPrinter.metricsShown {
            Swift.print(
                "  … and \(moved.count - ComparisonPrinter.metricsShown) more (compare_run.csv)")
        }
        switch (baseline.checkpoints, candidate.checkpoints) {
        case (.success(let before), .success(let after)):
            Swift.print("checkpoints: " + describe(RunComparison.divergence(before, after)))
        case (.failure(let missing), _), (_, .failure(let missing)):
            Swift.print(
                "checkpoints: not compared (\(missing.reason)); run both with --checkpoints N into their directories"
            )
        }
        Swift.print("Results: \(outputDirectory)/compare_run.csv")
    }

    /// Where two runs' checkpoints part, as a sentence after "checkpoints: ".
    static func describe(_ divergence: RunComparison.Divergence) -> String {
        switch divergence {
        case .allAgree:
            return "every one agrees (the runs part after the last)"
        case .intervalsDiffer:
            return "taken at different intervals; run both with the same --checkpoints N"
        case .at(let lastEqual, let firstDifferent):
            let parted =
                "event \(firstDifferent.events) (\(Time.clockText(firstDifferent.simulatedTimeNs)))"
            let agreed = lastEqual.map {
                "the runs agree up to event \($0.events) (\(Time.clockText($0.simulatedTimeNs))) and "
                    + "have parted by \(parted)"
            }
            return (agreed ?? "the runs differ already at the first, \(parted)")
                + "; replay both with a smaller --checkpoints interval, or with --log-level, over "
                + "that stretch"
        }
    }
}
