//! Client-reset recovery (REALM-SEMANTICS §4.4): a client's unacknowledged local changesets,
//! replayed one by one onto the fresh copy of the server state, each instruction resolved
//! against what is there now by the reference's rules. The result is the recovered state and
//! one recovered changeset per local changeset, which the client uploads as new history.
//!
//! The rules, instruction by instruction:
//! - `AddTable`, `AddColumn`: applied; written to the recovered changeset even when the table or
//!   column already exists, so additive schema is uploaded. An incompatible one fails the
//!   recovery (`RecoveryFailure.schemaMismatch`).
//! - `EraseColumn`: fails the recovery ("properties cannot be erased during client reset
//!   recovery").
//! - `CreateObject`: always applied (get-or-create), so an object created offline is recreated
//!   even if the server erased one with that key.
//! - `EraseObject`: applied when the object exists; otherwise nothing to do
//!   (`RecoveryDropReason.eraseOfMissingObject`).
//! - Every instruction on an object the recovering state lacks is dropped
//!   (`.objectDeleted`): server deletes beat offline edits, unless the offline changes
//!   re-created the object.
//! - `Update` of a link to an erased object: null when the column is nullable, dropped
//!   otherwise (`.linkToDeletedObject`); so is an `ArrayInsert` or `SetInsert` of such a link.
//! - `AddInteger`: applied only on a non-null integer (`.addIntegerOnNonInteger`).
//! - Lists: an `ArrayInsert` is clamped to the list's end and its element is tracked. An
//!   `ArrayUpdate`, `ArrayMove` or `ArrayErase` is replayed only when every index it names is an
//!   element the recovery itself inserted; otherwise the list is marked, every later operation
//!   on it is dropped (`.listCopied`), and at the end of the changeset the whole list is
//!   overwritten with the client's final pre-reset list (common prefix and suffix kept, the
//!   middle updated, inserted or erased), once per reset: "last recovery wins" for lists. A
//!   `Clear` is applied and restarts the list's tracking.
//! - `SetInsert`, `SetErase`, `Clear` of a set: applied.
//!
//! Deliberate differences from the reference, all in corner cases:
//! - A translated list index that falls outside the list, or a tracker whose indices would go
//!   below zero (the reference's tracker shifts its indices by local position only, and can
//!   lose step when a clamped insert meets tracked elements; it asserts there), marks the list
//!   for copying instead of failing the reset.
//! - The trackers of an object that recovery erases are forgotten, so a later local re-creation
//!   starts an untouched list.

/// Why recovery dropped a local instruction. Raw values index `ClientResetRecovery.drops`.
public enum RecoveryDropReason: Int, Sendable, CaseIterable {
    /// An edit of an object the recovering state lacks ("cannot recover … which operates on a
    /// deleted object").
    case objectDeleted = 0
    /// A link (set, inserted or added) to an object that no longer exists, where null is not
    /// allowed.
    case linkToDeletedObject = 1
    /// `AddInteger` on a field that is null or not an integer on the server.
    case addIntegerOnNonInteger = 2
    /// A list operation at an index the recovery did not insert, or any later operation on that
    /// list: the list is copied from the client's pre-reset state instead.
    case listCopied = 3
    /// `EraseObject` of an object that is already gone: nothing was lost.
    case eraseOfMissingObject = 4

    /// The name used in CSV columns and reports: the case's name.
    public var name: String { String(describing: self) }
}

/// Why an automatic client reset could not complete (the reference's `ClientResetFailed`,
/// which the SDK turns into the manual fallback).
public struct RecoveryFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// `EraseColumn` among the local changes.
        case destructiveSchemaChange
        /// An `AddTable` or `AddColumn` incompatible with the fresh copy, or a table or column of
        /// the local file that the fresh copy lacks (`transfer_group`'s check).
        case schemaMismatch
        /// An instruction that could not be applied for another reason.
        case inapplicable(ApplyError)
    }
    public var reason: Reason
    public var message: String

    public init(reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}

