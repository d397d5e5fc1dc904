//! A replica: the state one peer holds, built by applying changesets (REALM-SEMANTICS §1).
//!
//! Tables and columns come from schema instructions; objects are keyed by `(table, primary
//! key)` in an open-addressing `ObjectTable` with a fixed hash, and each object keeps its set
//! fields in a small array sorted by `FieldID`. Erased objects are removed outright; links to
//! them stay stored and read as null (single links) or are hidden (lists and sets), like the
//! reference's tombstones. Recreating an object with the same key makes those links resolve
//! again, as resurrecting a tombstone does in the reference.
//!
//! Memory: one `ObjectRecord` (object reference, cached hash, field array pointer) plus about
//! two 8-byte slots per object, plus the field array's heap block.

/// The state of one replica (client or server) of the synced data.
///
/// `==` compares content (schema, objects and their fields), not the object table's layout,
/// so two replicas that applied the same operations in different orders compare equal.
public struct Replica: Sendable {
    /// Declared tables, sorted by `table`, unique.
    public internal(set) var tables: ContiguousArray<TableSchema> = []
    var objects = ObjectTable()

    /// Creates an empty replica: no tables, no objects.
    public init() {}

    /// The number of live objects in all tables.
    /// - Complexity: O(1).
    public var objectCount: Int { objects.count }

    /// The schema of `table`, or nil if it was never declared.
    /// - Complexity: O(log tables).
    public func schema(of table: TableID) -> TableSchema? {
        tableIndex(table).map { tables[$0] }
    }

    /// Whether `object` exists (was created and not erased since).
    /// - Complexity: O(1) expected.
    public func contains(_ object: ObjectRef) -> Bool {
        objects.find(object, hash: stableHash(object)) != nil
    }

    /// The value of a single-valued field; nil when there is no such object or the field is
    /// unset. A link to an erased object reads as `.null`.
    /// - Complexity: O(fields of the object) after an O(1) expected lookup.
    public func value(of object: ObjectRef, field: FieldID) -> Value? {
        guard let slot = fieldContent(of: object, field: field) else { return nil }
        guard case .scalar(let value) = slot else { return nil }
        return resolved(value)
    }

    /// The number of elements in the list `field` of `object`, links to erased objects
    /// included: the size that list instructions' indices and `priorSize` refer to. 0 when the
    /// object or the list is missing. Allocates nothing (`list(of:field:)` copies the visible
    /// elements).
    public func listCount(of object: ObjectRef, field: FieldID) -> Int {
        if case .list(let elements) = fieldContent(of: object, field: field) {
            return elements.count
        }
        return 0
    }

    /// The elements of a list field, links to erased objects hidden; nil when there is no such
    /// object or the field is not a list. An unset list is empty.
    /// - Complexity: O(list size).
    public func list(of object: ObjectRef, field: FieldID) -> [Value]? {
        guard let index = objects.find(object, hash: stableHash(object)) else { return nil }
        let record = objects.records[index]
        let position = record.fieldPosition(field)
        if position < 0 {
            return column(object.table, field)?.collection == .list ? [] : nil
        }
        guard case .list(let elements) = record.fields[position].content else { return nil }
        return elements.filter(isVisible)
    }

    /// The elements of a set field in the deterministic value order, links to erased objects
    /// hidden; nil when there is no such object or the field is not a set.
    /// - Complexity: O(set size).
    public func setElements(of object: ObjectRef, field: FieldID) -> [Value]? {
        guard let index = objects.find(object, hash: stableHash(object)) else { return nil }
        let record = objects.records[index]
        let position = record.fieldPosition(field)
        if position < 0 {
            return column(object.table, field)?.collection == .set ? [] : nil
        }
        guard case .set(let elements) = record.fields[position].content else { return nil }
        return elements.filter(isVisible)
    }

    /// The live objects of `table`, sorted.
    /// - Complexity: O(objects + k log k) for k objects in the table.
    public func objects(in table: TableID) -> [ObjectRef] {
        var result: [ObjectRef] = []
        for record in objects.records where record.object.table == table {
            result.append(record.object)
        }
        result.sort()
        return result
    }

