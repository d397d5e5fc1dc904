//! The statistics of a sweep: many seeds of one scenario, in one or more variants, summarised
//! per variant and metric (`sweep.csv`) and compared with the first variant seed by seed
//! (`sweep_paired.csv`).
//!
//! Both files are a function of the runs' deterministic metrics alone, taken in the order given
//! (callers pass each variant's runs in seed order), so they are byte-identical however the runs
//! were scheduled. Statistics come from `Summary` (GSL); reals have six decimals (`CSV.real`).

import Foundation

/// One label of a variant: a column of the sweep files and its value, e.g. `reset_mode`.
public struct SweepLabel: Sendable, Hashable {
    /// The column name, snake_case.
    public var column: String
    public var value: String

    public init(column: String, value: String) {
        self.column = column
        self.value = value
    }

    /// The label with its value in one spelling per value, for matching variants of two
    /// sweeps: a number as a decimal (`10`, `10.0` and `1e1` are `10`), a JSON array or
    /// object re-encoded with sorted keys and no spaces (numbers in it as JSON numbers), and
    /// any other text as it is (`recoverUnsyncedChanges`, a quoted JSON string).
    public var canonical: SweepLabel {
        SweepLabel(column: column, value: Self.canonicalValue(value))
    }

    static func canonicalValue(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let first = trimmed.first, first == "-" || first.isNumber,
            let number = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")),
            Self.isWholeNumberText(trimmed, parsedAs: number)
        {
            return "\(number)"
        }
        if trimmed.hasPrefix("[") || trimmed.hasPrefix("{"),
            let object = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        {
            return String(decoding: data, as: UTF8.self)
        }
        return text
    }

    /// Whether all of `text` is the number `Decimal(string:)` read (it stops at the first
    /// character that is not part of one: `10h` would read as 10).
    private static func isWholeNumberText(_ text: String, parsedAs number: Decimal) -> Bool {
        text.allSatisfy { $0.isNumber || "+-.eE".contains($0) } && !number.isNaN
    }
}

/// The runs of one variant of a sweep: the same scenario and overrides, one run per seed.
public struct SweepVariant: Sendable, Equatable {
    /// The variant's labels; every variant of a sweep has the same columns in the same order.
    public var labels: [SweepLabel]
    /// One run per seed, in seed order (the same seeds, in the same order, in every variant).
    public var runs: [RunRecord]

    public init(labels: [SweepLabel], runs: [RunRecord]) {
        self.labels = labels
        self.runs = runs
    }
}

/// `sweep.csv` and `sweep_paired.csv`.
public enum SweepCSV {
    /// The statistics columns of `sweep.csv`, after `variant`, the labels and `metric`.
    public static let summaryColumns = [
        "runs", "mean", "standard_deviation", "min", "p50", "p95", "p99", "max",
        "confidence_low95", "confidence_high95",
    ]
    /// The statistics columns of `sweep_paired.csv`, after `variant`, the labels and `metric`.
    public static let pairedColumns = [
        "pairs", "mean_difference", "standard_deviation", "min", "p50", "max",
        "confidence_low95", "confidence_high95", "higher_in_variant", "lower_in_variant",
    ]

    /// The metric names of `variants`' runs, in first-seen order (variants in order, runs in
    /// order, metrics in ordinal order): the rows of each variant.
    public static func metricNames(_ variants: [SweepVariant]) -> [String] {
        ResultCSV.unionOfNames(variants.flatMap { $0.runs.map(\.metrics) })
    }

    /// The values of metric `name` over `runs`, in order, skipping runs without it
    /// (`figures`: \.timings reads a wall-clock figure instead).
    public static func values(
        of name: String, in runs: [RunRecord], _ figures: KeyPath<RunRecord, [Metric]> = \.metrics
    ) -> [Double] {
        runs.compactMap { run in
            run[keyPath: figures].first { $0.name == name }.map(\.value.asDouble)
        }
    }

    /// One row per variant and metric: the metric's `Summary` over the variant's runs.
    /// - Complexity: O(variants × metrics × runs × metrics per run).
    public static func summaryText(_ variants: [SweepVariant]) -> String {
        let names = metricNames(variants)
        var text = CSV.line(header(variants) + summaryColumns)
        for (ordinal, variant) in variants.enumerated() {
            for name in names {
                let summary = Summary.of(values(of: name, in: variant.runs))
                let cells = [
                    String(summary.count), CSV.real(summary.mean),
                    CSV.real(summary.standardDeviation), CSV.real(summary.min),
                    CSV.real(summary.p50), CSV.real(summary.p95), CSV.real(summary.p99),
                    CSV.real(summary.max), CSV.real(summary.confidenceLow95),
                    CSV.real(summary.confidenceHigh95),
                ]
                text += CSV.line(prefix(ordinal, variant, name) + cells)
            }
        }
        return text
    }

