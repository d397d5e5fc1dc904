import Foundation
import Testing

@testable import Measurement

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `SweepPlot` on made-up sweeps: escaping, round axes, and the charts with nothing to draw.
@Suite struct SweepPlotTests {
    /// Whether `svg` is well-formed XML.
    static func wellFormed(_ svg: String) -> Bool { XMLParser(data: Data(svg.utf8)).parse() }

    @Test func labelsAreEscapedAndAxesRound() {
        var run = sampleRun(seed: 1)
        run.metrics = [.integer("writesMade", 12_345)]
        var other = sampleRun(seed: 2)
        other.metrics = [.integer("writesMade", 23_456)]
        let variants = [
            SweepVariant(
                labels: [SweepLabel(column: "note", value: "a<b & \"c\"")], runs: [run, other])
        ]
        let svg = SweepPlot.svg(variants, metric: "writesMade", paired: false, title: "t & u")
        #expect(Self.wellFormed(svg))
        #expect(svg.contains("a&lt;b &amp; \"c\"") && svg.contains("t &amp; u"))
        // Two seeds: the 95 % interval (t with one degree of freedom) spans about ±70,600
        // around the mean, so the axis steps by 50,000; the mean takes one decimal more.
        #expect(svg.contains(">50,000<") && svg.contains(">-50,000<"))
        let summary = Summary.of([12_345.0, 23_456.0])
        let bound = { (value: Double) in
            SweepPlot.Scale.groupThousands(String(format: "%.1f", value))
        }
        #expect(
            svg.contains(
                "mean 17,900.5 [\(bound(summary.confidenceLow95)), "
                    + "\(bound(summary.confidenceHigh95))], n = 2"))
        #expect(summary.confidenceLow95 < -50_000 && summary.confidenceHigh95 > 50_000)
        let single = [SweepVariant(labels: variants[0].labels, runs: [run])]
        let oneSeed = SweepPlot.svg(single, metric: "writesMade", paired: false, title: "t")
        #expect(oneSeed.contains("mean 12,345.0, n = 1") && !oneSeed.contains("nan"))
        let one = SweepPlot.svg(variants, metric: "writesMade", paired: true, title: "t")
        #expect(one.contains("one variant: nothing to pair"))
        #expect(SweepPlot.Scale.groupThousands("-1234567.50") == "-1,234,567.50")
        #expect(SweepPlot.Scale.groupThousands("-0.00") == "0.00")
        let scale = SweepPlot.Scale(values: [0.013, 0.087], from: 0, to: 100)
        #expect(scale.ticks.allSatisfy { ($0 / scale.step).rounded() * scale.step == $0 })
        #expect(scale.ticks.count >= 3 && scale.ticks.count <= 11)
    }

    /// A row's mean and interval resolve the row's own interval, not only the axis' step: a
    /// variant at 0.120 [0.103, 0.137] on an axis stepping by 1 reads so, not 0.1 [0.1, 0.1].
    @Test func aNarrowIntervalKeepsItsDigits() {
        let scale = SweepPlot.Scale(values: [0, 4.2], from: 0, to: 100)
        #expect(scale.step == 1 && scale.decimals == 0)
        let extra = scale.extraDecimals(resolving: 0.017)
        #expect(scale.label(0.1204, extra: extra) == "0.120")
        #expect(scale.label(0.1034, extra: extra) == "0.103")
        // Wide intervals keep the one decimal beyond the ticks; none is 0 wide or NaN.
        #expect(scale.extraDecimals(resolving: 5) == 1)
        #expect(scale.extraDecimals(resolving: 0.5) == 2)
        #expect(scale.extraDecimals(resolving: 0) == 1)
        #expect(scale.extraDecimals(resolving: .nan) == 1)
        let wide = SweepPlot.Scale(values: [4_000, 68_000], from: 0, to: 100)
        #expect(wide.extraDecimals(resolving: 1_091) == 1)
        #expect(wide.label(66_799.63, extra: 1) == "66,799.6")
        // At most six decimals in all.
        #expect(scale.extraDecimals(resolving: 1e-12) == 6)
    }
}
