//! Applying instructions to a replica: checked entries, unchecked core.
//!
//! Semantics follow the reference's `InstructionApplier`: `CreateObject` is get-or-create,
//! `EraseObject` is idempotent, and everything that would be a "bad changeset" there (an edit of
//! a missing object, a list index out of range, a `priorSize` that disagrees with the real
//! size, a value of the wrong type) is a typed `ApplyError`, never a crash.

extension Replica {
    /// Applies every instruction of `changeset` in order.
    ///
    /// On error, the instructions before the failing one stay applied.
    /// - Throws: `ApplyError` for an instruction that does not fit the state.
    /// - Complexity: O(instructions) expected, plus O(objects) per `EraseColumn`.
    public mutating func apply(_ changeset: Changeset) throws(ApplyError) {
        precondition(changeset.instructions.count <= MergeLimits.mergeInstructionsMax,
                     "changeset longer than MergeLimits.mergeInstructionsMax")
        for instruction in changeset.instructions {
            try applyUnchecked(instruction)
        }
        checkInvariants()
    }

    /// Applies one instruction.
    /// - Throws: `ApplyError` for an instruction that does not fit the state.
    /// - Complexity: O(1) expected for object and field edits; O(list size) for list edits;
    ///   O(objects) for `EraseColumn`.
    public mutating func apply(_ instruction: Instruction) throws(ApplyError) {
        let countBefore = objects.count
        try applyUnchecked(instruction)
        precondition(objects.count <= countBefore + 1, "one instruction created two objects")
        checkInvariants()
    }

    /// The unchecked core: applies `instruction` without the O(n) invariant walk.
    @inline(__always)
    mutating func applyUnchecked(_ instruction: Instruction) throws(ApplyError) {
        switch instruction {
        case let .addTable(table, primaryKeyField, primaryKeyType, primaryKeyNullable):
            try addTable(TableSchema(table: table, primaryKeyField: primaryKeyField,
                                     primaryKeyType: primaryKeyType,
                                     primaryKeyNullable: primaryKeyNullable))
        case let .addColumn(table, field, type, nullable, collection, linkTarget):
            try addColumn(table, ColumnSchema(field: field, type: type, nullable: nullable,
                                              collection: collection, linkTarget: linkTarget))
        case let .eraseColumn(table, field):
            guard let tableIndex = tableIndex(table) else { throw .noSuchTable(table: table) }
            guard let columnIndex = tables[tableIndex].columnIndex(field) else {
                throw .noSuchColumn(table: table, field: field)
            }
            tables[tableIndex].columns.remove(at: columnIndex)
            objects.removeField(field, table: table)
        case .createObject(let object):
            try checkKey(object)
            let hash = stableHash(object)
            if objects.find(object, hash: hash) == nil { _ = objects.insert(object, hash: hash) }
        case .eraseObject(let object):
            try checkKey(object)
            if let index = objects.find(object, hash: stableHash(object)) {
                objects.remove(at: index)
            }
        case let .update(object, field, value, _):
            let column = try writableColumn(object, field, .single)
            guard column.accepts(value) else {
                throw .valueTypeMismatch(table: object.table, field: field)
            }
            let index = try recordIndex(object)
            setScalar(index, field, value)
        case let .addInteger(object, field, increment):
            let column = try writableColumn(object, field, .single)
            guard column.type == .int || column.type == .mixed else {
                throw .valueTypeMismatch(table: object.table, field: field)
            }
            let index = try recordIndex(object)
            try addInteger(index, field, increment, column)
        case let .arrayUpdate(object, field, listIndex, value, priorSize):
            let index = try listRecord(object, field, value)
            try editList(index, field) { (list) throws(ApplyError) in
                try checkSize(list, priorSize)
                guard listIndex < priorSize else {
                    throw .indexOutOfRange(index: listIndex, size: priorSize)
                }
                list[Int(listIndex)] = value
            }
        case let .arrayInsert(object, field, listIndex, value, priorSize):
            let index = try listRecord(object, field, value)
            try editList(index, field) { (list) throws(ApplyError) in
                try checkSize(list, priorSize)
                guard listIndex <= priorSize else {
                    throw .indexOutOfRange(index: listIndex, size: priorSize)
                }
                guard priorSize < MergeLimits.listElementsMax else {
                    throw .listTooLong(size: priorSize)
                }
                list.insert(value, at: Int(listIndex))
            }
        case let .arrayMove(object, field, from, to, priorSize):
            let index = try listRecord(object, field, nil)
            try editList(index, field) { (list) throws(ApplyError) in
                try checkSize(list, priorSize)
                guard from < priorSize else { throw .indexOutOfRange(index: from, size: priorSize) }
                guard to < priorSize else { throw .indexOutOfRange(index: to, size: priorSize) }
                let element = list.remove(at: Int(from))
                list.insert(element, at: Int(to))
            }
        case let .arrayErase(object, field, listIndex, priorSize):
            let index = try listRecord(object, field, nil)
            try editList(index, field) { (list) throws(ApplyError) in
                try checkSize(list, priorSize)
                guard listIndex < priorSize else {
                    throw .indexOutOfRange(index: listIndex, size: priorSize)
                }
                list.remove(at: Int(listIndex))
            }
        case let .clear(object, field):
            let column = try writableColumn(object, field, nil)
            guard column.collection != .single else {
                throw .collectionKindMismatch(table: object.table, field: field)
            }
            let index = try recordIndex(object)
            removeField(index, field)
        case let .setInsert(object, field, value):
            let column = try writableColumn(object, field, .set)
            guard column.accepts(value) else {
                throw .valueTypeMismatch(table: object.table, field: field)
            }
            let index = try recordIndex(object)
            editSet(index, field, value, insert: true)
        case let .setErase(object, field, value):
            let column = try writableColumn(object, field, .set)
            guard column.accepts(value) else {
                throw .valueTypeMismatch(table: object.table, field: field)
            }
            let index = try recordIndex(object)
            editSet(index, field, value, insert: false)
        }
    }

