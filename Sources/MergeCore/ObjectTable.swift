//! An open-addressing hash table of objects keyed by a fixed 64-bit hash of (table, pk).
//!
//! Layout: `records` holds the objects densely (erase swaps the last record into the hole);
//! `slots` is a power-of-two array of `UInt64`, each either 0 (empty) or the high 32 bits of
//! the object's hash (a tag that rejects most mismatches without touching `records`) joined
//! with `recordIndex + 1`. Probing is linear; erase uses backward-shift deletion, so there are
//! no tombstones and probe chains stay short. The load factor stays at or below 1/2.
//! The hash is `stableHash(ObjectRef)`: fixed, so layout and cost do not depend on the process.

/// The content of one field of one object.
enum FieldContent: Hashable, Sendable {
    case scalar(Value)
    case list(ChunkedList)
    /// Sorted by `valueLess`, unique.
    case set(ContiguousArray<Value>)
}

/// One set field of an object.
struct FieldSlot: Hashable, Sendable {
    var field: FieldID
    var content: FieldContent
}

/// One object: its reference, its cached hash and its set fields (sorted by field, unique).
struct ObjectRecord: Sendable {
    var object: ObjectRef
    var hash: UInt64
    var fields: ContiguousArray<FieldSlot>

    /// The position of `field` in `fields`, or the position to insert it at (negated minus 1).
    @inline(__always)
    func fieldPosition(_ field: FieldID) -> Int {
        var index = 0
        let count = fields.count
        while index < count {
            let candidate = fields[index].field
            if candidate == field { return index }
            if candidate > field { break }
            index += 1
        }
        return -index - 1
    }
}

struct ObjectTable: Sendable {
    private(set) var slots: ContiguousArray<UInt64> = []
    /// Internal code may edit `fields` in place; `object` and `hash` must not change.
    var records: ContiguousArray<ObjectRecord> = []

    var count: Int { records.count }

    @inline(__always)
    private static func tag(_ hash: UInt64) -> UInt64 { hash & 0xFFFF_FFFF_0000_0000 }

    /// The record index of `object`, or nil.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func find(_ object: ObjectRef, hash: UInt64) -> Int? {
        if slots.isEmpty { return nil }
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        let tag = Self.tag(hash)
        while true {
            let slot = slots[position]
            if slot == 0 { return nil }
            if slot & 0xFFFF_FFFF_0000_0000 == tag {
                let index = Int(slot & 0xFFFF_FFFF) - 1
                if records[index].hash == hash && records[index].object == object {
                    return index
                }
            }
            position = (position + 1) & mask
        }
    }

    /// Inserts a new object (which must not be present) and returns its record index.
    /// - Complexity: O(1) amortized.
    @inline(__always)
    mutating func insert(_ object: ObjectRef, hash: UInt64) -> Int {
        precondition(records.count < MergeLimits.objectsMax, "object table full")
        if (records.count + 1) * 2 > slots.count { grow() }
        let index = records.count
        records.append(ObjectRecord(object: object, hash: hash, fields: []))
        place(hash: hash, index: index)
        return index
    }

    @inline(__always)
    private mutating func place(hash: UInt64, index: Int) {
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        while slots[position] != 0 { position = (position + 1) & mask }
        slots[position] = Self.tag(hash) | UInt64(index + 1)
    }

    private mutating func grow() {
        let capacity = Swift.max(16, slots.count * 2)
        slots = ContiguousArray(repeating: 0, count: capacity)
        records.reserveCapacity(capacity / 2)
        for index in records.indices { place(hash: records[index].hash, index: index) }
    }

    /// The slot position holding record `index`.
    private func slotPosition(ofRecord index: Int) -> Int {
        let mask = slots.count - 1
        let wanted = Self.tag(records[index].hash) | UInt64(index + 1)
        var position = Int(truncatingIfNeeded: records[index].hash) & mask
        while slots[position] != wanted {
            precondition(slots[position] != 0, "object table: record missing from its slots")
            position = (position + 1) & mask
        }
        return position
    }

    /// Removes record `index`: backward-shift deletion in the slots, then the last record is
    /// moved into the hole.
    /// - Complexity: O(1) expected.
    mutating func remove(at index: Int) {
        precondition(index < records.count, "object table: record index out of range")
        let mask = slots.count - 1
        var hole = slotPosition(ofRecord: index)
        var position = (hole + 1) & mask
        while true {
            let slot = slots[position]
            if slot == 0 { break }
            let ideal = Int(truncatingIfNeeded: records[Int(slot & 0xFFFF_FFFF) - 1].hash) & mask
            // Move the entry back into the hole if the hole lies on its probe path.
            if (position &- ideal) & mask >= (position &- hole) & mask {
                slots[hole] = slot
                hole = position
            }
            position = (position + 1) & mask
        }
        slots[hole] = 0
        let last = records.count - 1
        if index != last {
            let lastPosition = slotPosition(ofRecord: last)
            slots[lastPosition] = Self.tag(records[last].hash) | UInt64(index + 1)
            records.swapAt(index, last)
        }
        records.removeLast()
    }

    /// Removes `field` from every object of `table`.
    /// - Complexity: O(objects).
    mutating func removeField(_ field: FieldID, table: TableID) {
        for index in records.indices where records[index].object.table == table {
            let position = records[index].fieldPosition(field)
            if position >= 0 { records[index].fields.remove(at: position) }
        }
    }

    /// Checks that every record is reachable through its slot and every slot names a record.
    func checkInvariants() {
        var occupied = 0
        for slot in slots where slot != 0 {
            occupied += 1
            let index = Int(slot & 0xFFFF_FFFF) - 1
            precondition(index < records.count, "object table: slot names no record")
            precondition(Self.tag(records[index].hash) == slot & 0xFFFF_FFFF_0000_0000,
                         "object table: slot tag disagrees with its record")
        }
        precondition(occupied == records.count, "object table: slot count != record count")
        for index in records.indices {
            precondition(records[index].hash == stableHash(records[index].object),
                         "object table: cached hash is stale")
            precondition(find(records[index].object, hash: records[index].hash) == index,
                         "object table: record not found by its key")
        }
    }
}
