//! A chart of one column of a timeline over simulated time, as a self-contained SVG file
//! (`syncsim export --timeline FILE --metric COLUMN`): a run's `timeline.csv` as one line, or a
//! sweep's `sweep_timeline.csv` as a line per variant (the mean over its seeds), with the
//! intervals where faults fired marked. The points are the file's numbers, drawn at each
//! interval's end, and the text is a function of the file and the options alone: the same
//! file gives the same bytes.

import Foundation

/// Reads a timeline file and draws one of its columns as SVG.
public enum TimelinePlot {
    /// One line of the chart: its legend and its points (seconds of simulated time, value).
    public struct Series: Sendable, Equatable {
        public var label: String
        public var times: [Double]
        public var values: [Double]
    }

    /// The faults (and `healing`) that fired in an interval, drawn at the interval's start
    /// (seconds of simulated time).
    public struct Mark: Sendable, Equatable {
        public var seconds: Double
        public var names: [String]
    }

    /// What a timeline file gives to draw one column.
    public struct Chart: Sendable, Equatable {
        /// The column, as the file names it (a sweep's with `_mean`).
        public var column: String
        /// Whether the file is a sweep's (`sweep_timeline.csv`): the lines are variants' means.
        public var isSweep: Bool
        /// The label columns of a sweep's variants (in each line's legend).
        public var labelColumns: [String]
        public var series: [Series]
        public var marks: [Mark]
    }

    /// The chart of `column` in the timeline text `text` (read from `path`, named in errors):
    /// a `timeline.csv` or a `sweep_timeline.csv`, whose columns may be named with or without
    /// `_mean`. With `from` and `to` (seconds; nil: no bound), only the rows whose interval
    /// ends after `from` and no later than `to` are kept, and the marks of intervals that start
    /// in `from ..< to`. With `variants`, a sweep's file gives only those variants' lines and
    /// marks (a run's file has no variants: asking for any is an error).
    /// - Throws: `notATimeline` when the text is neither file; `timelineColumnNotFound` when
    ///   the column is not one of its figures; `timelineVariantNotFound` when a variant asked
    ///   for is not in it.
    public static func chart(
        _ text: String, path: String, column: String, from: Double? = nil, to: Double? = nil,
        variants: [Int]? = nil
    ) throws(MeasurementError) -> Chart {
        guard let records = CSV.records(text), let header = records.first else {
            throw .notATimeline(path: path, reason: "it is empty, or not RFC 4180 CSV")
        }
        let isSweep: Bool
        let figures: Range<Int>
        let timeColumn: Int
        var labelColumns: Range<Int> = 0..<0
        if header.first == "end_ns" && header.last == "events" && header.count > 2 {
            (isSweep, timeColumn, figures) = (false, 0, 1..<(header.count - 1))
        } else if header.first == "variant", header.last == "events",
            let interval = header.firstIndex(of: "interval"),
            interval + 2 < header.count, header[interval + 1] == "runs",
            header[interval + 2] == "end_ns_mean"
        {
            (isSweep, timeColumn) = (true, interval + 2)
            figures = (interval + 3)..<(header.count - 1)
            labelColumns = 1..<interval
        } else {
            throw .notATimeline(
                path: path,
                reason:
                    "its header is neither timeline.csv's (end_ns, …, events) nor sweep_timeline.csv's (variant, …, interval, runs, end_ns_mean, …, events)"
            )
        }
        let names = Array(header[figures])
        guard
            let index = names.firstIndex(of: column)
                ?? (isSweep ? names.firstIndex(of: column + "_mean") : nil)
        else {
            throw .timelineColumnNotFound(path: path, column: column, available: names)
        }
        let valueColumn = figures.lowerBound + index
        var series: [Series] = []
        var variantOfSeries: [String] = []
        var marks: [Mark] = []
        // The end of the row before, of the same variant (a sweep's rows are variant by
        // variant); each variant's first interval starts at 0.
        var previousEnd = 0.0
        var variantsSeen: [String] = []
        for (offset, record) in records.dropFirst().enumerated() {
            let row = offset + 2  // the file's line number
            guard record.count == header.count else {
                throw .notATimeline(
                    path: path,
                    reason: "line \(row) has \(record.count) fields, the header \(header.count)")
            }
            func number(_ column: Int) throws(MeasurementError) -> Double {
                guard let value = Double(record[column]), value.isFinite else {
                    throw .notATimeline(
                        path: path,
                        reason:
                            "line \(row), column \(header[column]): '\(record[column])' is not a number"
                    )
                }
                return value
            }
            let variant = isSweep ? record[0] : ""
            if isSweep, let variants, !variants.contains(where: { String($0) == variant }) {
                if variantsSeen.last != variant { variantsSeen.append(variant) }
                continue
            }
            if variantsSeen.last != variant { variantsSeen.append(variant) }
            let end = try number(timeColumn) / 1e9
            let start = variantOfSeries.last == variant ? previousEnd : 0
            previousEnd = end
            if variantOfSeries.last != variant {
                let label =
                    isSweep
                    ? "\(variant): " + record[labelColumns].joined(separator: ", ") : column
                series.append(Series(label: label, times: [], values: []))
                variantOfSeries.append(variant)
            }
            if !record[header.count - 1].isEmpty, from.map({ start >= $0 }) ?? true,
                to.map({ start < $0 }) ?? true
            {
                let names = record[header.count - 1].split(separator: ";").map(String.init)
                if let same = marks.firstIndex(where: { $0.seconds == start }) {
                    for name in names where !marks[same].names.contains(name) {
                        marks[same].names.append(name)
                    }
                } else {
                    marks.append(Mark(seconds: start, names: names))
                }
            }
            // A sweep's variant without that cohort leaves the cell empty.
            if isSweep && record[valueColumn].isEmpty { continue }
            let value = try number(valueColumn)
            if let from, end <= from { continue }
            if let to, end > to { continue }
            series[series.count - 1].times.append(end)
            series[series.count - 1].values.append(value)
        }
        if let variants {
            for variant in variants where !isSweep || !variantsSeen.contains(String(variant)) {
                throw .timelineVariantNotFound(
                    path: path, variant: variant, available: isSweep ? variantsSeen : [])
            }
        }
        marks.sort { $0.seconds < $1.seconds }
        return Chart(
            column: names[index], isSweep: isSweep, labelColumns: Array(header[labelColumns]),
            series: series, marks: marks)
    }