    // MARK: - Schema

    private mutating func addTable(_ schema: TableSchema) throws(ApplyError) {
        if let index = tableIndex(schema.table) {
            let existing = tables[index]
            guard existing.primaryKeyField == schema.primaryKeyField,
                  existing.primaryKeyType == schema.primaryKeyType,
                  existing.primaryKeyNullable == schema.primaryKeyNullable
            else { throw .tableMismatch(table: schema.table) }
            return
        }
        precondition(tables.count < MergeLimits.tablesMax, "too many tables")
        var position = 0
        while position < tables.count && tables[position].table < schema.table { position += 1 }
        tables.insert(schema, at: position)
    }

    private mutating func addColumn(_ table: TableID, _ column: ColumnSchema) throws(ApplyError) {
        guard let tableIndex = tableIndex(table) else { throw .noSuchTable(table: table) }
        let mismatch = ApplyError.columnMismatch(table: table, field: column.field)
        guard column.field != tables[tableIndex].primaryKeyField else { throw mismatch }
        guard (column.type == .link) == (column.linkTarget != nil) else { throw mismatch }
        if let target = column.linkTarget, self.tableIndex(target) == nil {
            throw .noSuchTable(table: target)
        }
        if let existing = tables[tableIndex].columnIndex(column.field) {
            guard tables[tableIndex].columns[existing] == column else { throw mismatch }
            return
        }
        precondition(tables[tableIndex].columns.count < MergeLimits.columnsPerTableMax,
                     "too many columns")
        var position = 0
        let columns = tables[tableIndex].columns
        while position < columns.count && columns[position].field < column.field { position += 1 }
        tables[tableIndex].columns.insert(column, at: position)
    }

    // MARK: - Lookups that throw

    @inline(__always)
    private func checkKey(_ object: ObjectRef) throws(ApplyError) {
        guard let index = tableIndex(object.table) else { throw .noSuchTable(table: object.table) }
        guard tables[index].accepts(object.key) else {
            throw .primaryKeyTypeMismatch(table: object.table)
        }
    }

    /// The column `field` of the object's table, checked to be of `collection` kind (any
    /// kind when nil) and not the primary key.
    @inline(__always)
    private func writableColumn(
        _ object: ObjectRef, _ field: FieldID, _ collection: CollectionKind?
    ) throws(ApplyError) -> ColumnSchema {
        guard let tableIndex = tableIndex(object.table) else {
            throw .noSuchTable(table: object.table)
        }
        // Read through `tables[tableIndex]` rather than copying the schema out: a copy retains
        // and releases its columns array on every applied instruction.
        guard field != tables[tableIndex].primaryKeyField else {
            throw .primaryKeyFieldWrite(table: object.table, field: field)
        }
        guard let columnIndex = tables[tableIndex].columnIndex(field) else {
            throw .noSuchColumn(table: object.table, field: field)
        }
        let column = tables[tableIndex].columns[columnIndex]
        if let collection, column.collection != collection {
            throw .collectionKindMismatch(table: object.table, field: field)
        }
        return column
    }

