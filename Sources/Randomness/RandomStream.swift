//! Seeded random streams backed by GSL.
//!
//! Every random decision in SyncSim draws from a `RandomStream`. A stream wraps one GSL
//! generator (`taus2`: small state, fixed and documented algorithm) seeded from the run's seed
//! and a stream identifier, so that each client and each subsystem has its own stream and adding
//! a client does not change the draws of the others. Swift's `random(in:)` is never used: its
//! algorithm may change between Swift versions.

import CGSL

/// Identifies one stream derived from a run's seed.
public struct StreamID: Hashable, Sendable {
    public var domain: UInt64
    public var index: UInt64
    public init(domain: UInt64, index: UInt64 = 0) {
        self.domain = domain
        self.index = index
    }
}

/// SplitMix64 finaliser: a fixed bijective mixing function used only to derive GSL seeds.
@inline(__always)
public func splitMix64(_ value: UInt64) -> UInt64 {
    var z = value &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// Turns GSL's abort-on-error handler off, once per process. GSL then reports errors through
/// return codes and NaN, which the wrappers check.
public enum GSLSetup {
    private static let done: Bool = {
        gsl_set_error_handler_off()
        return true
    }()
    @inline(__always) public static func ensure() { _ = done }
}

/// A seeded stream of random draws. Not `Sendable` on purpose: one world owns its streams.
public final class RandomStream {
    @usableFromInline let generator: UnsafeMutablePointer<gsl_rng>

    /// Creates the stream `id` of the run seeded with `seed`.
    public init(seed: UInt64, id: StreamID) {
        GSLSetup.ensure()
        guard let generator = gsl_rng_alloc(cgsl_rng_type_taus2()) else {
            preconditionFailure("gsl_rng_alloc failed: out of memory")
        }
        self.generator = generator
        var derived = splitMix64(
            seed ^ splitMix64(id.domain &* 0x1000_0000_01B3 ^ splitMix64(id.index)))
        // taus2 maps seed 0 to its default seed; keep derived seeds distinct and non-zero.
        derived = derived & 0xFFFF_FFFF == 0 ? derived | 1 : derived
        gsl_rng_set(generator, UInt(truncatingIfNeeded: derived))
    }

    deinit { gsl_rng_free(generator) }

    /// A uniform draw in [0, 1).
    @inlinable public func uniform() -> Double { gsl_rng_uniform(generator) }

    /// 32 uniformly random bits (taus2 produces exactly the range 0 ... 2^32-1).
    @inlinable public func next32() -> UInt32 { UInt32(truncatingIfNeeded: gsl_rng_get(generator)) }

    /// A uniform integer in `0 ..< bound`. `bound` must be in 1 ... 2^32.
    @inlinable public func uniformInt(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "uniformInt bound must be positive")
        precondition(bound <= 0xFFFF_FFFF, "uniformInt bound beyond the generator's range")
        return UInt64(gsl_rng_uniform_int(generator, UInt(bound)))
    }

    /// True with probability `numerator / denominator`, decided on integers.
    @inlinable public func chance(_ numerator: UInt64, outOf denominator: UInt64) -> Bool {
        precondition(denominator > 0, "chance denominator must be positive")
        precondition(numerator <= denominator, "chance numerator above denominator")
        if numerator == 0 { return false }
        if numerator == denominator { return true }
        return uniformInt(below: denominator) < numerator
    }

    /// An exponential draw with the given mean.
    @inlinable public func exponential(mean: Double) -> Double {
        precondition(mean > 0, "exponential mean must be positive")
        return gsl_ran_exponential(generator, mean)
    }

    /// A lognormal draw: `exp(N(zeta, sigma))`.
    @inlinable public func lognormal(zeta: Double, sigma: Double) -> Double {
        precondition(sigma >= 0, "lognormal sigma must not be negative")
        return gsl_ran_lognormal(generator, zeta, sigma)
    }

    /// The number of Bernoulli(p) trials up to and including the first success (≥ 1).
    @inlinable public func geometric(probability p: Double) -> UInt32 {
        precondition(p > 0 && p <= 1, "geometric probability must be in (0, 1]")
        return gsl_ran_geometric(generator, p)
    }

    /// A Poisson draw with mean `mu`.
    @inlinable public func poisson(mean mu: Double) -> UInt32 {
        precondition(mu >= 0, "poisson mean must not be negative")
        return gsl_ran_poisson(generator, mu)
    }

    /// A draw from a preprocessed discrete distribution (Walker's alias method in GSL).
    @inlinable public func discrete(_ table: DiscreteDistribution) -> Int {
        Int(gsl_ran_discrete(generator, table.table))
    }
}

/// A preprocessed discrete distribution over `0 ..< weights.count` (GSL `gsl_ran_discrete`).
public final class DiscreteDistribution: @unchecked Sendable {
    // Immutable after init; GSL only reads the table when sampling.
    @usableFromInline let table: UnsafeMutablePointer<gsl_ran_discrete_t>
    public let count: Int

    public init(weights: [Double]) {
        GSLSetup.ensure()
        precondition(!weights.isEmpty, "a discrete distribution needs at least one weight")
        precondition(
            weights.allSatisfy { $0 >= 0 && $0.isFinite }, "weights must be finite and >= 0")
        guard let table = gsl_ran_discrete_preproc(weights.count, weights) else {
            preconditionFailure("gsl_ran_discrete_preproc failed")
        }
        self.table = table
        self.count = weights.count
    }

    /// Zipf over `count` ranks with exponent `s`: P(k) ∝ 1 / (k + 1)^s.
    public static func zipf(count: Int, exponent s: Double) -> DiscreteDistribution {
        precondition(count > 0, "zipf needs at least one rank")
        var weights = [Double]()
        weights.reserveCapacity(count)
        for rank in 0..<count { weights.append(1.0 / pow(Double(rank + 1), s)) }
        return DiscreteDistribution(weights: weights)
    }

    deinit { gsl_ran_discrete_free(table) }
}
