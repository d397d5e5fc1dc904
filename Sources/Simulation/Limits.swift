//! Limits on everything (TigerBeetle style). A run that would exceed one fails loudly with its
//! seed instead of growing without bound or hanging.

public enum Limits {
    public static let clientsMax: UInt32 = 100_000
    public static let partitionsMax: UInt32 = 100_000
    public static let objectsPerPartitionMax: UInt32 = 10_000_000
    public static let durationSecondsMax: UInt64 = 366 * 86_400
    public static let eventQueueMax = 50_000_000
    public static let messagesInFlightMax = 20_000_000
    public static let faultsMax = 10_000
    /// Cohorts of a scenario (`cohorts`).
    public static let cohortsMax = 16
    /// Events processed in one run, healing included.
    public static let eventsMax: UInt64 = 4_000_000_000
    public static let healingSecondsMax: UInt64 = 7 * 86_400
    /// Bandwidths (`network.bandwidthBytesPerSecond`, `server.egressBytesPerSecond`): 1 TB/s.
    public static let bytesPerSecondMax: UInt64 = 1_000_000_000_000
}
