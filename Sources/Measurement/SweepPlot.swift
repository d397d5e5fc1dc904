//! A chart of one metric of a sweep, as a self-contained SVG file (`syncsim export --format
//! svg`): a row per variant with every seed's value as a dot, the mean and its 95 %
//! confidence interval; or, paired, each variant's difference from variant 0 seed by seed,
//! against a zero line. The numbers are those of `sweep.csv` and `sweep_paired.csv` (the same
//! `Summary`), and the text is a function of them alone: the same sweep gives the same bytes.

import Foundation

/// Draws one metric of a sweep as SVG.
public enum SweepPlot {
    /// The chart's geometry, in SVG user units.
    static let width = 880.0
    static let labelWidth = 330.0
    static let rightMargin = 30.0
    static let top = 80.0
    /// The characters of a row's title that fit beside the chart (the whole title is its
    /// tooltip), and of the variants line.
    static let titleCharacters = 46
    static let lineCharacters = 125
    static let rowHeight = 40.0
    static let bottom = 48.0

    /// One row: a title, the values drawn as dots, and their summary.
    struct Row {
        var title: String
        var values: [Double]
        var summary: Summary?
    }

    /// The SVG text of metric `name` (lowerCamelCase) over `variants`: per variant, or with
    /// `paired`, per variant after the first, its difference from variant 0 seed by seed.
    /// `title` heads the chart.
    public static func svg(
        _ variants: [SweepVariant], metric name: String, paired: Bool, title: String
    ) -> String {
        let columns = variants.first?.labels.map(\.column) ?? []
        let rows: [Row] = variants.enumerated().compactMap { ordinal, variant in
            if paired && ordinal == 0 { return nil }
            let values =
                paired
                ? SweepCSV.differences(of: name, variant.runs, variants[0].runs)
                : SweepCSV.values(of: name, in: variant.runs)
            let label = variant.labels.map(\.value).joined(separator: ", ")
            return Row(
                title: "\(ordinal): \(label)" + (paired ? " − 0" : ""), values: values,
                summary: values.isEmpty ? nil : Summary.of(values))
        }
        let metric = MetricName.snakeCase(name)
        let subtitle =
            (paired
                ? "\(metric), each variant minus variant 0, seed by seed"
                : "\(metric), per seed") + "; mean and 95 % confidence interval"
        let variantLine =
            columns.isEmpty
            ? "" : "variants: " + columns.joined(separator: ", ") + " (in each row's title)"
        let height = top + Double(max(rows.count, 1)) * rowHeight + bottom
        var svg = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(number(width))" height="\##(number(height))" viewBox="0 0 \##(number(width)) \##(number(height))" font-family="sans-serif" font-size="12">"##,
            ##"<rect width="100%" height="100%" fill="white"/>"##,
            ##"<text x="12" y="22" font-size="15" font-weight="bold">\##(escape(title))</text>"##,
            ##"<text x="12" y="42" fill="#444">\##(escape(subtitle))</text>"##,
            ##"<text x="12" y="60" fill="#444">\##(escape(shortened(variantLine, to: lineCharacters)))</text>"##,
        ]
        // Finite all: `Summary.of` takes finite values only, and metrics are finite.
        let all = rows.flatMap { row in
            row.values + (row.summary.map { [$0.confidenceLow95, $0.confidenceHigh95] } ?? [])
        }
        if all.isEmpty {
            let note =
                paired && variants.count < 2
                ? "one variant: nothing to pair" : "no run of this sweep has \(metric)"
            svg.append(##"<text x="12" y="\##(number(top + 20))">\##(escape(note))</text>"##)
            svg.append("</svg>")
            return svg.joined(separator: "\n") + "\n"
        }
        let scale = Scale(
            values: all + (paired ? [0] : []), from: labelWidth,
            to: width - rightMargin)
        let axis = top + Double(rows.count) * rowHeight
        // Ticks and grid lines.
        for tick in scale.ticks {
            let x = number(scale.x(tick))
            svg.append(
                ##"<line x1="\##(x)" y1="\##(number(top))" x2="\##(x)" y2="\##(number(axis))" stroke="#e4e4e4"/>"##
            )
            svg.append(
                ##"<text x="\##(x)" y="\##(number(axis + 18))" text-anchor="middle" fill="#444">\##(scale.label(tick))</text>"##
            )
        }
        svg.append(
            ##"<line x1="\##(number(labelWidth))" y1="\##(number(axis))" x2="\##(number(width - rightMargin))" y2="\##(number(axis))" stroke="#888"/>"##
        )
        if paired {
            let zero = number(scale.x(0))
            svg.append(
                ##"<line x1="\##(zero)" y1="\##(number(top))" x2="\##(zero)" y2="\##(number(axis))" stroke="#555" stroke-dasharray="4 3"/>"##
            )
        }
        for (index, row) in rows.enumerated() {
            let center = top + (Double(index) + 0.5) * rowHeight
            svg.append(
                ##"<text x="12" y="\##(number(center - 3))"><title>\##(escape(row.title))</title>\##(escape(shortened(row.title, to: titleCharacters)))</text>"##
            )
            if let summary = row.summary {
                // One seed has no interval (sweep.csv gives it a width of 0). The row's figures
                // resolve its own interval, which may be far narrower than the axis' step.
                let extra = scale.extraDecimals(
                    resolving: (summary.confidenceHigh95 - summary.confidenceLow95) / 2)
                let interval =
                    summary.count >= 2
                    ? " [\(scale.label(summary.confidenceLow95, extra: extra)), "
                        + "\(scale.label(summary.confidenceHigh95, extra: extra))]" : ""
                let text =
                    "mean \(scale.label(summary.mean, extra: extra))\(interval), n = \(summary.count)"
                svg.append(
                    ##"<text x="12" y="\##(number(center + 12))" fill="#555" font-size="11">\##(escape(text))</text>"##
                )
            }
            // The seeds, spread over five lanes in seed order so that equal values stay visible.
            for (seed, value) in row.values.enumerated() {
                let y = center + Double(seed % 5 - 2) * 3
                svg.append(
                    ##"<circle cx="\##(number(scale.x(value)))" cy="\##(number(y))" r="2.5" fill="#3b6ea8" fill-opacity="0.45"/>"##
                )
            }
            guard let summary = row.summary else { continue }
            let y = number(center)
            if summary.count >= 2 {  // one seed has no interval
                let (low, high) = (
                    number(scale.x(summary.confidenceLow95)),
                    number(scale.x(summary.confidenceHigh95))
                )
                let (capTop, capBottom) = (number(center - 8), number(center + 8))
                svg.append(
                    ##"<line x1="\##(low)" y1="\##(y)" x2="\##(high)" y2="\##(y)" stroke="#b22" stroke-width="2"/>"##
                )
                svg.append(
                    ##"<line x1="\##(low)" y1="\##(capTop)" x2="\##(low)" y2="\##(capBottom)" stroke="#b22" stroke-width="2"/>"##
                )
                svg.append(
                    ##"<line x1="\##(high)" y1="\##(capTop)" x2="\##(high)" y2="\##(capBottom)" stroke="#b22" stroke-width="2"/>"##
                )
            }
            let mean = scale.x(summary.mean)
            svg.append(
                ##"<rect x="\##(number(mean - 4))" y="\##(number(center - 4))" width="8" height="8" fill="#b22" transform="rotate(45 \##(number(mean)) \##(y))"/>"##
            )
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// A linear map from values to x, over a padded domain with round ticks.
    struct Scale {
        var low: Double
        var high: Double
        var step: Double
        var from: Double
        var to: Double

        /// `padded`: the domain reaches 5 % beyond the values on each side (else it ends at
        /// them, unless they are all equal).
        init(values: [Double], from: Double, to: Double, padded: Bool = true) {
            var low = values.min()!
            var high = values.max()!
            if low == high {
                let spread = Swift.max(abs(low) * 0.1, 1)
                (low, high) = (low - spread, high + spread)
            }
            let padding = padded ? (high - low) * 0.05 : 0
            (low, high) = (low - padding, high + padding)
            // A step of 1, 2 or 5 times a power of ten, for about five ticks.
            let raw = (high - low) / 5
            let power = pow(10, (log10(raw)).rounded(.down))
            let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
            (self.low, self.high, self.step, self.from, self.to) = (low, high, step, from, to)
        }

        func x(_ value: Double) -> Double { from + (value - low) / (high - low) * (to - from) }

        var ticks: [Double] {
            var ticks = [Double]()
            var tick = (low / step).rounded(.up) * step
            while tick <= high && ticks.count < 50 {
                ticks.append(abs(tick) < step * 1e-9 ? 0 : tick)
                tick += step
            }
            return ticks
        }

        /// Decimals a tick label shows.
        var decimals: Int { Swift.max(0, -Int((log10(step)).rounded(.down))) }

        /// Decimals beyond the ticks' for a figure whose interval has this half-width: one
        /// more than the ticks', or enough for two significant digits of the half-width when
        /// it is narrower than that shows (at most six decimals in all).
        func extraDecimals(resolving halfWidth: Double) -> Int {
            guard halfWidth > 0, halfWidth.isFinite else { return 1 }
            let needed = Swift.min(6, -Int((log10(halfWidth)).rounded(.down)) + 1)
            return Swift.max(1, needed - decimals)
        }

        /// `value` with as many decimals as the step needs (plus `extra`), with thousands
        /// separated by commas.
        func label(_ value: Double, extra: Int = 0) -> String {
            let decimals = decimals + extra
            let text = String(format: "%.\(decimals)f", value)
            return Self.groupThousands(text)
        }

        static func groupThousands(_ text: String) -> String {
            let negative = text.hasPrefix("-")
            let body = negative ? String(text.dropFirst()) : text
            let parts = body.split(separator: ".", maxSplits: 1)
            var digits = Array(parts[0])
            var grouped = ""
            while digits.count > 3 {
                grouped = "," + String(digits.suffix(3)) + grouped
                digits.removeLast(3)
            }
            grouped = String(digits) + grouped
            let sign = negative && body.contains(where: { $0 != "0" && $0 != "." }) ? "-" : ""
            return sign + grouped + (parts.count > 1 ? "." + parts[1] : "")
        }
    }

    /// `text`, or its first `count - 1` characters and an ellipsis.
    static func shortened(_ text: String, to count: Int) -> String {
        text.count <= count ? text : String(text.prefix(count - 1)) + "…"
    }

    /// A coordinate with two decimals.
    static func number(_ value: Double) -> String { String(format: "%.2f", value) }

    /// `text` safe inside an XML element.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
            of: "<", with: "&lt;"
        )
        .replacingOccurrences(of: ">", with: "&gt;")
    }
}
