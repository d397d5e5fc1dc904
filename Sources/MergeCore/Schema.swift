//! The replica's schema: tables declared by `AddTable`, columns declared by `AddColumn`.

/// A column of a table, as declared by `AddColumn`.
public struct ColumnSchema: Hashable, Sendable {
    public var field: FieldID
    public var type: ValueType
    public var nullable: Bool
    public var collection: CollectionKind
    public var linkTarget: TableID?

    public init(field: FieldID, type: ValueType, nullable: Bool, collection: CollectionKind,
                linkTarget: TableID?) {
        self.field = field
        self.type = type
        self.nullable = nullable
        self.collection = collection
        self.linkTarget = linkTarget
    }

    /// Whether `value` may be stored in this column (a single value, or one element).
    @inline(__always)
    func accepts(_ value: Value) -> Bool {
        switch value {
        case .null: return nullable || type == .mixed
        case .link(let target):
            if type == .mixed { return true }
            return type == .link && target.table == linkTarget
        case .int: return type == .int || type == .mixed
        case .bool: return type == .bool || type == .mixed
        case .string: return type == .string || type == .mixed
        case .double: return type == .double || type == .mixed
        case .timestamp: return type == .timestamp || type == .mixed
        case .objectId: return type == .objectId || type == .mixed
        case .uuid: return type == .uuid || type == .mixed
        }
    }
}

/// A table, as declared by `AddTable`, with its columns sorted by field.
public struct TableSchema: Hashable, Sendable {
    public var table: TableID
    public var primaryKeyField: FieldID
    public var primaryKeyType: PrimaryKeyType
    public var primaryKeyNullable: Bool
    /// Sorted by `field`, unique.
    public internal(set) var columns: ContiguousArray<ColumnSchema>

    init(table: TableID, primaryKeyField: FieldID, primaryKeyType: PrimaryKeyType,
         primaryKeyNullable: Bool) {
        self.table = table
        self.primaryKeyField = primaryKeyField
        self.primaryKeyType = primaryKeyType
        self.primaryKeyNullable = primaryKeyNullable
        self.columns = []
    }

    /// The position of `field` in `columns`, or nil.
    @inline(__always)
    func columnIndex(_ field: FieldID) -> Int? {
        // Tables have few columns; a linear scan beats a binary search below ~32.
        var index = 0
        while index < columns.count {
            let candidate = columns[index].field
            if candidate == field { return index }
            if candidate > field { return nil }
            index += 1
        }
        return nil
    }

    /// Whether `key` fits this table's primary key column.
    @inline(__always)
    func accepts(_ key: PrimaryKey) -> Bool {
        switch key {
        case .null: primaryKeyNullable
        case .int: primaryKeyType == .int
        case .string: primaryKeyType == .string
        case .objectId: primaryKeyType == .objectId
        case .uuid: primaryKeyType == .uuid
        }
    }
}
