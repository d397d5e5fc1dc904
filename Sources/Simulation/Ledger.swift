//! The write ledger: every write a simulated app makes ends in exactly one state. A transition
//! the model does not allow is counted as a violation, and a run with violations fails.
//!
//! Beside its state, each write keeps how many times the server history holds it (a recovered
//! write the server already had is integrated again: for an `AddInteger` that doubles the
//! increment) and whether a client reset's recovery replayed it.

public enum WriteState: UInt8, Sendable, CaseIterable {
    /// Committed locally, not (or no longer) integrated by the server.
    case pending = 0
    /// Integrated into the server history (and not rolled back since).
    case synced = 1
    /// Dropped by a discarding client reset before the server had it.
    case discardedByReset = 2
    /// Integrated, acknowledged, then lost because the server was restored to an older backup.
    case lostToRestore = 3
    /// A recovering client reset dropped every instruction of it (they acted on objects the
    /// server had deleted, and the like; see `RecoveryDropReason`), so nothing was uploaded.
    case droppedByRecovery = 4
    /// Unsynced when the app backed the file up and deleted it (manual mode, or the manual
    /// fallback of an automatic mode): the write survives only in the backup file.
    case keptInBackup = 5
    /// Unsynced when the app deleted the file after a permission-denied error: gone.
    case deletedAfterPermissionDenied = 6

    /// The state's name, snake_case: `runs.csv` counts it in the column `writes_<name>`.
    public var name: String {
        switch self {
        case .pending: "pending"
        case .synced: "synced"
        case .discardedByReset: "discarded_by_reset"
        case .lostToRestore: "lost_to_restore"
        case .droppedByRecovery: "dropped_by_recovery"
        case .keptInBackup: "kept_in_backup"
        case .deletedAfterPermissionDenied: "deleted_after_permission_denied"
        }
    }
}

public struct Ledger: Sendable {
    public private(set) var states: ContiguousArray<WriteState> = []
    public private(set) var owners: ContiguousArray<UInt32> = []
    /// How many server history entries hold the write now.
    private var integrations: ContiguousArray<UInt8> = []
    private var flags: ContiguousArray<UInt8> = []
    public private(set) var violations: UInt64 = 0
    /// The first violation seen, for the failure report.
    public private(set) var firstViolation: String?

    static let recoveredFlag: UInt8 = 1
    static let partiallyRecoveredFlag: UInt8 = 2
    static let integratedTwiceFlag: UInt8 = 4

    public init() {}

    public mutating func recordWrite(client: UInt32) -> UInt64 {
        states.append(.pending)
        owners.append(client)
        integrations.append(0)
        flags.append(0)
        return UInt64(states.count - 1)
    }

    public func owner(of write: UInt64) -> UInt32 { owners[Int(write)] }

    /// The server integrated the write. A write that a reset dropped locally can still arrive
    /// (an upload already in flight), and then it is synced after all. A write the server
    /// already holds may arrive again only through a recovery, which replays unacknowledged
    /// writes: that is counted (`writesIntegratedTwice`).
    public mutating func markSynced(_ write: UInt64) {
        let index = Int(write)
        switch states[index] {
        case .pending, .discardedByReset, .droppedByRecovery, .keptInBackup,
            .deletedAfterPermissionDenied:
            states[index] = .synced
        case .synced where flags[index] & Ledger.recoveredFlag != 0:
            flags[index] |= Ledger.integratedTwiceFlag
        case .synced, .lostToRestore:
            violate(write, from: states[index], to: .synced, expected: .pending)
            return
        }
        integrations[index] &+= 1
    }

    /// A discarding reset dropped the write locally. If the server already has it, it stays
    /// synced (the fresh copy contains it); otherwise it is discarded.
    public mutating func markDiscarded(_ write: UInt64) {
        dropLocally(write, to: .discardedByReset)
    }

