//! The write ledger: every write a simulated app makes ends in exactly one state. A transition
//! the model does not allow is counted as a violation, and a run with violations fails.

public enum WriteState: UInt8, Sendable {
    /// Committed locally, not (or no longer) integrated by the server.
    case pending = 0
    /// Integrated into the server history (and not rolled back since).
    case synced = 1
    /// Dropped by a discarding client reset before the server had it.
    case discardedByReset = 2
    /// Integrated, acknowledged, then lost because the server was restored to an older backup.
    case lostToRestore = 3
}

public struct Ledger: Sendable {
    public private(set) var states: ContiguousArray<WriteState> = []
    public private(set) var owners: ContiguousArray<UInt32> = []
    public private(set) var violations: UInt64 = 0
    /// The first violation seen, for the failure report.
    public private(set) var firstViolation: String?

    public init() {}

    public mutating func recordWrite(client: UInt32) -> UInt64 {
        states.append(.pending)
        owners.append(client)
        return UInt64(states.count - 1)
    }

    public func owner(of write: UInt64) -> UInt32 { owners[Int(write)] }

    public mutating func markSynced(_ write: UInt64) {
        move(write, from: .pending, to: .synced)
    }

    /// A discarding reset dropped the write locally. If the server already has it, it stays
    /// synced (the fresh copy contains it); otherwise it is discarded.
    public mutating func markDiscarded(_ write: UInt64) {
        if states[Int(write)] == .synced { return }
        move(write, from: .pending, to: .discardedByReset)
    }

    /// The server was restored past this write. It goes back to pending when its client still
    /// holds it unsynced (it will be uploaded again), and is lost otherwise.
    public mutating func markRolledBack(_ write: UInt64, stillUnsyncedOnClient: Bool) {
        move(write, from: .synced, to: stillUnsyncedOnClient ? .pending : .lostToRestore)
    }

    private mutating func move(_ write: UInt64, from expected: WriteState, to target: WriteState) {
        let index = Int(write)
        guard states[index] == expected else {
            violations += 1
            if firstViolation == nil {
                firstViolation =
                    "write \(write) of client \(owners[index]) moved \(states[index]) → \(target); expected it to be \(expected)"
            }
            return
        }
        states[index] = target
    }

    /// Counts per state, in `WriteState` raw-value order.
    public func totals() -> [UInt64] {
        var totals = [UInt64](repeating: 0, count: 4)
        for state in states { totals[Int(state.rawValue)] += 1 }
        return totals
    }
}
