//! Values, keys and object references of the MergeCore data model.
//!
//! The model follows realm-core's sync instruction set (REALM-SEMANTICS §1): objects are
//! identified by `(table, primary key)`; tables and fields are named by small dense integers
//! (`TableID`, `FieldID`) that the host interns, so no string compare or SipHash lookup sits on
//! the per-instruction path. Names travel with the schema instructions (`AddTable`, `AddColumn`).

/// A table (realm "class") identifier, interned by the host. Dense small integers are best.
public typealias TableID = UInt32
/// A field (column) identifier within a table, interned by the host.
public typealias FieldID = UInt32

/// A 12-byte ObjectId-like key: 4 bytes of time, 8 bytes of counter/randomness.
public struct ObjectID: Hashable, Comparable, Sendable {
    public var high: UInt32
    public var low: UInt64
    public init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }
    public static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

/// A 16-byte UUID-like key.
public struct UUIDValue: Hashable, Comparable, Sendable {
    public var high: UInt64
    public var low: UInt64
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
    public static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

/// A primary key. Null is a valid, untyped key (as in the reference); Mixed is not allowed.
public enum PrimaryKey: Hashable, Comparable, Sendable {
    case null
    case int(Int64)
    case string(String)
    case objectId(ObjectID)
    case uuid(UUIDValue)
}

/// The type of a primary key column, declared by `AddTable`.
public enum PrimaryKeyType: UInt8, Hashable, Sendable, CaseIterable {
    case int = 1
    case string = 3
    case objectId = 10
    case uuid = 11
}

/// A reference to one object: its table and primary key.
public struct ObjectRef: Hashable, Comparable, Sendable {
    public var table: TableID
    public var key: PrimaryKey
    public init(table: TableID, key: PrimaryKey) {
        self.table = table
        self.key = key
    }
    public static func < (a: Self, b: Self) -> Bool {
        a.table != b.table ? a.table < b.table : a.key < b.key
    }
}

/// One field of one object: a list, a set or a scalar, by its owner.
public struct FieldRef: Hashable, Comparable, Sendable {
    public var object: ObjectRef
    public var field: FieldID
    public init(object: ObjectRef, field: FieldID) {
        self.object = object
        self.field = field
    }
    public static func < (a: Self, b: Self) -> Bool {
        a.object != b.object ? a.object < b.object : a.field < b.field
    }
}

/// A scalar value stored in a field, a list element or a set element.
///
/// Doubles compare by bit pattern so that equality is reflexive (NaN == NaN) and convergence
/// checks are exact; `-0.0` and `0.0` are therefore different values, as they are on disk.
public enum Value: Sendable {
    case null
    case int(Int64)
    case bool(Bool)
    case string(String)
    case double(Double)
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    case timestamp(Int64)
    case objectId(ObjectID)
    case uuid(UUIDValue)
    case link(ObjectRef)
}

extension Value: Hashable {
    public static func == (a: Value, b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.int(x), .int(y)): x == y
        case let (.bool(x), .bool(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.double(x), .double(y)): x.bitPattern == y.bitPattern
        case let (.timestamp(x), .timestamp(y)): x == y
        case let (.objectId(x), .objectId(y)): x == y
        case let (.uuid(x), .uuid(y)): x == y
        case let (.link(x), .link(y)): x == y
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .int(let x): hasher.combine(1 as UInt8); hasher.combine(x)
        case .bool(let x): hasher.combine(2 as UInt8); hasher.combine(x)
        case .string(let x): hasher.combine(3 as UInt8); hasher.combine(x)
        case .double(let x): hasher.combine(7 as UInt8); hasher.combine(x.bitPattern)
        case .timestamp(let x): hasher.combine(5 as UInt8); hasher.combine(x)
        case .objectId(let x): hasher.combine(10 as UInt8); hasher.combine(x)
        case .uuid(let x): hasher.combine(11 as UInt8); hasher.combine(x)
        case .link(let x): hasher.combine(9 as UInt8); hasher.combine(x)
        }
    }
}

/// The declared type of a column. `mixed` accepts any value (the reference's `type = Null`).
public enum ValueType: UInt8, Hashable, Sendable, CaseIterable {
    case int = 1
    case bool = 2
    case string = 3
    case timestamp = 5
    case double = 7
    case link = 9
    case objectId = 10
    case uuid = 11
    case mixed = 0
}

/// Whether a column holds one value, a list, or a set.
public enum CollectionKind: UInt8, Hashable, Sendable, CaseIterable {
    case single = 0
    case list = 1
    case set = 3
}
