//! Simulated time. Simulated code never reads a wall clock: the world owns one `now`, in
//! integer nanoseconds since the start of the run, and every model receives it as an argument.

/// Nanoseconds per unit, for conversions at the edges (scenario fields are in seconds or ms).
public enum Time {
    public static let nanosecondsPerMillisecond: UInt64 = 1_000_000
    public static let nanosecondsPerSecond: UInt64 = 1_000_000_000
    public static let nanosecondsPerMinute: UInt64 = 60 * nanosecondsPerSecond
    public static let nanosecondsPerDay: UInt64 = 86_400 * nanosecondsPerSecond

    /// Converts a non-negative, finite number of seconds to nanoseconds, saturating at 2^63.
    @inline(__always)
    public static func nanoseconds(seconds: Double) -> UInt64 {
        precondition(seconds >= 0 && seconds.isFinite, "durations are finite and non-negative")
        let ns = seconds * 1e9
        return ns >= 9.2e18 ? UInt64(Int64.max) : UInt64(ns)
    }

    /// Origin timestamps are milliseconds on the client's (possibly skewed) clock, counted from
    /// an epoch one day before the simulation starts so that a negative skew stays positive.
    public static let timestampEpochOffsetMs: UInt64 = 86_400_000
}
