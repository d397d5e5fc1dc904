//! Fixed, process-independent hashing and ordering of keys and values.
//!
//! Swift's `Hasher` is seeded per process, so nothing in MergeCore that must be reproducible
//! (the object table's layout does not have to be, but digests do) uses it. These functions are
//! fixed: SplitMix64's finaliser over the fields, FNV-1a over the UTF-8 bytes of strings. They
//! are also cheap enough for the per-instruction path (no allocation, no existential).

/// SplitMix64's finaliser: a fixed bijective 64-bit mixing function.
@inline(__always)
@usableFromInline
func stableMix(_ value: UInt64) -> UInt64 {
    var z = value &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// Combines `value` into `state` (order-dependent).
@inline(__always)
func stableCombine(_ state: UInt64, _ value: UInt64) -> UInt64 {
    stableMix(state &* 0x0000_0100_0000_01B3 ^ value)
}

/// FNV-1a over the string's UTF-8 bytes, then mixed.
@inline(__always)
func stableHash(_ string: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var string = string
    string.withUTF8 { bytes in
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
    }
    return stableMix(hash ^ UInt64(truncatingIfNeeded: string.utf8.count))
}

/// One multiply–xorshift round: a cheap fixed mixer for in-memory hash tables, whose low bits
/// (bucket) and high bits (tag) both depend on every input bit.
@inline(__always)
func quickMix(_ value: UInt64) -> UInt64 {
    let product = (value ^ (value >> 31)) &* 0xD6E8_FEB8_6659_FD93
    return product ^ (product >> 32)
}

/// A fixed hash of a primary key (type tag and payload), cheap for integer keys.
@inline(__always)
func stableHash(_ key: PrimaryKey) -> UInt64 {
    switch key {
    case .null: return 0x5A5A_0000_0000_0001
    case .int(let value): return stableIntKeyHash(UInt64(bitPattern: value))
    case .string(let value): return stableHash(value) ^ 0x3000_0000_0000_0000
    case .objectId(let value):
        return stableCombine(stableMix(UInt64(value.high) | 0xA_0000_0000), value.low)
    case .uuid(let value): return stableCombine(stableMix(value.high ^ 0xB), value.low)
    }
}

/// A fixed hash of an object reference: what the replica's object table and the merge's
/// conflict-group index are keyed by. Two multiplies for integer keys; per-instruction cost
/// on a long history scan is dominated by this and one probe.
@inline(__always)
func stableHash(_ object: ObjectRef) -> UInt64 {
    stableObjectHash(table: object.table, keyHash: stableHash(object.key))
}

/// `stableHash(PrimaryKey.int)` of a key's bit pattern (the merge's scan columns hold keys
/// as bit patterns).
@inline(__always)
func stableIntKeyHash(_ bitPattern: UInt64) -> UInt64 {
    bitPattern &* 0x9E37_79B9_7F4A_7C15
}

/// `stableHash(ObjectRef)` of the object with integer key `bitPattern` in `table`, without
/// building the reference.
@inline(__always)
func stableIntObjectHash(table: TableID, key bitPattern: UInt64) -> UInt64 {
    stableObjectHash(table: table, keyHash: stableIntKeyHash(bitPattern))
}

/// `stableHash(ObjectRef)` from the table and the key's `stableHash`.
@inline(__always)
func stableObjectHash(table: TableID, keyHash: UInt64) -> UInt64 {
    quickMix(keyHash ^ (UInt64(table) &* 0xBF58_476D_1CE4_E5B9))
}

/// A fixed hash of a value (type tag and payload; doubles by bit pattern).
func stableHash(_ value: Value) -> UInt64 {
    switch value {
    case .null: return 0x0123_4567_89AB_CDEF
    case .int(let x): return stableCombine(1, UInt64(bitPattern: x))
    case .bool(let x): return stableCombine(2, x ? 1 : 0)
    case .string(let x): return stableCombine(3, stableHash(x))
    case .double(let x): return stableCombine(7, x.bitPattern)
    case .timestamp(let x): return stableCombine(5, UInt64(bitPattern: x))
    case .objectId(let x): return stableCombine(stableCombine(10, UInt64(x.high)), x.low)
    case .uuid(let x): return stableCombine(stableCombine(11, x.high), x.low)
    case .link(let x): return stableCombine(9, stableHash(x))
    }
}

extension Value {
    /// The rank of the value's type in the deterministic total order of values.
    @inline(__always)
    var orderRank: UInt8 {
        switch self {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .double: 3
        case .timestamp: 4
        case .string: 5
        case .objectId: 6
        case .uuid: 7
        case .link: 8
        }
    }
}

/// A bit-pattern key whose unsigned order is IEEE total order for doubles; distinct bit
/// patterns get distinct keys, consistent with `Value`'s bit-pattern equality.
@inline(__always)
func doubleOrderKey(_ x: Double) -> UInt64 {
    let bits = x.bitPattern
    return bits >> 63 == 1 ? ~bits : bits | (1 << 63)
}

/// The deterministic total order of values used for set elements: type rank, then payload.
/// Strings compare by Swift's `<` (Unicode canonical order), which is fixed across runs.
func valueLess(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.null, .null): return false
    case let (.bool(x), .bool(y)): return !x && y
    case let (.int(x), .int(y)): return x < y
    case let (.double(x), .double(y)): return doubleOrderKey(x) < doubleOrderKey(y)
    case let (.timestamp(x), .timestamp(y)): return x < y
    case let (.string(x), .string(y)): return x < y
    case let (.objectId(x), .objectId(y)): return x < y
    case let (.uuid(x), .uuid(y)): return x < y
    case let (.link(x), .link(y)): return x < y
    default: return a.orderRank < b.orderRank
    }
}
