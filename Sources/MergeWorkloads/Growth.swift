//! The growth exponent of merge time: the least-squares slope of log(time) on log(size).

/// A fitted power law `time ≈ c · size^exponent`.
public struct GrowthFit: Sendable, Hashable {
    public var exponent: Double
    public var points: [GrowthPoint]
}

public struct GrowthPoint: Sendable, Hashable {
    public var instructions: Int
    public var mergeCpuNs: UInt64

    public init(instructions: Int, mergeCpuNs: UInt64) {
        self.instructions = instructions
        self.mergeCpuNs = mergeCpuNs
    }
}

public enum Growth {
    /// The least-squares slope of `log(mergeCpuNs)` on `log(instructions)`.
    ///
    /// - Precondition: at least two points with distinct sizes and positive times.
    /// - Complexity: O(points).
    public static func fit(_ points: [GrowthPoint]) -> GrowthFit {
        precondition(points.count >= 2, "a slope needs two points")
        precondition(points.allSatisfy { $0.instructions > 0 && $0.mergeCpuNs > 0 },
                     "sizes and times must be positive")
        let xs = points.map { logarithm(Double($0.instructions)) }
        let ys = points.map { logarithm(Double($0.mergeCpuNs)) }
        let count = Double(points.count)
        let meanX = xs.reduce(0, +) / count
        let meanY = ys.reduce(0, +) / count
        var covariance = 0.0
        var variance = 0.0
        for index in points.indices {
            covariance += (xs[index] - meanX) * (ys[index] - meanY)
            variance += (xs[index] - meanX) * (xs[index] - meanX)
        }
        precondition(variance > 0, "sizes must differ")
        return GrowthFit(exponent: covariance / variance, points: points)
    }

    /// Natural logarithm without Foundation: log2 from the exponent plus a series for the
    /// mantissa (accurate to ~1e-12, ample for a fitted slope).
    static func logarithm(_ x: Double) -> Double {
        precondition(x > 0, "logarithm of a non-positive number")
        let exponent = Double(x.exponent)
        let mantissa = x.significand  // in [1, 2)
        // ln(m) = 2·atanh((m − 1)/(m + 1)).
        let t = (mantissa - 1) / (mantissa + 1)
        let t2 = t * t
        var term = t
        var sum = 0.0
        var k = 1.0
        while k < 60 {
            sum += term / k
            term *= t2
            k += 2
        }
        return 2 * sum + exponent * 0.693_147_180_559_945_3
    }
}

extension MergeBenchmark {
    /// Runs the workload at each size and fits the growth exponent of the merge's CPU time.
    ///
    /// - Throws: `MergeBenchmarkError` if a merge or an apply fails.
    public static func growth(_ parameters: WorkloadParameters, role: MergeRole,
                              sizes: [Int]) throws(MergeBenchmarkError) -> GrowthFit
    {
        var points = [GrowthPoint]()
        for size in sizes {
            var sized = parameters
            sized.instructions = size
            sized.localInstructions = size
            let measurement = try run(MergeInputs.generate(sized, role: role))
            points.append(GrowthPoint(instructions: measurement.instructionsMerged,
                                      mergeCpuNs: max(measurement.mergeCpuNs, 1)))
        }
        return Growth.fit(points)
    }
}
