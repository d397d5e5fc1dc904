//! The replica's O(n) invariant walk, compiled in only with `SYNCSIM_INTERNAL_CHECKS`.

extension Replica {
#if SYNCSIM_INTERNAL_CHECKS
    /// Walks the whole replica and traps on a broken invariant: tables sorted and unique,
    /// columns sorted and unique, every object in a declared table with a key of its type,
    /// fields sorted and unique and declared with a matching kind, sets sorted and unique,
    /// lists non-empty (an empty collection is stored as an unset field), object table
    /// consistent.
    /// - Complexity: O(total content size).
    @inline(never)
    public func checkInvariants() {
        for index in tables.indices.dropFirst() {
            precondition(tables[index - 1].table < tables[index].table, "tables not sorted")
        }
        for table in tables {
            for index in table.columns.indices.dropFirst() {
                precondition(table.columns[index - 1].field < table.columns[index].field,
                             "columns not sorted")
            }
        }
        objects.checkInvariants()
        for record in objects.records {
            guard let tableIndex = tableIndex(record.object.table) else {
                preconditionFailure("object in an undeclared table")
            }
            let table = tables[tableIndex]
            precondition(table.accepts(record.object.key), "object key of the wrong type")
            for index in record.fields.indices.dropFirst() {
                precondition(record.fields[index - 1].field < record.fields[index].field,
                             "fields not sorted")
            }
            for slot in record.fields {
                guard let columnIndex = table.columnIndex(slot.field) else {
                    preconditionFailure("field without a column")
                }
                let column = table.columns[columnIndex]
                switch slot.content {
                case .scalar(let value):
                    precondition(column.collection == .single, "scalar in a collection column")
                    precondition(column.accepts(value), "scalar of the wrong type")
                case .list(let elements):
                    precondition(column.collection == .list, "list in a non-list column")
                    precondition(!elements.isEmpty, "empty list stored")
                case .set(let elements):
                    precondition(column.collection == .set, "set in a non-set column")
                    precondition(!elements.isEmpty, "empty set stored")
                    for index in elements.indices.dropFirst() {
                        precondition(valueLess(elements[index - 1], elements[index]),
                                     "set not sorted and unique")
                    }
                }
            }
        }
    }
#else
    /// Compiled out without `SYNCSIM_INTERNAL_CHECKS`.
    @inline(__always)
    public func checkInvariants() {}
#endif
}
