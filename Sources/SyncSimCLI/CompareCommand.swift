import ArgumentParser
import Foundation
import Measurement

/// `syncsim compare`: one sweep against another, run by run: the regression check between two
/// builds (or two scenarios) of the same sweep.
public struct CompareCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two sweeps run by run: the same runs, or how they differ.",
        discussion: """
            Matches the runs of two sweeps by variant (equal labels) and seed. Runs with the \
            same trace digest are the same run, event for event; for the others, the \
            difference candidate - baseline of every metric, seed by seed, says how the change \
            moved it. Writes DIR/compare.csv (per variant and metric: the paired differences, \
            as in sweep_paired.csv) and DIR/compare_runs.csv (per run pair: both run IDs and \
            trace digests). Typical use: run one sweep with the build before a change and with \
            the build after, into two directories, then compare them. Exits 1 with \
            --require-identical unless every run of either sweep has its twin in the other.
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

    public func run() throws {
        let baselinePath = Self.databasePath(baseline)
        let candidatePath = Self.databasePath(candidate)
        let comparison: SweepComparison
        do throws(MeasurementError) {
            let before = try ResultStore(path: baselinePath, access: .readOnly).sweep(baselineSweep)
            let after = try ResultStore(path: candidatePath, access: .readOnly).sweep(
                candidateSweep)
            comparison = SweepComparison(baseline: before, candidate: after)
            if let reason = comparison.incomparableReason {
                throw MeasurementError.sweepsNotComparable(
                    path: baselinePath, candidate: candidatePath, reason: reason)
            }
            try OutputDirectory.prepare(outputDirectory)
            try AtomicFile.write(
                comparison.differencesText(), to: "\(outputDirectory)/compare.csv")
            try AtomicFile.write(comparison.runsText(), to: "\(outputDirectory)/compare_runs.csv")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
        if !quiet {
            ComparisonPrinter.print(
                comparison, baseline: baselinePath, candidate: candidatePath,
                outputDirectory: outputDirectory)
        }
        let differing = comparison.differingRuns.count
        print(
            "verdict=\(comparison.isIdentical ? "identical" : "changed") runs=\(comparison.comparedRuns) differing=\(differing)"
        )
        if requireIdentical && !comparison.isIdentical { throw ExitCode(1) }
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

    static func print(
        _ comparison: SweepComparison, baseline: String, candidate: String,
        outputDirectory: String
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
            Swift.print(
                "  differs: \(title(entry.labels)), seed \(entry.seeds[pair.seedOrdinal]): baseline run \(entry.baselineRunIds[pair.seedOrdinal]) \(entry.baseline[pair.seedOrdinal].traceDigest), candidate run \(entry.candidateRunIds[pair.seedOrdinal]) \(entry.candidate[pair.seedOrdinal].traceDigest)"
            )
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
