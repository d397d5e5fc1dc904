//! Two sweeps side by side: the regression check of `syncsim compare`.
//!
//! A change to the simulator or the sync engine is judged by running the same sweep on the
//! build before (the *baseline*) and the build after (the *candidate*). Runs are matched by
//! variant (equal labels: `reset_mode`, `backup_interval_seconds`, each `--vary` value) and
//! seed. Two matched runs with the same trace digest are the same run, event for event; where
//! they differ, the metrics' differences, seed by seed, say how (`compare.csv`), in the same
//! paired statistics as `sweep_paired.csv`. Everything here is a function of the two sweeps as
//! stored, so the files are byte-identical from one comparison to the next.

/// The runs of two sweeps matched by variant and seed (see the file's documentation).
public struct SweepComparison: Sendable {
    /// A variant both sweeps ran, with the runs of the seeds both ran.
    public struct Matched: Sendable, Equatable {
        public var labels: [SweepLabel]
        /// The variant's position in each sweep.
        public var baselineVariant: Int
        public var candidateVariant: Int
        /// The seeds both ran, in the candidate's order, and each sweep's run of each.
        public var seeds: [UInt64]
        public var baseline: [RunRecord]
        public var candidate: [RunRecord]
        public var baselineRunIds: [Int64]
        public var candidateRunIds: [Int64]
    }

    /// A pair of matched runs: the matched variant, and the seed's position in it.
    public struct RunPair: Sendable, Equatable {
        public var matched: Int
        public var seedOrdinal: Int
    }

    public var baseline: StoredSweep
    public var candidate: StoredSweep
    /// The variants both ran, in the candidate's order.
    public var matched: [Matched]
    /// The labels of the variants only one sweep ran.
    public var baselineOnly: [[SweepLabel]]
    public var candidateOnly: [[SweepLabel]]
    /// The seeds only one sweep ran.
    public var baselineOnlySeeds: [UInt64]
    public var candidateOnlySeeds: [UInt64]

    /// Matches the variants of two sweeps by their labels (as values: `SweepLabel.canonical`)
    /// and their runs by seed. Matched variants keep the candidate's label text.
    /// - Parameters: each sweep as `ResultStore.sweep(_:)` reads it back.
    public init(
        baseline: (sweep: StoredSweep, variants: [SweepVariant]),
        candidate: (sweep: StoredSweep, variants: [SweepVariant])
    ) {
        self.baseline = baseline.sweep
        self.candidate = candidate.sweep
        let baselineSeeds = baseline.sweep.record.seeds
        let candidateSeeds = candidate.sweep.record.seeds
        // Lookups only: nothing below iterates these dictionaries.
        var baselineSeedOrdinal: [UInt64: Int] = [:]
        for (ordinal, seed) in baselineSeeds.enumerated() { baselineSeedOrdinal[seed] = ordinal }
        let candidateSeedSet = Set(candidateSeeds)
        let common = candidateSeeds.enumerated().compactMap { ordinal, seed in
            baselineSeedOrdinal[seed].map { (seed: seed, candidate: ordinal, baseline: $0) }
        }
        baselineOnlySeeds = baselineSeeds.filter { !candidateSeedSet.contains($0) }
        candidateOnlySeeds = candidateSeeds.filter { baselineSeedOrdinal[$0] == nil }

        var baselineVariant: [[SweepLabel]: Int] = [:]
        for (ordinal, variant) in baseline.variants.enumerated() {
            baselineVariant[variant.labels.map(\.canonical)] = ordinal
        }
        var matchedBaseline = Set<Int>()
        var matched: [Matched] = []
        var candidateOnly: [[SweepLabel]] = []
        for (ordinal, variant) in candidate.variants.enumerated() {
            guard let other = baselineVariant[variant.labels.map(\.canonical)] else {
                candidateOnly.append(variant.labels)
                continue
            }
            matchedBaseline.insert(other)
            let baselineRuns = baseline.variants[other].runs
            let baselineIds = baseline.sweep.runIds[
                other * baselineSeeds.count..<(other + 1) * baselineSeeds.count]
            let candidateIds = candidate.sweep.runIds[
                ordinal * candidateSeeds.count..<(ordinal + 1) * candidateSeeds.count]
            matched.append(
                Matched(
                    labels: variant.labels, baselineVariant: other, candidateVariant: ordinal,
                    seeds: common.map(\.seed),
                    baseline: common.map { baselineRuns[$0.baseline] },
                    candidate: common.map { variant.runs[$0.candidate] },
                    baselineRunIds: common.map {
                        baselineIds[baselineIds.startIndex + $0.baseline]
                    },
                    candidateRunIds: common.map {
                        candidateIds[candidateIds.startIndex + $0.candidate]
                    }))
        }
        self.matched = matched
        self.candidateOnly = candidateOnly
        baselineOnly = baseline.variants.indices.filter { !matchedBaseline.contains($0) }
            .map { baseline.variants[$0].labels }
    }

