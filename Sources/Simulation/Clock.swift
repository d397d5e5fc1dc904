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

    /// Simulated nanoseconds as the sync log stamps them, to the millisecond: `3h12m05.123s`
    /// (hours unbounded).
    public static func clockText(_ nanoseconds: UInt64) -> String {
        let milliseconds = nanoseconds / nanosecondsPerMillisecond
        func pad(_ value: UInt64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(milliseconds / 3_600_000)h\(pad(milliseconds / 60_000 % 60, 2))m"
            + "\(pad(milliseconds / 1_000 % 60, 2)).\(pad(milliseconds % 1_000, 3))s"
    }

    /// Origin timestamps are milliseconds on the client's (possibly skewed) clock, counted from
    /// an epoch one day before the simulation starts so that a negative skew stays positive.
    public static let timestampEpochOffsetMs: UInt64 = 86_400_000
}