/// One local changeset after recovery: the same metadata, the instructions that survived (with
/// their indices and prior sizes translated to the recovering state), plus any list copies.
public struct RecoveredChangeset: Sendable {
    public var changeset: Changeset
    /// Instructions of the local changeset that were dropped (every reason).
    public var droppedCount: Int
    /// Instructions this changeset gained by copying lists.
    public var copiedCount: Int
}

/// The outcome of a recovery: the state to adopt and what to upload.
public struct ClientResetRecovery: Sendable {
    /// The fresh copy with the recovered changes applied.
    public var state: Replica
    /// One per local changeset, in order; a changeset whose every instruction was dropped is
    /// kept here with no instructions (the caller decides not to upload it).
    public var changesets: [RecoveredChangeset]
    /// Dropped instructions per reason, indexed by `RecoveryDropReason.rawValue`.
    public var drops: [UInt64]
    /// Lists overwritten with the client's pre-reset list.
    public var listsCopied: UInt64
}

extension Replica {
    /// Recovers `localChanges` (the unacknowledged local changesets, in their reciprocal forms,
    /// oldest first) onto `fresh` by the rules above; `self` is the client's state at the
    /// moment of the reset (the source of list copies).
    /// - Throws: `RecoveryFailure` when the reference would fail the reset.
    /// - Complexity: O(instructions × list size) for list edits, O(instructions) otherwise.
    public func recover(_ localChanges: some Sequence<Changeset>, onto fresh: Replica)
        throws(RecoveryFailure) -> ClientResetRecovery
    {
        var recovery = RecoveryReplay(preReset: self, state: fresh)
        for changeset in localChanges {
            try recovery.replay(changeset)
        }
        recovery.state.checkInvariants()
        return ClientResetRecovery(
            state: recovery.state, changesets: recovery.recovered, drops: recovery.drops,
            listsCopied: recovery.listsCopied)
    }

    /// The first table or column of `self` that `fresh` lacks or declares differently, as a
    /// sentence; nil when `self`'s schema is contained in `fresh`'s. This is the check the
    /// reference makes before copying the fresh state into the local file (`transfer_group`),
    /// in every automatic mode: a breaking schema change on the server fails the reset.
    /// - Complexity: O(tables + columns).
    public func schemaMissing(from fresh: Replica) -> String? {
        for table in tables {
            guard let other = fresh.schema(of: table.table) else {
                return "class \(table.table) exists locally but not in the fresh copy"
            }
            if other.primaryKeyField != table.primaryKeyField
                || other.primaryKeyType != table.primaryKeyType
                || other.primaryKeyNullable != table.primaryKeyNullable
            {
                return "class \(table.table) has another primary key in the fresh copy"
            }
            for column in table.columns {
                guard let index = other.columnIndex(column.field) else {
                    return
                        "property \(table.table).\(column.field) exists locally but not in the fresh copy"
                }
                if other.columns[index] != column {
                    return "property \(table.table).\(column.field) differs in the fresh copy"
                }
            }
        }
        return nil
    }
}

/// Which indices of one list the recovery may touch: the elements it inserted itself, each
/// with its index in the client's local list and in the recovering list (the reference's
/// `ListTracker`).
struct RecoveryListTracker {
    struct CrossIndex {
        var local: UInt32
        var remote: UInt32
    }
    var allowed: [CrossIndex] = []
    var requiresCopy = false
    var copied = false

    /// Marks the list to be copied: every later operation on it is dropped.
    mutating func queueCopy() {
        requiresCopy = true
        allowed.removeAll()
    }

    mutating func clear() {
        requiresCopy = false
        allowed.removeAll()
    }

    /// An insert at local index `local` into a recovering list of `size` elements: allowed,
    /// clamped to the end.
    mutating func insert(local: UInt32, size: Int) -> UInt32? {
        if requiresCopy { return nil }
        let remote = min(local, UInt32(size))
        for position in allowed.indices where allowed[position].local >= local {
            allowed[position].local += 1
            allowed[position].remote += 1
        }
        allowed.append(CrossIndex(local: local, remote: remote))
        return remote
    }

    /// The recovering index of the element at local index `local`, if the recovery inserted it.
    mutating func update(local: UInt32) -> UInt32? {
        if requiresCopy { return nil }
        if let found = allowed.first(where: { $0.local == local }) { return found.remote }
        queueCopy()
        return nil
    }

