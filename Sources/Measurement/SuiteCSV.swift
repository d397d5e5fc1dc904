//! `suite.csv`, `suite_timings.csv` and `suite_compare.csv`: a suite's sweeps, one row each.
//!
//! `suite.csv` and `suite_compare.csv` are deterministic (a function of the runs as stored);
//! `suite_timings.csv` holds the wall-clock figures, kept apart as `timings.csv` keeps a run's.

/// One sweep of a suite as stored: its name in the suite, and the sweep read back.
public struct SuiteSweep: Sendable {
    public var name: String
    public var sweep: StoredSweep
    public var variants: [SweepVariant]

    public init(name: String, sweep: StoredSweep, variants: [SweepVariant]) {
        self.name = name
        self.sweep = sweep
        self.variants = variants
    }

    /// Every run of the sweep, variant-major.
    public var runs: [RunRecord] { variants.flatMap(\.runs) }

    /// How many of its runs passed every check.
    public var runsPassed: Int { SweepCSV.values(of: "passed", in: runs).count { $0 == 1 } }

    /// The wall time of its runs, summed (each run's `wallSeconds` timing).
    public var runSeconds: Double {
        SweepCSV.values(of: "wallSeconds", in: runs, \.timings).reduce(0, +)
    }

    /// Simulated events, summed over its runs.
    public var events: UInt64 { runs.reduce(0) { $0 + $1.eventsCount } }
}

/// How one sweep of a suite stands against the baseline's sweep of the same name.
public struct SuiteSweepComparison: Sendable {
    public enum Verdict: String, Sendable {
        /// The same runs: the same variants and seeds, every pair with the same trace digest.
        case identical
        /// Some pair of runs differs, or a variant or seed is only on one side.
        case changed
        /// No variant or no seed in common.
        case incomparable
        /// Only in this suite.
        case new
        /// Only in the baseline's suite (a sweep the suite file no longer has).
        case missing
    }

    public var name: String
    public var baseline: SuiteSweep?
    public var candidate: SuiteSweep?
    /// The run-by-run comparison, when both sides have the sweep.
    public var comparison: SweepComparison?

    public init(name: String, baseline: SuiteSweep?, candidate: SuiteSweep?) {
        self.name = name
        self.baseline = baseline
        self.candidate = candidate
        if let baseline, let candidate {
            comparison = SweepComparison(
                baseline: (baseline.sweep, baseline.variants),
                candidate: (candidate.sweep, candidate.variants))
        }
    }

    public var verdict: Verdict {
        guard let comparison else { return candidate == nil ? .missing : .new }
        if comparison.incomparableReason != nil { return .incomparable }
        return comparison.isIdentical ? .identical : .changed
    }

    /// The suite's sweeps (`candidate`, in its order, each matched by name), then the
    /// baseline's sweeps the suite file no longer has (`missing`, in the baseline's order).
    /// `fileNames`: every sweep of the suite file, so that a baseline sweep the file has but
    /// this run did not select (`--only`) is left out, not missing.
    public static func match(
        candidate: [SuiteSweep], baseline: [SuiteSweep], fileNames: [String]
    ) -> [SuiteSweepComparison] {
        let matched = candidate.map { sweep in
            SuiteSweepComparison(
                name: sweep.name, baseline: baseline.first { $0.name == sweep.name },
                candidate: sweep)
        }
        let missing = baseline.filter { !fileNames.contains($0.name) }.map {
            SuiteSweepComparison(name: $0.name, baseline: $0, candidate: nil)
        }
        return matched + missing
    }
}

/// The text of the suite files.
public enum SuiteCSV {
    public static let summaryColumns = [
        "suite_id", "suite", "sweep", "sweep_id", "scenario", "scenario_hash", "variants",
        "seeds", "runs", "runs_passed", "events", "digest",
    ]

