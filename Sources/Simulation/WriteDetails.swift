//! What happened to each write, for `run --writes` (`writes.csv`): when it was made, when it
//! reached the state it ended in, and what cost it (the error that started the client reset
//! that discarded, dropped or backed it up, 206 for a permission-denied delete, or the restore
//! that took it back). The ledger says how many writes ended in each state; this says which,
//! whose, and why. Kept only when asked for: it reads the ledger's transitions and changes no
//! run.

public struct WriteDetails: Sendable {
    /// Simulated time each write was made, by write ID.
    public private(set) var madeNs: ContiguousArray<UInt64> = []
    /// Simulated time of each write's last state change (when it was made, if never).
    public private(set) var settledNs: ContiguousArray<UInt64> = []
    /// What moved each write into its present state: `Cause.none`, `Cause.restore`, or a
    /// protocol error code (206, 208–212, 222).
    public private(set) var causes: ContiguousArray<UInt16> = []

    public enum Cause {
        /// Not lost (pending or synced), or discarded by a first open (no reset).
        public static let none: UInt16 = 0
        /// Lost to a restore from a backup.
        public static let restore: UInt16 = 1
    }

    public init() {}

    mutating func made(at now: UInt64) {
        madeNs.append(now)
        settledNs.append(now)
        causes.append(Cause.none)
    }

    mutating func settled(_ write: UInt64, at now: UInt64, cause: UInt16) {
        settledNs[Int(write)] = now
        causes[Int(write)] = cause
    }
}