    /// A move of two elements the recovery inserted; nil (and the list marked) otherwise.
    mutating func move(from: UInt32, to: UInt32) -> (from: UInt32, to: UInt32)? {
        if requiresCopy { return nil }
        guard let fromPosition = allowed.firstIndex(where: { $0.local == from }),
            let toPosition = allowed.firstIndex(where: { $0.local == to })
        else {
            queueCopy()
            return nil
        }
        if from == to { return (allowed[fromPosition].remote, allowed[fromPosition].remote) }
        let remoteFrom = allowed[fromPosition].remote
        let remoteTo: UInt32
        if from < to {
            // The reference asserts here; a tracker out of step copies the list instead.
            if allowed.contains(where: { $0.local > from && $0.local <= to && $0.remote == 0 }) {
                queueCopy()
                return nil
            }
            for position in allowed.indices
            where allowed[position].local > from && allowed[position].local <= to {
                allowed[position].local -= 1
                allowed[position].remote -= 1
            }
            remoteTo = allowed[toPosition].remote + 1
            allowed[fromPosition].local = allowed[toPosition].local + 1
            allowed[fromPosition].remote = remoteTo
        } else {
            for position in allowed.indices
            where allowed[position].local < from && allowed[position].local >= to {
                allowed[position].local += 1
                allowed[position].remote += 1
            }
            remoteTo = allowed[toPosition].remote - 1
            allowed[fromPosition].local = allowed[toPosition].local - 1
            allowed[fromPosition].remote = remoteTo
        }
        return (remoteFrom, remoteTo)
    }

    /// An erase of an element the recovery inserted; nil (and the list marked) otherwise.
    mutating func remove(local: UInt32) -> UInt32? {
        if requiresCopy { return nil }
        guard let position = allowed.firstIndex(where: { $0.local == local }) else {
            queueCopy()
            return nil
        }
        let remote = allowed[position].remote
        allowed.remove(at: position)
        if allowed.contains(where: { $0.local > local && $0.remote == 0 }) {
            queueCopy()
            return nil
        }
        for other in allowed.indices where allowed[other].local > local {
            allowed[other].local -= 1
            allowed[other].remote -= 1
        }
        return remote
    }
}

/// The replay's working state.
struct RecoveryReplay {
    let preReset: Replica
    var state: Replica
    var recovered: [RecoveredChangeset] = []
    var drops = [UInt64](repeating: 0, count: RecoveryDropReason.allCases.count)
    var listsCopied: UInt64 = 0
    /// Looked up by key only; never iterated (copies go through `pendingCopies`, sorted).
    var trackers: [FieldRef: RecoveryListTracker] = [:]
    /// Lists marked for copying and not yet copied, in the order they were marked.
    var pendingCopies: [FieldRef] = []

    // Per changeset.
    var output: ContiguousArray<Instruction> = []
    var dropped = 0

    init(preReset: Replica, state: Replica) {
        self.preReset = preReset
        self.state = state
    }

    mutating func replay(_ changeset: Changeset) throws(RecoveryFailure) {
        output.removeAll(keepingCapacity: true)
        dropped = 0
        for instruction in changeset.instructions {
            try resolve(instruction)
        }
        let before = output.count
        try copyMarkedLists()
        var result = changeset
        result.instructions = output
        recovered.append(
            RecoveredChangeset(
                changeset: result, droppedCount: dropped, copiedCount: output.count - before))
    }

    mutating func drop(_ reason: RecoveryDropReason) {
        drops[reason.rawValue] += 1
        dropped += 1
    }

    /// Applies `instruction` to the recovering state and writes it to the recovered changeset.
    mutating func emit(_ instruction: Instruction) throws(RecoveryFailure) {
        do {
            try state.applyUnchecked(instruction)
        } catch {
            switch error {
            case .tableMismatch, .columnMismatch, .noSuchTable, .noSuchColumn,
                .collectionKindMismatch, .valueTypeMismatch, .primaryKeyTypeMismatch:
                throw RecoveryFailure(
                    reason: .schemaMismatch,
                    message:
                        "recovered \(instruction) does not fit the fresh copy's schema: \(error)")
            default:
                throw RecoveryFailure(
                    reason: .inapplicable(error),
                    message: "recovered \(instruction) could not be applied: \(error)")
            }
        }
        output.append(instruction)
    }