    /// One row per variant after the first and per metric: the differences `variant − first`
    /// over the seeds both ran (a paired comparison: the same seed gives both variants the same
    /// workload and faults until their handling differs, so the differences vary far less than
    /// the values), and how many seeds came out higher in each.
    /// - Precondition: every variant ran the same seeds in the same order.
    public static func pairedText(_ variants: [SweepVariant]) -> String {
        let names = metricNames(variants)
        var text = CSV.line(header(variants) + pairedColumns)
        guard let baseline = variants.first else { return text }
        for (ordinal, variant) in variants.enumerated().dropFirst() {
            precondition(
                variant.runs.map(\.seed) == baseline.runs.map(\.seed),
                "the variants of a sweep ran different seeds")
            for name in names {
                let cells = pairedCells(differences(of: name, variant.runs, baseline.runs))
                text += CSV.line(prefix(ordinal, variant, name) + cells)
            }
        }
        return text
    }

    /// The cells of `pairedColumns` for paired differences `pairs`: their statistics, and how
    /// many are above and below zero.
    static func pairedCells(_ pairs: [Double]) -> [String] {
        let summary = Summary.of(pairs)
        return [
            String(summary.count), CSV.real(summary.mean),
            CSV.real(summary.standardDeviation), CSV.real(summary.min),
            CSV.real(summary.p50), CSV.real(summary.max),
            CSV.real(summary.confidenceLow95), CSV.real(summary.confidenceHigh95),
            String(pairs.count { $0 > 0 }), String(pairs.count { $0 < 0 }),
        ]
    }

    /// The columns of the `sweeps` table (`syncsim export --table sweeps`), one row per sweep.
    public static let listColumns = [
        "sweep_id", "scenario_name", "scenario_hash", "options_json", "git_commit", "digest",
        "variants", "seeds", "runs", "first_seed", "last_seed", "first_run_id", "last_run_id",
        "label_columns",
    ]

    /// One row per sweep, in the order given: what it ran (its options, its variants' label
    /// columns separated by `;`) and which runs it made.
    public static func listText(_ sweeps: [StoredSweep]) -> String {
        var text = CSV.line(listColumns)
        for sweep in sweeps {
            let record = sweep.record
            let seeds: [String] = [record.seeds.first, record.seeds.last].map { seed in
                seed.map { String($0) } ?? ""
            }
            let runIds: [String] = [sweep.runIds.min(), sweep.runIds.max()].map { runId in
                runId.map { String($0) } ?? ""
            }
            let labelColumns = (record.variantLabels.first ?? []).map(\.column)
            var cells: [String] = [
                String(sweep.sweepId), record.scenarioName, record.scenarioHash,
                record.optionsJSON, record.gitCommit, record.digest,
                String(record.variantLabels.count), String(record.seeds.count),
                String(sweep.runIds.count),
            ]
            cells += seeds + runIds + [labelColumns.joined(separator: ";")]
            precondition(cells.count == listColumns.count, "sweeps row out of step with header")
            text += CSV.line(cells)
        }
        return text
    }

    /// `variant − baseline` of metric `name`, seed by seed, where both runs have it.
    public static func differences(
        of name: String, _ variant: [RunRecord], _ baseline: [RunRecord]
    ) -> [Double] {
        zip(variant, baseline).compactMap { run, base in
            guard let value = run.metrics.first(where: { $0.name == name }),
                let reference = base.metrics.first(where: { $0.name == name })
            else { return nil }
            return value.value.asDouble - reference.value.asDouble
        }
    }

    private static func header(_ variants: [SweepVariant]) -> [String] {
        let labels = variants.first?.labels.map(\.column) ?? []
        precondition(
            variants.allSatisfy { $0.labels.map(\.column) == labels },
            "the variants of a sweep have different label columns")
        return ["variant"] + labels + ["metric"]
    }

    private static func prefix(_ ordinal: Int, _ variant: SweepVariant, _ name: String) -> [String]
    {
        [String(ordinal)] + variant.labels.map(\.value) + [MetricName.snakeCase(name)]
    }
}

extension MetricValue {
    /// The value as a `Double` (integers above 2^53 round).
    public var asDouble: Double {
        switch self {
        case .integer(let integer): Double(integer)
        case .real(let real): real
        }
    }
}