    /// Recovery dropped every instruction of the write (it stays synced if the server has it).
    public mutating func markDroppedByRecovery(_ write: UInt64) {
        dropLocally(write, to: .droppedByRecovery)
    }

    /// The app backed the file up and deleted it with the write unsynced (it stays synced if
    /// the server has it).
    public mutating func markKeptInBackup(_ write: UInt64) {
        dropLocally(write, to: .keptInBackup)
    }

    /// The app deleted the file after a permission-denied error with the write unsynced (it
    /// stays synced if the server has it).
    public mutating func markDeletedAfterPermissionDenied(_ write: UInt64) {
        dropLocally(write, to: .deletedAfterPermissionDenied)
    }

    /// Recovery replayed the write; `partially` when it lost some instructions.
    public mutating func noteRecovered(_ write: UInt64, partially: Bool) {
        flags[Int(write)] |= Ledger.recoveredFlag | (partially ? Ledger.partiallyRecoveredFlag : 0)
    }

    /// The server was restored past one integration of this write. When no other integration
    /// of it remains, it goes back to pending if its client still holds it unsynced (it will be
    /// uploaded again), and is lost otherwise.
    public mutating func markRolledBack(_ write: UInt64, stillUnsyncedOnClient: Bool) {
        let index = Int(write)
        guard states[index] == .synced, integrations[index] > 0 else {
            violate(write, from: states[index], to: .pending, expected: .synced)
            return
        }
        integrations[index] -= 1
        if integrations[index] == 0 {
            states[index] = stillUnsyncedOnClient ? .pending : .lostToRestore
        }
    }

    private mutating func dropLocally(_ write: UInt64, to target: WriteState) {
        let index = Int(write)
        if states[index] == .synced { return }
        guard states[index] == .pending else {
            violate(write, from: states[index], to: target, expected: .pending)
            return
        }
        states[index] = target
    }

    private mutating func violate(
        _ write: UInt64, from state: WriteState, to target: WriteState, expected: WriteState
    ) {
        violations += 1
        if firstViolation == nil {
            firstViolation =
                "write \(write) of client \(owners[Int(write)]) moved \(state) → \(target); expected it to be \(expected)"
        }
    }

    /// Whether recovery replayed the write, whether it lost instructions doing so, and whether
    /// the server history held it twice.
    public func recovery(of write: UInt64) -> (
        recovered: Bool, partially: Bool, integratedTwice: Bool
    ) {
        let flag = flags[Int(write)]
        return (
            flag & Ledger.recoveredFlag != 0, flag & Ledger.partiallyRecoveredFlag != 0,
            flag & Ledger.integratedTwiceFlag != 0
        )
    }

    /// Counts per state, in `WriteState` raw-value order.
    public func totals() -> [UInt64] {
        var totals = [UInt64](repeating: 0, count: WriteState.allCases.count)
        for state in states { totals[Int(state.rawValue)] += 1 }
        return totals
    }

    /// Per owner (clients 0 ..< `owners`), the writes in each state: `owners` rows of
    /// `WriteState.allCases.count` counts, flat, in `WriteState` order.
    public func totalsByOwner(owners: Int) -> [UInt64] {
        let width = WriteState.allCases.count
        var totals = [UInt64](repeating: 0, count: owners * width)
        for (state, owner) in zip(states, self.owners) {
            totals[Int(owner) * width + Int(state.rawValue)] += 1
        }
        return totals
    }

    /// Writes recovery replayed at least once, those of them that lost instructions, and writes
    /// the server history held twice at some point.
    public func recoveryTotals() -> (recovered: UInt64, partially: UInt64, integratedTwice: UInt64)
    {
        var totals: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for flag in flags {
            if flag & Ledger.recoveredFlag != 0 { totals.0 += 1 }
            if flag & Ledger.partiallyRecoveredFlag != 0 { totals.1 += 1 }
            if flag & Ledger.integratedTwiceFlag != 0 { totals.2 += 1 }
        }
        return totals
    }
}