    func linkMissing(_ value: Value) -> Bool {
        if case .link(let target) = value { return !state.contains(target) }
        return false
    }

    /// Marks a list for copying (once; the copy happens at the end of the changeset).
    mutating func markForCopy(_ key: FieldRef) {
        if trackers[key]?.copied != true, !pendingCopies.contains(key) { pendingCopies.append(key) }
    }

    /// Runs `body` on the list's tracker (created on first use) and marks the list for copying
    /// when the tracker ends up requiring it.
    mutating func withTracker<T>(
        _ key: FieldRef, _ body: (inout RecoveryListTracker) -> T
    ) -> T {
        var tracker = trackers[key] ?? RecoveryListTracker()
        let result = body(&tracker)
        trackers[key] = tracker
        if tracker.requiresCopy { markForCopy(key) }
        return result
    }

    mutating func resolve(_ instruction: Instruction) throws(RecoveryFailure) {
        switch instruction {
        case .addTable, .addColumn, .createObject:
            try emit(instruction)
        case .eraseColumn(let table, let field):
            throw RecoveryFailure(
                reason: .destructiveSchemaChange,
                message:
                    "properties cannot be erased during client reset recovery (EraseColumn \(table).\(field))"
            )
        case .eraseObject(let object):
            guard state.contains(object) else { return drop(.eraseOfMissingObject) }
            try emit(instruction)
            // A later re-creation starts with untouched lists.
            pendingCopies.removeAll { $0.object == object }
            forgetTrackers(of: object)
        case .update(let object, let field, let value, let isDefault):
            guard state.contains(object) else { return drop(.objectDeleted) }
            if linkMissing(value) {
                guard state.column(object.table, field)?.nullable == true else {
                    return drop(.linkToDeletedObject)
                }
                return try emit(
                    .update(object: object, field: field, value: .null, isDefault: isDefault))
            }
            try emit(instruction)
        case .addInteger(let object, let field, _):
            guard state.contains(object) else { return drop(.objectDeleted) }
            guard case .int = state.value(of: object, field: field) else {
                return drop(.addIntegerOnNonInteger)
            }
            try emit(instruction)
        case .arrayInsert(let object, let field, let index, let value, _):
            guard !linkMissing(value) else { return drop(.linkToDeletedObject) }
            guard state.contains(object) else { return drop(.objectDeleted) }
            let key = FieldRef(object: object, field: field)
            let size = state.listCount(of: object, field: field)
            guard let remote = withTracker(key, { $0.insert(local: index, size: size) }) else {
                return drop(.listCopied)
            }
            try emit(
                .arrayInsert(
                    object: object, field: field, index: remote, value: value,
                    priorSize: UInt32(size)))
        case .arrayUpdate(let object, let field, let index, let value, _):
            guard state.contains(object) else { return drop(.objectDeleted) }
            let key = FieldRef(object: object, field: field)
            let size = state.listCount(of: object, field: field)
            guard let remote = withTracker(key, { $0.update(local: index) }) else {
                return drop(.listCopied)
            }
            guard Int(remote) < size else { return outOfStep(key) }
            guard !linkMissing(value) else { return drop(.linkToDeletedObject) }
            try emit(
                .arrayUpdate(
                    object: object, field: field, index: remote, value: value,
                    priorSize: UInt32(size)))
        case .arrayMove(let object, let field, let from, let to, _):
            guard state.contains(object) else { return drop(.objectDeleted) }
            let key = FieldRef(object: object, field: field)
            let size = state.listCount(of: object, field: field)
            guard let remote = withTracker(key, { $0.move(from: from, to: to) }) else {
                return drop(.listCopied)
            }
            guard Int(remote.from) < size, Int(remote.to) < size else { return outOfStep(key) }
            if remote.from == remote.to { return }
            try emit(
                .arrayMove(
                    object: object, field: field, from: remote.from, to: remote.to,
                    priorSize: UInt32(size)))
        case .arrayErase(let object, let field, let index, _):
            guard state.contains(object) else { return drop(.objectDeleted) }
            let key = FieldRef(object: object, field: field)
            let size = state.listCount(of: object, field: field)
            guard let remote = withTracker(key, { $0.remove(local: index) }) else {
                return drop(.listCopied)
            }
            guard Int(remote) < size else { return outOfStep(key) }
            try emit(
                .arrayErase(
                    object: object, field: field, index: remote, priorSize: UInt32(size)))
        case .clear(let object, let field):
            guard state.contains(object) else { return drop(.objectDeleted) }
            if state.column(object.table, field)?.collection == .list {
                let key = FieldRef(object: object, field: field)
                withTracker(key) { $0.clear() }
                pendingCopies.removeAll { $0 == key }
            }
            try emit(instruction)
        case .setInsert(let object, _, let value):
            guard !linkMissing(value) else { return drop(.linkToDeletedObject) }
            guard state.contains(object) else { return drop(.objectDeleted) }
            try emit(instruction)
        case .setErase(let object, _, _):
            guard state.contains(object) else { return drop(.objectDeleted) }
            try emit(instruction)
        }
    }

