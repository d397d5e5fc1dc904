//! `sweep --timeline I`: every run's timeline (`timelines/variant-V-seed-S.csv`, as
//! `run --timeline I` writes it) and `sweep_timeline.csv`, the variants' timelines averaged
//! over their seeds interval by interval: the shape of a reset storm across seeds.

import Measurement
import Simulation

enum SweepTimeline {
    /// One run's timeline file, relative to the sweep's results directory.
    static func file(variant: Int, seed: UInt64) -> String {
        "timelines/variant-\(variant)-seed-\(seed).csv"
    }

    /// The samples of a timeline file as `RunCommand.timelineText` writes it (with or without
    /// cohort columns), or nil when the text is not one (another header, or a malformed row).
    static func parse(_ text: String) -> [TimelineSample]? {
        guard let records = CSV.records(text), let first = records.first else { return nil }
        let perCohort = CohortTimelineFigures.columns.count
        let cohortColumns = first.count - 2 - TimelineSample.figureColumns.count
        guard cohortColumns >= 0, cohortColumns % perCohort == 0 else { return nil }
        let cohorts = cohortColumns / perCohort
        let header = ["end_ns"] + TimelineSample.columns(cohorts: cohorts) + ["events"]
        guard first == header else { return nil }
        let fixed = TimelineSample.figureColumns.count
        var samples: [TimelineSample] = []
        for cells in records.dropFirst() {
            guard cells.count == header.count else { return nil }
            var numbers: [UInt64] = []
            for cell in cells.dropLast() {
                guard let number = UInt64(cell) else { return nil }
                numbers.append(number)
            }
            var sample = TimelineSample(endNs: numbers[0])
            sample.figures = Array(numbers[1...fixed])
            sample.cohorts = (0..<cohorts).map { index in
                var figures = CohortTimelineFigures()
                let from = 1 + fixed + index * perCohort
                figures.figures = Array(numbers[from..<(from + perCohort)])
                return figures
            }
            sample.events =
                cells.last!.isEmpty ? [] : cells.last!.split(separator: ";").map(String.init)
            samples.append(sample)
        }
        return samples
    }

    /// `sweep_timeline.csv`: per variant (in order) and interval (`interval` from 0; the last
    /// is the rest of the run), the variant's label columns, `runs` (seeds with that row),
    /// the mean over them of `end_ns` and of every figure (`<column>_mean`, six decimals), and
    /// `events`: the events any of them had in it, in order of first appearance.
    /// `timelines[v]` holds variant `v`'s runs' timelines in seed order. The cohort columns
    /// are those of the variant with the most cohorts; a variant with fewer leaves the others
    /// empty.
    static func text(labels: [[SweepLabel]], timelines: [[[TimelineSample]]]) -> String {
        let labelColumns = labels.first?.map(\.column) ?? []
        let cohorts = timelines.joined().compactMap { $0.first?.cohorts.count }.max() ?? 0
        let columns = TimelineSample.columns(cohorts: cohorts)
        var text = CSV.line(
            ["variant"] + labelColumns + ["interval", "runs", "end_ns_mean"]
                + columns.map { $0 + "_mean" } + ["events"])
        for (variant, runs) in timelines.enumerated() {
            let rows = runs.map(\.count).max() ?? 0
            for interval in 0..<rows {
                let samples = runs.compactMap { interval < $0.count ? $0[interval] : nil }
                // Means from `Summary` (GSL), as sweep.csv's.
                let mean = { (values: [UInt64]) in CSV.real(Summary.of(values).mean) }
                let figures = samples.map(\.allFigures)
                var events: [String] = []
                for sample in samples {
                    for event in sample.events where !events.contains(event) {
                        events.append(event)
                    }
                }
                text += CSV.line(
                    [String(variant)] + labels[variant].map(\.value)
                        + [String(interval), String(samples.count), mean(samples.map(\.endNs))]
                        + columns.indices.map { column in
                            // A variant's runs share its cohorts: all or none have the column.
                            figures.allSatisfy { column < $0.count }
                                ? mean(figures.map { $0[column] }) : ""
                        } + [events.joined(separator: ";")])
            }
        }
        return text
    }
}
