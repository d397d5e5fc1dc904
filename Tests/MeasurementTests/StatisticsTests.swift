import Foundation
import Testing

@testable import Measurement

@Suite struct StatisticsTests {
    @Test func studentTQuantileMatchesTables() {
        #expect(tQuantile975(degreesOfFreedom: 9) == 2.2621571627982053)
        #expect(abs(tQuantile975(degreesOfFreedom: 1) - 12.706204736174698) < 1e-12)
    }

    @Test func summaryOfOneToTen() {
        let summary = Summary.of((1...10).map(Double.init))
        #expect(summary.count == 10)
        #expect(summary.mean == 5.5)
        #expect(abs(summary.standardDeviation - 3.0276503540974917) < 1e-12)
        #expect(summary.min == 1)
        #expect(summary.max == 10)
        #expect(summary.p50 == 5.5)
        #expect(abs(summary.p95 - 9.55) < 1e-12)
        #expect(abs(summary.p99 - 9.91) < 1e-12)
        let halfWidth = 2.2621571627982053 * summary.standardDeviation / 10.0.squareRoot()
        #expect(abs(summary.confidenceHalfWidth95 - halfWidth) < 1e-12)
        #expect(abs(summary.confidenceLow95 - (5.5 - halfWidth)) < 1e-12)
    }

    @Test func summaryIgnoresInputOrderForOrderStatistics() {
        let shuffled: [UInt64] = [9, 3, 7, 1, 5]
        let summary = Summary.of(shuffled)
        #expect(summary.min == 1)
        #expect(summary.p50 == 5)
        #expect(summary.max == 9)
    }

    @Test func emptyAndSingleSamplesHaveNoNaN() {
        let empty = Summary.of([Double]())
        #expect(empty == Summary(
            count: 0, mean: 0, standardDeviation: 0, min: 0, p50: 0, p95: 0, p99: 0, max: 0,
            confidenceHalfWidth95: 0))
        let single = Summary.of([4.25])
        #expect(single == Summary(
            count: 1, mean: 4.25, standardDeviation: 0, min: 4.25, p50: 4.25, p95: 4.25,
            p99: 4.25, max: 4.25, confidenceHalfWidth95: 0))
        for metric in single.metrics(base: "latencyNs") {
            if case .real(let value) = metric.value { #expect(value.isFinite) }
        }
    }

    @Test func summaryMetricsAreNamedWithTheBaseFirst() {
        let names = Summary.of([1.0, 2.0]).metrics(base: "latencyNs").map(\.name)
        #expect(names == [
            "latencyNsCount", "latencyNsMean", "latencyNsStandardDeviation", "latencyNsMin",
            "latencyNsP50", "latencyNsP95", "latencyNsP99", "latencyNsMax",
            "latencyNsConfidenceLow95", "latencyNsConfidenceHigh95",
        ])
    }

    @Test func logLogFitRecoversTheGrowthExponent() throws {
        let xs: [Double] = [1, 2, 4, 8, 16, 32]
        let ys = xs.map { 3 * pow($0, 1.5) }
        let fit = try #require(LinearFit.logLog(xs, ys))
        #expect(abs(fit.slope - 1.5) < 1e-12)
        #expect(abs(fit.intercept - log(3)) < 1e-12)
        #expect(fit.pointsCount == 6)
        #expect(fit.residualSumOfSquares < 1e-20)
    }

    @Test func degenerateFitsAreNil() {
        #expect(LinearFit.logLog([], []) == nil)
        #expect(LinearFit.logLog([2], [3]) == nil)
        #expect(LinearFit.logLog([2, 2, 2], [1, 2, 3]) == nil)
        #expect(LinearFit.logLog([0, 1, 2], [1, 2, 3]) == nil)
        #expect(LinearFit.logLog([1, 2, 3], [1, -2, 3]) == nil)
        #expect(LinearFit.linear([1, 2], [3, 5])?.slope == 2)
    }
}