    @inline(__always)
    private func recordIndex(_ object: ObjectRef) throws(ApplyError) -> Int {
        guard let index = objects.find(object, hash: stableHash(object)) else {
            throw .noSuchObject(object)
        }
        return index
    }

    private func listRecord(
        _ object: ObjectRef, _ field: FieldID, _ value: Value?
    ) throws(ApplyError) -> Int {
        let column = try writableColumn(object, field, .list)
        if let value, !column.accepts(value) {
            throw .valueTypeMismatch(table: object.table, field: field)
        }
        return try recordIndex(object)
    }

    // MARK: - Field edits

    @inline(__always)
    private mutating func setScalar(_ index: Int, _ field: FieldID, _ value: Value) {
        let position = objects.records[index].fieldPosition(field)
        if position >= 0 {
            objects.records[index].fields[position].content = .scalar(value)
        } else {
            objects.records[index].fields.insert(
                FieldSlot(field: field, content: .scalar(value)), at: -position - 1)
        }
    }

    private mutating func addInteger(
        _ index: Int, _ field: FieldID, _ increment: Int64, _ column: ColumnSchema
    ) throws(ApplyError) {
        let position = objects.records[index].fieldPosition(field)
        let current: Value
        if position >= 0, case .scalar(let value) = objects.records[index].fields[position].content {
            current = value
        } else {
            // An unset field holds the column's default: null if nullable, else zero.
            current = column.nullable || column.type == .mixed ? .null : .int(0)
        }
        switch current {
        case .null: return  // Adding to null is a no-op, as in the reference.
        case .int(let value): setScalar(index, field, .int(value &+ increment))
        default: throw .valueTypeMismatch(table: objects.records[index].object.table, field: field)
        }
    }

    private mutating func removeField(_ index: Int, _ field: FieldID) {
        let position = objects.records[index].fieldPosition(field)
        if position >= 0 { objects.records[index].fields.remove(at: position) }
    }

    private mutating func editList(
        _ index: Int, _ field: FieldID,
        _ body: (inout ChunkedList) throws(ApplyError) -> Void
    ) throws(ApplyError) {
        var position = objects.records[index].fieldPosition(field)
        if position < 0 {
            position = -position - 1
            objects.records[index].fields.insert(
                FieldSlot(field: field, content: .list(ChunkedList())), at: position)
        }
        guard case .list(var list) = objects.records[index].fields[position].content else {
            preconditionFailure("list column holds a non-list value")
        }
        // Release the field's reference so that the edit below does not copy the list.
        objects.records[index].fields[position].content = .scalar(.null)
        defer {
            if list.isEmpty {
                objects.records[index].fields.remove(at: position)
            } else {
                objects.records[index].fields[position].content = .list(list)
            }
        }
        try body(&list)
    }

    private mutating func editSet(_ index: Int, _ field: FieldID, _ value: Value, insert: Bool) {
        var position = objects.records[index].fieldPosition(field)
        if position < 0 {
            if !insert { return }
            position = -position - 1
            objects.records[index].fields.insert(
                FieldSlot(field: field, content: .set([])), at: position)
        }
        guard case .set(var elements) = objects.records[index].fields[position].content else {
            preconditionFailure("set column holds a non-set value")
        }
        objects.records[index].fields[position].content = .scalar(.null)
        // Binary search for the value in the sorted elements.
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            if valueLess(elements[middle], value) { low = middle + 1 } else { high = middle }
        }
        let found = low < elements.count && elements[low] == value
        if insert && !found { elements.insert(value, at: low) }
        if !insert && found { elements.remove(at: low) }
        if elements.isEmpty {
            objects.records[index].fields.remove(at: position)
        } else {
            objects.records[index].fields[position].content = .set(elements)
        }
    }
}

@inline(__always)
private func checkSize(_ list: ChunkedList, _ priorSize: UInt32) throws(ApplyError) {
    guard list.count == Int(priorSize) else {
        throw .priorSizeMismatch(priorSize: priorSize, size: UInt32(truncatingIfNeeded: list.count))
    }
}