    /// `suite.csv`: one row per sweep of suite `suite`, in its order.
    public static func summaryText(suite: StoredSuite, sweeps: [SuiteSweep]) -> String {
        var text = CSV.line(summaryColumns)
        for sweep in sweeps {
            let record = sweep.sweep.record
            text += CSV.line([
                String(suite.suiteId), suite.record.name, sweep.name, String(sweep.sweep.sweepId),
                record.scenarioName, record.scenarioHash, String(record.variantLabels.count),
                String(record.seeds.count), String(sweep.sweep.runIds.count),
                String(sweep.runsPassed), String(sweep.events), record.digest,
            ])
        }
        return text
    }

    public static let listColumns = [
        "suite_id", "suite", "file_hash", "git_commit", "suite_digest", "ordinal", "sweep",
        "sweep_id",
    ]

    /// The `suites` table: one row per sweep of every suite, suites in insertion order.
    public static func listText(_ suites: [StoredSuite]) -> String {
        var text = CSV.line(listColumns)
        for suite in suites {
            let record = suite.record
            for (ordinal, (name, sweepId)) in zip(record.sweepNames, suite.sweepIds).enumerated() {
                text += CSV.line([
                    String(suite.suiteId), record.name, record.fileHash, record.gitCommit,
                    record.digest, String(ordinal), name, String(sweepId),
                ])
            }
        }
        return text
    }

    public static let timingColumns = [
        "suite_id", "suite", "sweep", "sweep_id", "runs", "run_seconds", "events_per_second",
        "baseline_sweep_id", "baseline_run_seconds", "run_seconds_ratio",
    ]

    /// `suite_timings.csv`: per sweep, the wall time of its runs (summed) and the simulated
    /// events per second of run time; with a baseline, the baseline's and the ratio
    /// this / baseline (empty cells without one).
    public static func timingsText(
        suite: StoredSuite, sweeps: [SuiteSweep], comparisons: [SuiteSweepComparison]?
    ) -> String {
        var text = CSV.line(timingColumns)
        for sweep in sweeps {
            let seconds = sweep.runSeconds
            let baseline = comparisons?.first { $0.name == sweep.name }?.baseline
            let baselineSeconds = baseline?.runSeconds
            text += CSV.line([
                String(suite.suiteId), suite.record.name, sweep.name, String(sweep.sweep.sweepId),
                String(sweep.sweep.runIds.count), CSV.real(seconds),
                CSV.real(seconds > 0 ? Double(sweep.events) / seconds : 0),
                baseline.map { String($0.sweep.sweepId) } ?? "",
                baselineSeconds.map(CSV.real) ?? "",
                baselineSeconds.map { $0 > 0 ? CSV.real(seconds / $0) : "" } ?? "",
            ])
        }
        return text
    }

    public static let comparisonColumns = [
        "sweep", "verdict", "baseline_sweep_id", "candidate_sweep_id", "baseline_digest",
        "candidate_digest", "run_pairs", "runs_differing", "variants_only_baseline",
        "variants_only_candidate", "seeds_only_baseline", "seeds_only_candidate",
    ]

    /// `suite_compare.csv`: per sweep, its verdict against the baseline's sweep of the same
    /// name and what the verdict rests on (counts are empty when one side is missing).
    public static func comparisonText(_ comparisons: [SuiteSweepComparison]) -> String {
        var text = CSV.line(comparisonColumns)
        for entry in comparisons {
            let counts: [String] =
                entry.comparison.map { comparison in
                    [
                        comparison.comparedRuns, comparison.differingRuns.count,
                        comparison.baselineOnly.count, comparison.candidateOnly.count,
                        comparison.baselineOnlySeeds.count, comparison.candidateOnlySeeds.count,
                    ].map(String.init)
                } ?? Array(repeating: "", count: 6)
            text += CSV.line(
                [
                    entry.name, entry.verdict.rawValue,
                    entry.baseline.map { String($0.sweep.sweepId) } ?? "",
                    entry.candidate.map { String($0.sweep.sweepId) } ?? "",
                    entry.baseline?.sweep.record.digest ?? "",
                    entry.candidate?.sweep.record.digest ?? "",
                ] + counts)
        }
        return text
    }
}
