//! Summaries of samples and growth-exponent fits, computed with GSL.
//!
//! Results depend on the order of the input only through floating-point rounding of the mean and
//! standard deviation; callers pass samples in a fixed order (by client index, by event order) so
//! that the figures, and the CSV made from them, are byte-identical from run to run.

import CGSL
import Randomness
import Foundation

/// Count, mean, spread, order statistics and a 95 % confidence interval of the mean.
///
/// Edge cases, chosen so that no NaN reaches a CSV file:
/// - no values: `count` is 0 and every other figure is 0 (read `count` before the rest);
/// - one value: every figure is that value, `standardDeviation` is 0 and the confidence
///   interval has half-width 0 (the interval is undefined for fewer than two values).
public struct Summary: Sendable, Equatable {
    public var count: UInt64
    public var mean: Double
    /// Sample standard deviation (divisor n − 1).
    public var standardDeviation: Double
    public var min: Double
    /// Median. Percentiles interpolate linearly between order statistics
    /// (`gsl_stats_quantile_from_sorted_data`, the same as R's type 7).
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
    /// Half-width of the 95 % confidence interval of the mean:
    /// `t(0.975, n − 1) · standardDeviation / √n` (Student's t, `gsl_cdf_tdist_Pinv`).
    public var confidenceHalfWidth95: Double

    /// Lower end of the 95 % confidence interval of the mean.
    public var confidenceLow95: Double { mean - confidenceHalfWidth95 }
    /// Upper end of the 95 % confidence interval of the mean.
    public var confidenceHigh95: Double { mean + confidenceHalfWidth95 }

    public init(
        count: UInt64, mean: Double, standardDeviation: Double, min: Double, p50: Double,
        p95: Double, p99: Double, max: Double, confidenceHalfWidth95: Double
    ) {
        self.count = count
        self.mean = mean
        self.standardDeviation = standardDeviation
        self.min = min
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
        self.max = max
        self.confidenceHalfWidth95 = confidenceHalfWidth95
    }

    /// The summary of `values`, which must all be finite.
    /// - Complexity: O(n log n) (one sort of a copy).
    public static func of(_ values: [Double]) -> Summary {
        precondition(values.allSatisfy(\.isFinite), "Summary.of needs finite values")
        let count = values.count
        if count == 0 {
            return Summary(
                count: 0, mean: 0, standardDeviation: 0, min: 0, p50: 0, p95: 0, p99: 0, max: 0,
                confidenceHalfWidth95: 0)
        }
        GSLSetup.ensure()
        var sorted = values
        sorted.withUnsafeMutableBufferPointer { buffer in
            gsl_sort(buffer.baseAddress, 1, buffer.count)
        }
        let mean = gsl_stats_mean(values, 1, count)
        let standardDeviation = count < 2 ? 0 : gsl_stats_sd_m(values, 1, count, mean)
        let halfWidth = count < 2 ? 0 : tQuantile975(degreesOfFreedom: count - 1)
            * standardDeviation / Double(count).squareRoot()
        let summary = Summary(
            count: UInt64(count), mean: mean, standardDeviation: standardDeviation,
            min: sorted[0],
            p50: gsl_stats_quantile_from_sorted_data(sorted, 1, count, 0.50),
            p95: gsl_stats_quantile_from_sorted_data(sorted, 1, count, 0.95),
            p99: gsl_stats_quantile_from_sorted_data(sorted, 1, count, 0.99),
            max: sorted[count - 1], confidenceHalfWidth95: halfWidth)
        precondition(summary.min <= summary.p50 && summary.p50 <= summary.max, "unsorted summary")
        return summary
    }

    /// The summary of integer samples (nanoseconds, bytes), converted to `Double`.
    public static func of(_ values: [UInt64]) -> Summary {
        of(values.map { Double($0) })
    }