    // The chart's geometry, in SVG user units.
    static let width = 880.0
    static let left = 90.0
    static let right = 30.0
    static let plotHeight = 320.0
    static let legendLine = 16.0
    static let colors = [
        "#3b6ea8", "#b22222", "#2e8b57", "#d2691e", "#6a5acd", "#008b8b", "#8b008b", "#556b2f",
    ]

    /// The SVG text of `chart`, headed by `title`.
    public static func svg(_ chart: Chart, title: String) -> String {
        let plotted = chart.series.filter { !$0.times.isEmpty }
        let subtitle =
            chart.isSweep
            ? "\(chart.column): each variant's mean over its seeds, per interval (drawn at its end)"
            : "\(chart.column), per interval (drawn at its end)"
        let legendTop = chart.isSweep && !chart.labelColumns.isEmpty ? 78.0 : 60.0
        let top = legendTop + Double(max(plotted.count, 1)) * legendLine + 20
        let bottom = top + plotHeight
        let height = bottom + 50
        let (number, escape, shortened) = (SweepPlot.number, SweepPlot.escape, SweepPlot.shortened)
        var svg = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(number(width))" height="\##(number(height))" viewBox="0 0 \##(number(width)) \##(number(height))" font-family="sans-serif" font-size="12">"##,
            ##"<rect width="100%" height="100%" fill="white"/>"##,
            ##"<text x="12" y="22" font-size="15" font-weight="bold">\##(escape(title))</text>"##,
            ##"<text x="12" y="42" fill="#444">\##(escape(shortened(subtitle, SweepPlot.lineCharacters)))</text>"##,
        ]
        if chart.isSweep && !chart.labelColumns.isEmpty {
            let line =
                "variants: " + chart.labelColumns.joined(separator: ", ") + " (in the legend)"
            svg.append(
                ##"<text x="12" y="58" fill="#444">\##(escape(shortened(line, SweepPlot.lineCharacters)))</text>"##
            )
        }
        let times = plotted.flatMap(\.times)
        let values = plotted.flatMap(\.values)
        guard let firstTime = times.min(), let lastTime = times.max() else {
            svg.append(
                ##"<text x="12" y="\##(number(top + 20))">\##(escape("no row of this file has a value of \(chart.column) in the window"))</text>"##
            )
            svg.append("</svg>")
            return svg.joined(separator: "\n") + "\n"
        }
        // Time in hours, minutes or seconds, whichever gives the span a few units at least.
        let span = lastTime - firstTime
        let (unit, unitName) =
            span >= 3 * 3_600 ? (3_600.0, "h") : span >= 3 * 60 ? (60.0, "min") : (1.0, "s")
        let timeScale = SweepPlot.Scale(
            values: [firstTime / unit, lastTime / unit], from: left, to: width - right,
            padded: false)
        let valueScale = SweepPlot.Scale(
            values: values + [0], from: bottom, to: top, padded: true)
        let x = { (seconds: Double) in timeScale.x(seconds / unit) }
        // Legend.
        for (index, line) in plotted.enumerated() {
            let y = legendTop + Double(index) * legendLine
            let color = colors[index % colors.count]
            svg.append(
                ##"<line x1="12" y1="\##(number(y - 4))" x2="36" y2="\##(number(y - 4))" stroke="\##(color)" stroke-width="2"/>"##
            )
            svg.append(
                ##"<text x="42" y="\##(number(y))"><title>\##(escape(line.label))</title>\##(escape(shortened(line.label, SweepPlot.lineCharacters - 4)))</text>"##
            )
        }
        // Grid, ticks and axes.
        for tick in valueScale.ticks {
            let y = number(valueScale.x(tick))
            svg.append(
                ##"<line x1="\##(number(left))" y1="\##(y)" x2="\##(number(width - right))" y2="\##(y)" stroke="#e4e4e4"/>"##
            )
            svg.append(
                ##"<text x="\##(number(left - 6))" y="\##(number(valueScale.x(tick) + 4))" text-anchor="end" fill="#444">\##(valueScale.label(tick))</text>"##
            )
        }
        for tick in timeScale.ticks {
            let tickX = number(timeScale.x(tick))
            svg.append(
                ##"<line x1="\##(tickX)" y1="\##(number(top))" x2="\##(tickX)" y2="\##(number(bottom))" stroke="#f0f0f0"/>"##
            )
            svg.append(
                ##"<text x="\##(tickX)" y="\##(number(bottom + 18))" text-anchor="middle" fill="#444">\##(timeScale.label(tick))</text>"##
            )
        }
        svg.append(
            ##"<line x1="\##(number(left))" y1="\##(number(bottom))" x2="\##(number(width - right))" y2="\##(number(bottom))" stroke="#888"/>"##
        )
        svg.append(
            ##"<line x1="\##(number(left))" y1="\##(number(top))" x2="\##(number(left))" y2="\##(number(bottom))" stroke="#888"/>"##
        )
        svg.append(
            ##"<text x="\##(number((left + width - right) / 2))" y="\##(number(bottom + 38))" text-anchor="middle" fill="#444">simulated time (\##(unitName))</text>"##
        )
        // The faults, at the start of the interval they fired in.
        for mark in chart.marks {
            let markX = x(mark.seconds)
            guard markX >= left, markX <= width - right else { continue }
            let names = mark.names.joined(separator: "; ")
            svg.append(
                ##"<line x1="\##(number(markX))" y1="\##(number(top))" x2="\##(number(markX))" y2="\##(number(bottom))" stroke="#999" stroke-dasharray="4 3"><title>\##(escape(names))</title></line>"##
            )
            svg.append(
                ##"<text x="\##(number(markX + 3))" y="\##(number(top + 10))" fill="#777" font-size="10">\##(escape(shortened(names, 40)))</text>"##
            )
        }
        // The lines.
        for (index, line) in plotted.enumerated() {
            let color = colors[index % colors.count]
            let points = zip(line.times, line.values).map { time, value in
                "\(number(x(time))),\(number(valueScale.x(value)))"
            }
            if points.count == 1 {
                svg.append(
                    ##"<circle cx="\##(number(x(line.times[0])))" cy="\##(number(valueScale.x(line.values[0])))" r="3" fill="\##(color)"/>"##
                )
            } else {
                svg.append(
                    ##"<polyline points="\##(points.joined(separator: " "))" fill="none" stroke="\##(color)" stroke-width="1.8"/>"##
                )
            }
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }
}
