//! The instruction set (REALM-SEMANTICS §1.2), restricted to what SyncSim models: top-level
//! objects with scalar fields, lists of scalars or links, and sets. Embedded objects and
//! dictionaries are not modelled (documented difference). `EraseTable` is not in the issue's
//! list and is not modelled either; `EraseColumn` is, and it is the destructive schema change
//! that turns a merge into all-pairs (§2.4).

/// One instruction of a changeset.
///
/// `priorSize` is the size of the list before the instruction, as in the reference; the
/// transform checks that both sides agree and reports a typed merge error when they do not.
/// List indices and sizes are `UInt32` (a list of more than 4 G elements is out of scope).
public enum Instruction: Hashable, Sendable {
    /// Create a table with a primary key column. Idempotent against an identical AddTable.
    case addTable(table: TableID, primaryKeyField: FieldID, primaryKeyType: PrimaryKeyType,
                  primaryKeyNullable: Bool)
    /// Add a column. Idempotent against an identical AddColumn; a differing one is a merge error.
    case addColumn(table: TableID, field: FieldID, type: ValueType, nullable: Bool,
                   collection: CollectionKind, linkTarget: TableID?)
    /// Erase a column: destructive schema change.
    case eraseColumn(table: TableID, field: FieldID)
    /// Get-or-create an object.
    case createObject(ObjectRef)
    /// Erase an object (idempotent). Erase always wins against concurrent edits of the object.
    case eraseObject(ObjectRef)
    /// Set a scalar field. `isDefault` marks a default-value write, which loses to any
    /// non-default write whatever the timestamps.
    case update(object: ObjectRef, field: FieldID, value: Value, isDefault: Bool)
    /// Set the list element at `index` (an "array update" in the reference).
    case arrayUpdate(object: ObjectRef, field: FieldID, index: UInt32, value: Value,
                     priorSize: UInt32)
    /// Add to an integer field (wrapping).
    case addInteger(object: ObjectRef, field: FieldID, increment: Int64)
    case arrayInsert(object: ObjectRef, field: FieldID, index: UInt32, value: Value,
                     priorSize: UInt32)
    case arrayMove(object: ObjectRef, field: FieldID, from: UInt32, to: UInt32, priorSize: UInt32)
    case arrayErase(object: ObjectRef, field: FieldID, index: UInt32, priorSize: UInt32)
    /// Clear a list or a set.
    case clear(object: ObjectRef, field: FieldID)
    case setInsert(object: ObjectRef, field: FieldID, value: Value)
    case setErase(object: ObjectRef, field: FieldID, value: Value)
}