    /// The summary as metrics named `<base>Count`, `<base>Mean`, `<base>StandardDeviation`,
    /// `<base>Min`, `<base>P50`, `<base>P95`, `<base>P99`, `<base>Max`,
    /// `<base>ConfidenceLow95`, `<base>ConfidenceHigh95`, in that order. `Count` is an integer;
    /// the others are reals. `base` carries the unit, e.g. `latencyNs`.
    public func metrics(base: String) -> [Metric] {
        [
            .integer(base + "Count", Int64(count)),
            .real(base + "Mean", mean),
            .real(base + "StandardDeviation", standardDeviation),
            .real(base + "Min", min),
            .real(base + "P50", p50),
            .real(base + "P95", p95),
            .real(base + "P99", p99),
            .real(base + "Max", max),
            .real(base + "ConfidenceLow95", confidenceLow95),
            .real(base + "ConfidenceHigh95", confidenceHigh95),
        ]
    }
}

/// The 0.975 quantile of Student's t distribution with `degreesOfFreedom` (≥ 1) degrees.
func tQuantile975(degreesOfFreedom: Int) -> Double {
    precondition(degreesOfFreedom >= 1, "t quantile needs at least one degree of freedom")
    GSLSetup.ensure()
    let quantile = gsl_cdf_tdist_Pinv(0.975, Double(degreesOfFreedom))
    precondition(quantile.isFinite, "gsl_cdf_tdist_Pinv returned a non-finite value")
    return quantile
}

/// A least-squares line `y = intercept + slope · x` (`gsl_fit_linear`).
public struct LinearFit: Sendable, Equatable {
    public var slope: Double
    public var intercept: Double
    /// Number of points fitted.
    public var pointsCount: UInt64
    /// Sum of squared residuals, in the (possibly logarithmic) units of the fit.
    public var residualSumOfSquares: Double

    public init(slope: Double, intercept: Double, pointsCount: UInt64, residualSumOfSquares: Double) {
        self.slope = slope
        self.intercept = intercept
        self.pointsCount = pointsCount
        self.residualSumOfSquares = residualSumOfSquares
    }

    /// Fits `ln y = intercept + slope · ln x`: `slope` is the growth exponent of
    /// `y ≈ e^intercept · x^slope` (for `y = 3·x^1.5`, slope 1.5 and intercept ln 3).
    ///
    /// - Returns: nil when there are fewer than two points, when some value is not finite and
    ///   positive (its logarithm is undefined), or when all `xs` are equal (no slope).
    public static func logLog(_ xs: [Double], _ ys: [Double]) -> LinearFit? {
        precondition(xs.count == ys.count, "logLog needs as many xs as ys")
        let positive = { (value: Double) in value.isFinite && value > 0 }
        guard xs.allSatisfy(positive), ys.allSatisfy(positive) else { return nil }
        return linear(xs.map { log($0) }, ys.map { log($0) })
    }

    /// Fits `y = intercept + slope · x`.
    ///
    /// - Returns: nil when there are fewer than two points, when a value is not finite, or when
    ///   all `xs` are equal.
    public static func linear(_ xs: [Double], _ ys: [Double]) -> LinearFit? {
        precondition(xs.count == ys.count, "linear fit needs as many xs as ys")
        guard xs.count >= 2, xs.allSatisfy(\.isFinite), ys.allSatisfy(\.isFinite) else {
            return nil
        }
        guard xs.contains(where: { $0 != xs[0] }) else { return nil }
        GSLSetup.ensure()
        var intercept = 0.0
        var slope = 0.0
        var covariance00 = 0.0
        var covariance01 = 0.0
        var covariance11 = 0.0
        var residualSumOfSquares = 0.0
        let status = gsl_fit_linear(
            xs, 1, ys, 1, xs.count, &intercept, &slope,
            &covariance00, &covariance01, &covariance11, &residualSumOfSquares)
        guard status == GSL_SUCCESS, slope.isFinite, intercept.isFinite else { return nil }
        return LinearFit(
            slope: slope, intercept: intercept, pointsCount: UInt64(xs.count),
            residualSumOfSquares: residualSumOfSquares)
    }
}