    /// A digest of the content (schema, objects, fields, list order, set elements), equal for
    /// equal replicas and identical across processes and runs (fixed hash functions; objects
    /// combine commutatively, so the object table's layout does not matter).
    /// - Complexity: O(total content size).
    public func contentDigest() -> UInt64 {
        var digest: UInt64 = stableMix(UInt64(tables.count))
        for table in tables {
            digest = stableCombine(digest, UInt64(table.table))
            digest = stableCombine(digest, UInt64(table.primaryKeyField))
            digest = stableCombine(digest, UInt64(table.primaryKeyType.rawValue))
            digest = stableCombine(digest, table.primaryKeyNullable ? 1 : 0)
            for column in table.columns {
                digest = stableCombine(digest, UInt64(column.field))
                digest = stableCombine(digest, UInt64(column.type.rawValue))
                digest = stableCombine(digest, column.nullable ? 1 : 0)
                digest = stableCombine(digest, UInt64(column.collection.rawValue))
                digest = stableCombine(digest, column.linkTarget.map { UInt64($0) + 1 } ?? 0)
            }
        }
        var objectSum: UInt64 = 0
        // Records and fields read in place: copies would retain their arrays one by one.
        objects.records.withUnsafeBufferPointer { records in
            for index in records.indices {
                objectSum = objectSum &+ stableMix(recordDigest(records[index]))
            }
        }
        digest = stableCombine(digest, UInt64(objects.count))
        return stableCombine(digest, objectSum)
    }

    // MARK: - Internal helpers

    @inline(__always)
    func tableIndex(_ table: TableID) -> Int? {
        var low = 0
        var high = tables.count
        while low < high {
            let middle = (low + high) / 2
            let candidate = tables[middle].table
            if candidate == table { return middle }
            if candidate < table { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    func column(_ table: TableID, _ field: FieldID) -> ColumnSchema? {
        guard let tableIndex = tableIndex(table) else { return nil }
        return tables[tableIndex].columnIndex(field).map { tables[tableIndex].columns[$0] }
    }

    func fieldContent(of object: ObjectRef, field: FieldID) -> FieldContent? {
        guard let index = objects.find(object, hash: stableHash(object)) else { return nil }
        let record = objects.records[index]
        let position = record.fieldPosition(field)
        return position >= 0 ? record.fields[position].content : nil
    }

    func isVisible(_ value: Value) -> Bool {
        if case .link(let target) = value { return contains(target) }
        return true
    }

    func resolved(_ value: Value) -> Value {
        if case .link(let target) = value, !contains(target) { return .null }
        return value
    }

    private func recordDigest(_ record: ObjectRecord) -> UInt64 {
        var digest = record.hash
        record.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                digest = stableCombine(digest, UInt64(fields[index].field))
                switch fields[index].content {
                case .scalar(let value):
                    digest = stableCombine(digest, stableHash(value))
                case .list(let elements):
                    digest = stableCombine(digest, 0x4C49_5354 ^ UInt64(elements.count))
                    for element in elements { digest = stableCombine(digest, stableHash(element)) }
                case .set(let elements):
                    digest = stableCombine(digest, 0x5345_5400 ^ UInt64(elements.count))
                    for element in elements { digest = stableCombine(digest, stableHash(element)) }
                }
            }
        }
        return digest
    }
}

extension Replica: Equatable {
    /// Content equality: same schema, same objects, same fields (see the type's discussion).
    /// - Complexity: O(total content size).
    public static func == (lhs: Replica, rhs: Replica) -> Bool {
        guard lhs.tables == rhs.tables, lhs.objects.count == rhs.objects.count else {
            return false
        }
        for record in lhs.objects.records {
            guard let index = rhs.objects.find(record.object, hash: record.hash) else {
                return false
            }
            if rhs.objects.records[index].fields != record.fields { return false }
        }
        return true
    }
}

extension Replica {
    /// A readable, deterministic dump of the content, for test failure messages.
    public func debugDump() -> String {
        var lines: [String] = []
        for table in tables {
            lines.append(
                "table \(table.table) pk=\(table.primaryKeyField) columns=\(table.columns.map { "\($0.field):\($0.type)\($0.collection == .single ? "" : "[\($0.collection)]")" })"
            )
        }
        var records = Array(objects.records)
        records.sort { $0.object < $1.object }
        for record in records {
            let fields = record.fields.map { slot -> String in
                switch slot.content {
                case .scalar(let value): "\(slot.field)=\(value)"
                case .list(let elements): "\(slot.field)=\(Array(elements))"
                case .set(let elements):
                    "\(slot.field)={\(elements.map { "\($0)" }.joined(separator: ","))}"
                }
            }
            lines.append(
                "  \(record.object.table)/\(record.object.key): \(fields.joined(separator: " "))")
        }
        return lines.joined(separator: "\n")
    }
}