    /// Why the two sweeps cannot be compared at all, or nil when they share a variant and a
    /// seed.
    public var incomparableReason: String? {
        if matched.isEmpty {
            let columns = { (labels: [SweepLabel]?) in
                (labels ?? []).map(\.column).joined(separator: ", ")
            }
            return "they have no variant in common (the baseline's variants are labelled by "
                + "\(columns(baselineOnly.first)), the candidate's by "
                + "\(columns(candidateOnly.first)); a variant matches one with the same values)"
        }
        if matched[0].seeds.isEmpty {
            return "they have no seed in common (the baseline ran "
                + "\(Self.range(baseline.record.seeds)), the candidate "
                + "\(Self.range(candidate.record.seeds)))"
        }
        return nil
    }

    /// The run pairs both sweeps ran.
    public var comparedRuns: Int { matched.reduce(0) { $0 + $1.seeds.count } }

    /// The run pairs whose trace digests differ, in `compare_runs.csv`'s order.
    public var differingRuns: [RunPair] {
        matched.indices.flatMap { index in
            matched[index].seeds.indices.compactMap { ordinal in
                matched[index].baseline[ordinal].traceDigest
                    == matched[index].candidate[ordinal].traceDigest
                    ? nil : RunPair(matched: index, seedOrdinal: ordinal)
            }
        }
    }

    /// Whether every run of either sweep has a run of the other with the same variant, seed
    /// and trace digest: the candidate reproduces the baseline bit for bit.
    public var isIdentical: Bool {
        baselineOnly.isEmpty && candidateOnly.isEmpty && baselineOnlySeeds.isEmpty
            && candidateOnlySeeds.isEmpty && differingRuns.isEmpty
    }

    /// The statistics columns of `compare.csv`, after `variant`, the labels and `metric`.
    public static let differenceColumns = [
        "pairs", "mean_difference", "standard_deviation", "min", "p50", "max",
        "confidence_low95", "confidence_high95", "higher_in_candidate", "lower_in_candidate",
    ]

    /// `compare.csv`: per matched variant (`variant` is the candidate's) and per metric, the
    /// differences *candidate − baseline* seed by seed, as `sweep_paired.csv` has them.
    public func differencesText() -> String {
        var text = CSV.line(header + ["metric"] + Self.differenceColumns)
        let names = SweepCSV.metricNames(
            matched.flatMap {
                [
                    SweepVariant(labels: $0.labels, runs: $0.baseline),
                    SweepVariant(labels: $0.labels, runs: $0.candidate),
                ]
            })
        for entry in matched {
            for name in names {
                let pairs = SweepCSV.differences(of: name, entry.candidate, entry.baseline)
                text += CSV.line(
                    prefix(entry) + [MetricName.snakeCase(name)] + SweepCSV.pairedCells(pairs))
            }
        }
        return text
    }

    /// The columns of `compare_runs.csv`, after `variant` and the labels.
    public static let runColumns = [
        "seed", "baseline_run_id", "candidate_run_id", "baseline_trace_digest",
        "candidate_trace_digest", "identical",
    ]

    /// `compare_runs.csv`: one row per run pair, matched variants in the candidate's order and
    /// seeds in its order: where each run is, and whether they are the same run.
    public func runsText() -> String {
        var text = CSV.line(header + Self.runColumns)
        for entry in matched {
            for ordinal in entry.seeds.indices {
                let before = entry.baseline[ordinal].traceDigest
                let after = entry.candidate[ordinal].traceDigest
                text += CSV.line(
                    prefix(entry) + [
                        String(entry.seeds[ordinal]), String(entry.baselineRunIds[ordinal]),
                        String(entry.candidateRunIds[ordinal]), before, after,
                        before == after ? "1" : "0",
                    ])
            }
        }
        return text
    }

    private var header: [String] {
        ["variant"] + (matched.first?.labels.map(\.column) ?? [])
    }

    private func prefix(_ entry: Matched) -> [String] {
        [String(entry.candidateVariant)] + entry.labels.map(\.value)
    }

    /// `seeds A-B`, `seed A`, or `N seeds` for a list that is not a range.
    public static func range(_ seeds: [UInt64]) -> String {
        guard let first = seeds.first, let last = seeds.last else { return "no seeds" }
        let contiguous = seeds.indices.allSatisfy { seeds[$0] == first &+ UInt64($0) }
        if !contiguous { return "\(seeds.count) seeds" }
        return first == last ? "seed \(first)" : "seeds \(first)-\(last)"
    }
}
