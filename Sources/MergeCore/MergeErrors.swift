//! Typed errors of the replica (apply) and of the transform (merge), and the merge core's limits.
//!
//! Codes are stable: never renumbered or reused; new cases append new codes. A broken invariant
//! of the merge core itself is a precondition failure, not an error: these errors describe bad
//! *input* (a changeset that does not fit the state it is applied to, or two changesets that
//! cannot be merged).

/// Why a changeset or instruction cannot be applied to a `Replica`.
///
/// A failed `apply` leaves the replica with the instructions before the failing one applied
/// (instruction-level atomicity, as in the reference's `InstructionApplier`); callers that need
/// changeset atomicity apply to a copy.
public enum ApplyError: Error, Hashable, Sendable {
    /// The table was never declared by `AddTable`. Remedy: send `AddTable` first. (code 101)
    case noSuchTable(table: TableID)
    /// An `AddTable` differs from the table already declared. (code 102)
    case tableMismatch(table: TableID)
    /// The column was never declared by `AddColumn` (or was erased). (code 103)
    case noSuchColumn(table: TableID, field: FieldID)
    /// An `AddColumn` differs from the column already declared, or names the primary key. (104)
    case columnMismatch(table: TableID, field: FieldID)
    /// The primary key's type does not match the table's declared key type. (code 105)
    case primaryKeyTypeMismatch(table: TableID)
    /// An edit names an object that does not exist (never created, or erased). (code 106)
    case noSuchObject(ObjectRef)
    /// A value does not fit the column's type or nullability. (code 107)
    case valueTypeMismatch(table: TableID, field: FieldID)
    /// The instruction needs a different collection kind (list, set or single). (code 108)
    case collectionKindMismatch(table: TableID, field: FieldID)
    /// A list index is out of range for the list's real size. (code 109)
    case indexOutOfRange(index: UInt32, size: UInt32)
    /// The instruction's `priorSize` disagrees with the list's real size. (code 110)
    case priorSizeMismatch(priorSize: UInt32, size: UInt32)
    /// The primary key column cannot be written with `Update` or `AddInteger`. (code 111)
    case primaryKeyFieldWrite(table: TableID, field: FieldID)
    /// A list would grow beyond `MergeLimits.listElementsMax`. (code 112)
    case listTooLong(size: UInt32)

    /// The stable numeric code of this error.
    public var code: UInt16 {
        switch self {
        case .noSuchTable: 101
        case .tableMismatch: 102
        case .noSuchColumn: 103
        case .columnMismatch: 104
        case .primaryKeyTypeMismatch: 105
        case .noSuchObject: 106
        case .valueTypeMismatch: 107
        case .collectionKindMismatch: 108
        case .indexOutOfRange: 109
        case .priorSizeMismatch: 110
        case .primaryKeyFieldWrite: 111
        case .listTooLong: 112
        }
    }
}

/// Why two sequences of changesets cannot be merged (the reference's `TransformError`, "bad
/// changeset"). The merge leaves its `inout` arguments in an unspecified but valid state when it
/// throws; the caller treats the incoming changesets as a protocol violation.
public enum MergeError: Error, Hashable, Sendable {
    /// Two `AddTable`s for one table differ (primary-key field, type or nullability), or two
    /// `AddColumn`s for one column differ (type, nullability, collection kind or link target).
    /// The reference reports `TransformError("Schema mismatch …")`. (code 201)
    case schemaMismatch(table: TableID, field: FieldID?)
    /// Two instructions on one list disagree on the list's size before them, so they were not
    /// made on the same state: one side is corrupt. (code 202)
    case priorSizeMismatch(priorSizeIncoming: UInt32, priorSizeLocal: UInt32)
    /// More instructions than `MergeLimits.mergeInstructionsMax` on one side. (code 203)
    case tooManyInstructions(count: Int)
    /// A list index is beyond the `priorSize` the instruction itself claims. (code 204)
    case indexBeyondPriorSize(index: UInt32, priorSize: UInt32)

    /// The stable numeric code of this error.
    public var code: UInt16 {
        switch self {
        case .schemaMismatch: 201
        case .priorSizeMismatch: 202
        case .tooManyInstructions: 203
        case .indexBeyondPriorSize: 204
        }
    }
}

/// The merge core's limits. Every loop and buffer in MergeCore is bounded by one of these.
public enum MergeLimits {
    /// Instructions on one side of one merge (incoming or local, all changesets together).
    public static let mergeInstructionsMax: Int = 1 << 26
    /// Elements of one list (indices and sizes are `UInt32`).
    public static let listElementsMax: UInt32 = 1 << 30
    /// Objects in one replica (object slots are `UInt32`).
    public static let objectsMax: Int = 1 << 30
    /// Fields (columns) of one table.
    public static let columnsPerTableMax: Int = 1 << 16
    /// Tables of one replica.
    public static let tablesMax: Int = 1 << 16
}