    /// A translated index outside the list: copy the list instead (a deliberate difference; see
    /// the file's notes).
    mutating func outOfStep(_ key: FieldRef) {
        withTracker(key) { $0.queueCopy() }
        drop(.listCopied)
    }

    mutating func forgetTrackers(of object: ObjectRef) {
        guard let table = state.schema(of: object.table) else { return }
        for column in table.columns where column.collection == .list {
            trackers[FieldRef(object: object, field: column.field)] = nil
        }
    }

    /// Overwrites each list marked in this changeset with the client's final pre-reset list,
    /// in list order, and marks it copied. A list whose object is missing on either side stays
    /// marked (a later changeset may re-create the object), as in the reference.
    mutating func copyMarkedLists() throws(RecoveryFailure) {
        guard !pendingCopies.isEmpty else { return }
        var keys = pendingCopies
        keys.sort()
        var kept: [FieldRef] = []
        for key in keys {
            guard state.contains(key.object),
                let local = preReset.list(of: key.object, field: key.field)
            else {
                kept.append(key)
                continue
            }
            try copyList(key, from: local)
            trackers[key, default: RecoveryListTracker()].copied = true
            listsCopied += 1
        }
        pendingCopies = kept
    }

    /// Makes the recovering list equal `local` (links to objects the recovering state lacks
    /// left out): the common prefix and suffix stay, the middle is updated in place, and the
    /// rest inserted or erased, as the reference's list copy does.
    mutating func copyList(_ key: FieldRef, from local: [Value]) throws(RecoveryFailure) {
        let target = local.filter { !linkMissing($0) }
        var remote: [Value] = []
        if case .list(let list) = state.fieldContent(of: key.object, field: key.field) {
            remote = Array(list)
        }
        var prefix = 0
        while prefix < min(remote.count, target.count), remote[prefix] == target[prefix] {
            prefix += 1
        }
        if prefix == remote.count, prefix == target.count { return }
        var suffix = 0
        while suffix < min(remote.count, target.count) - prefix,
            remote[remote.count - 1 - suffix] == target[target.count - 1 - suffix]
        {
            suffix += 1
        }
        let common = min(remote.count, target.count) - prefix - suffix
        var size = remote.count
        for offset in 0..<common where remote[prefix + offset] != target[prefix + offset] {
            try emit(
                .arrayUpdate(
                    object: key.object, field: key.field, index: UInt32(prefix + offset),
                    value: target[prefix + offset], priorSize: UInt32(size)))
        }
        var position = prefix + common
        while size < target.count {
            try emit(
                .arrayInsert(
                    object: key.object, field: key.field, index: UInt32(position),
                    value: target[position], priorSize: UInt32(size)))
            position += 1
            size += 1
        }
        while size > target.count {
            try emit(
                .arrayErase(
                    object: key.object, field: key.field, index: UInt32(position),
                    priorSize: UInt32(size)))
            size -= 1
        }
    }
}
