//! The transform's working memory: a struct-of-arrays arena of scanned instructions and the
//! object-node table with union-find (conflict groups, REALM-SEMANTICS §2.4).
//!
//! Per instruction the arena keeps 26 bytes of primitives (kind, flags, node, field, list
//! indices, prior size, changeset and position), so the pairwise rules compare integers and
//! touch the `Instruction` enum only on real conflicts; incoming instructions of the groups
//! the tight loops walk also get a 16-byte `GroupMinor` record in group order.

internal import CPrefetch

/// An incoming object instruction's fields that the tight loops compare, packed in 16 bytes
/// (`TransformArena.groupMinors`): its changeset's discriminant rank and its arena flags.
/// `discard` keeps the alive bit equal to the arena's.
struct GroupMinor: Sendable {
    var node: Int32
    var field: UInt32
    var rank: UInt32
    var kind: UInt8
    var flags: UInt8
}

struct TransformArena: Sendable {
    static let alive: UInt8 = 1
    /// List indices or prior size changed: the instruction must be rebuilt on write-back.
    static let dirty: UInt8 = 2
    /// The Update is a default-value write.
    static let isDefault: UInt8 = 4
    /// The instruction was replaced in its changeset (an AddInteger folded into an Update).
    static let replaced: UInt8 = 8
    /// An incoming slot with a packed record (`groupMinors`), whose alive bit `discard` mirrors.
    static let packed: UInt8 = 16
    /// Merged before the walk by `ListSequenceMerge` (`storeSequenceEdits`, on both sides):
    /// the walk over the local slots skips it on its flags alone.
    static let sequenced: UInt8 = 32
    /// The flags a slot has when it is as its changeset holds it, masked by `untouchedMask`:
    /// alive, and never rewritten, replaced or merged by the sequence merge.
    static let untouchedMask: UInt8 = alive | dirty | replaced | sequenced

    var kind: ContiguousArray<UInt8> = []
    var flags: ContiguousArray<UInt8> = []
    /// Object node, or -1 for schema instructions.
    var node: ContiguousArray<Int32> = []
    /// Field, or `UInt32.max` for table and object instructions.
    var field: ContiguousArray<UInt32> = []
    /// List index (ArrayMove: from).
    var index: ContiguousArray<UInt32> = []
    /// ArrayMove's destination ("to"), for the move slots only: `slot << 32 | to`, in slot
    /// order (slots are appended in order; `moveTarget`, `setMoveTarget`). A column of it cost
    /// 4 bytes for every slot of every merge, though moves are rare: 8 bytes per merged
    /// instruction when a client merges a download against as many local instructions.
    private(set) var moveTargets: ContiguousArray<UInt64> = []
    var priorSize: ContiguousArray<UInt32> = []
    var changeset: ContiguousArray<UInt32> = []
    var position: ContiguousArray<UInt32> = []
    /// Slots `0 ..< localCount` are local (major), the rest incoming (minor).
    var localCount = 0
    /// The incoming object instructions' compared fields in group order (`groupPositions`
    /// order), so the tight loops filter a group's minors from consecutive 16-byte records
    /// instead of five columns at scattered slots. Filled one group at a time, the first time
    /// a tight loop walks it (`Transformer.packGroup`), which sets the slot's `packed` flag.
    var groupMinors: ContiguousArray<GroupMinor> = []
    /// `groupCursor[slot - localCount]`: a packed incoming slot's index in `groupMinors`.
    var groupCursor: ContiguousArray<Int32> = []
    /// Blocks of the list groups' minors, for the list loop's skipping
    /// (`Transform+ListBlocks.swift`); cut per merge, group by group.
    var listBlocks: ContiguousArray<ListBlock> = []
    /// How many times a list major passed a whole block, alone or in a run (a statistic for
    /// tests; never reset).
    var listBlocksPassed = 0
    /// How many list majors `sweepListMajors` walked (a statistic for tests; never reset).
    var listMajorsSwept = 0
    /// Local majors merged by `sweepUpdateMajors` (a statistic for tests; never reset).
    var updateMajorsSwept = 0
    /// Swept Updates whose loop stopped at a minor the generic rules took (for tests).
    var updateSweepHandoffs = 0
    /// Local Updates of large groups merged by `sweepUpdateMajors` through `FieldRunSweep` (a
    /// statistic for tests; never reset).
    var fieldRunMajorsSwept = 0
    /// How the majors of touched runs met uniform blocks (`ListCells`; for tests; never reset).
    var listCellStats = ListCellStats()
    /// Space for `ListCells` (`walkTouchedBlocks`), kept from merge to merge.
    var listCellSpace: ContiguousArray<ListCell> = []
    var listChunkSpace: ContiguousArray<ListCellChunk> = []
    /// The majors of a run as `ListCells.meetTiles` meets them, kept likewise.
    var listMajorSpace: ContiguousArray<ListMajor> = []

    var count: Int { kind.count }

    /// Empties the arena for a merge, but for its first `kept` slots (local slots an earlier
    /// merge appended from uniform history columns, which `Transformer.scanHistory` keeps:
    /// `HistoryPrefix`), and reserves room for `capacity` slots.
    /// - Precondition: no slot below `kept` has a move target (kept slots are list inserts
    ///   and erases).
    mutating func reset(capacity: Int, keepingSlots kept: Int = 0) {
        precondition(kept <= count, "kept slots beyond the arena")
        let dropped = count - kept
        kind.removeLast(dropped)
        flags.removeLast(dropped)
        node.removeLast(dropped)
        field.removeLast(dropped)
        index.removeLast(dropped)
        moveTargets.removeAll(keepingCapacity: true)
        priorSize.removeLast(dropped)
        changeset.removeLast(dropped)
        position.removeLast(dropped)
        kind.reserveCapacity(capacity)
        flags.reserveCapacity(capacity)
        node.reserveCapacity(capacity)
        field.reserveCapacity(capacity)
        index.reserveCapacity(capacity)
        priorSize.reserveCapacity(capacity)
        changeset.reserveCapacity(capacity)
        position.reserveCapacity(capacity)
        localCount = 0
    }

    @inline(__always)
    func isAlive(_ slot: Int) -> Bool { flags[slot] & Self.alive != 0 }

    /// Discards `slot`; for a packed slot, in its packed record too (only slots of groups a
    /// tight loop walks pay for that).
    @inline(__always)
    mutating func discard(_ slot: Int) {
        let remaining = flags[slot] & ~Self.alive
        flags[slot] = remaining
        if remaining & Self.packed != 0 {
            groupMinors[Int(groupCursor[slot - localCount])].flags &= ~Self.alive
        }
    }

    @inline(__always)
    mutating func markDirty(_ slot: Int) { flags[slot] |= Self.dirty }

    /// Fills a new slot from a scan entry alone (`entry.fillsSlot`: no list indices), without
    /// reading the instruction.
    @inline(__always)
    mutating func append(_ entry: ScanEntry, changeset changesetIndex: Int, position offset: Int,
                         node objectNode: Int32) {
        kind.append(entry.kind)
        flags.append(entry.flags)
        node.append(objectNode)
        field.append(entry.field)
        index.append(0)
        priorSize.append(0)
        changeset.append(UInt32(changesetIndex))
        position.append(UInt32(offset))
    }

    /// Appends one slot per position `p` in `0 ..< count`, filled from `entries[base + p]` and
    /// `nodes[base + p]` alone: what `append(_:changeset:position:node:)` does for each, with
    /// one uniqueness check per column instead of one per column and slot. Every entry must
    /// `fillsSlot`, unless `listIndicesFollow`: then the list slots take the indices their
    /// entries cache (`ScanEntry.cachedListIndices`), and if any entry caches none this
    /// returns true and the caller fills the list indices of the list slots
    /// (`fillListIndices`) before anything reads them.
    @discardableResult
    mutating func appendEntries(
        _ entries: ContiguousArray<ScanEntry>, nodes: ContiguousArray<Int32>, base: Int,
        count: Int, changeset changesetIndex: Int, listIndicesFollow: Bool = false
    ) -> Bool {
        if count == 0 { return false }
        let start = growColumns(by: count, changeset: UInt32(changesetIndex))
        entries.withUnsafeBufferPointer { entries in
            nodes.withUnsafeBufferPointer { nodes in
                withSlotWriters { slots in
                    // A few columns at a time (`SlotWriters.writeEntries`).
                    for offset in 0..<count {
                        slots.node[start &+ offset] = nodes[base &+ offset]
                        slots.position[start &+ offset] = UInt32(truncatingIfNeeded: offset)
                    }
                    let lists = slots.writeEntries(
                        UnsafeBufferPointer(rebasing: entries[base..<base + count]), at: start)
                    precondition(listIndicesFollow || !lists,
                                 "appendEntries needs slots without list indices")
                }
            }
        }
        if !listIndicesFollow { return false }
        return entries.withUnsafeBufferPointer { entries in
            fillCachedListIndices(entries, base: base, count: count, start: start)
        }
    }

    /// Appends one slot per entry of a history changeset's uniform scan column
    /// (`ScanColumn.isUniform`), all on `node`, in changeset `changesetIndex`, at positions
    /// 0 ..< count, the list slots with the indices their entries cache: the slots
    /// `appendRuns` would append had the scan selected every entry, written straight from
    /// the column. Returns whether some list slot's entry caches none (the caller then fills
    /// it before anything reads it).
    mutating func appendUniform(
        _ entries: UnsafeBufferPointer<ScanEntry>, node nodeValue: Int32,
        changeset changesetIndex: Int
    ) -> Bool {
        let count = entries.count
        if count == 0 { return false }
        let start = growColumns(by: count, changeset: UInt32(changesetIndex))
        var lists = false
        withSlotWriters { slots in
            // A few columns at a time (`SlotWriters.writeEntries`).
            for offset in 0..<count {
                slots.node[start &+ offset] = nodeValue
                slots.position[start &+ offset] = UInt32(truncatingIfNeeded: offset)
            }
            lists = slots.writeEntries(entries, at: start)
        }
        if !lists { return false }
        return fillCachedListIndices(entries, base: 0, count: count, start: start)
    }

    /// Puts slots `start ..< start + entries.count`, which `appendUniform` appended from the
    /// uniform column `entries` in an earlier merge (every list entry an ArrayInsert or
    /// ArrayErase caching its indices), back as that append wrote them. A merge changes a local
    /// slot's kind, flags and list indices only, and marks every slot it changes in its flags
    /// (`untouchedMask`: rewritten, replaced, sequenced or discarded); those slots take their
    /// entries' values again, and the others are left as they are. Node, field, changeset
    /// and position are never written after the append.
    /// - Complexity: O(entries) to read the flags, and a write per changed slot.
    mutating func restoreUniform(_ entries: UnsafeBufferPointer<ScanEntry>, at start: Int) {
        if slotsPristine(start..<(start + entries.count)) { return }
        kind.withUnsafeMutableBufferPointer { kind in
            flags.withUnsafeMutableBufferPointer { flags in
                index.withUnsafeMutableBufferPointer { index in
                    priorSize.withUnsafeMutableBufferPointer { priorSize in
                        for offset in 0..<entries.count {
                            let slot = start &+ offset
                            if flags[slot] & Self.untouchedMask == Self.alive { continue }
                            let entry = entries[offset]
                            kind[slot] = entry.kind
                            flags[slot] = entry.flags
                            index[slot] = 0
                            priorSize[slot] = 0
                            let missing = Self.writeCachedListIndices(
                                entry, slot: slot, index: index, priorSize: priorSize)
                            precondition(!missing, "a kept history slot without list indices")
                        }
                    }
                }
            }
        }
    }

    /// Whether slots `start ..< start + entries.count` hold exactly what
    /// `appendUniform(entries, node: node, changeset: changesetIndex)` writes (debug checks of
    /// `HistoryPrefix`).
    func uniformSlotsMatch(
        _ entries: UnsafeBufferPointer<ScanEntry>, node nodeValue: Int32,
        changeset changesetIndex: Int, at start: Int
    ) -> Bool {
        guard start + entries.count <= count else { return false }
        for offset in 0..<entries.count {
            let slot = start + offset
            let entry = entries[offset]
            let list = entry.fillsSlot ? (index: 0, priorSize: 0) : entry.cachedListIndices
            guard let list, kind[slot] == entry.kind, flags[slot] == entry.flags,
                node[slot] == nodeValue, field[slot] == entry.field,
                changeset[slot] == UInt32(changesetIndex),
                position[slot] == UInt32(offset), index[slot] == list.index,
                priorSize[slot] == list.priorSize
            else { return false }
        }
        return true
    }

    /// Mutable raw views of the columns a batch append writes: one uniqueness check per column
    /// and batch, none per slot (`withSlotWriters`).
    struct SlotWriters {
        let kind: UnsafeMutableBufferPointer<UInt8>
        let flags: UnsafeMutableBufferPointer<UInt8>
        let node: UnsafeMutableBufferPointer<Int32>
        let field: UnsafeMutableBufferPointer<UInt32>
        let changeset: UnsafeMutableBufferPointer<UInt32>
        let position: UnsafeMutableBufferPointer<UInt32>

        /// Writes the kind, flags and field of slots `start ..< start + entries.count` from
        /// `entries`, in order; returns whether some entry has list indices
        /// (`ScanEntry.fillsSlot` false). The callers write the other columns in loops of
        /// their own: written all at once, the six columns' addresses and an entry's fields
        /// did not fit the registers (about 40 instructions per slot, where these loops take
        /// about a third of that).
        @inline(__always)
        @discardableResult
        func writeEntries(_ entries: UnsafeBufferPointer<ScanEntry>, at start: Int) -> Bool {
            var kinds: UInt64 = 0  // bit k & 63 set: some entry has kind k (`listKindsMask`)
            for offset in 0..<entries.count {
                let entry = entries[offset]
                kind[start &+ offset] = entry.kind
                flags[start &+ offset] = entry.flags
                field[start &+ offset] = entry.field
                kinds |= 1 << UInt64(entry.kind & 63)
            }
            return kinds & ScanEntry.listKindsMask != 0
        }

    }

    /// Runs `body` with mutable raw views of the columns a batch append writes.
    @inline(__always)
    mutating func withSlotWriters<Result>(_ body: (SlotWriters) -> Result) -> Result {
        kind.withUnsafeMutableBufferPointer { kind in
            flags.withUnsafeMutableBufferPointer { flags in
                node.withUnsafeMutableBufferPointer { node in
                    field.withUnsafeMutableBufferPointer { field in
                        changeset.withUnsafeMutableBufferPointer { changeset in
                            position.withUnsafeMutableBufferPointer { position in
                                body(SlotWriters(kind: kind, flags: flags, node: node,
                                                 field: field, changeset: changeset,
                                                 position: position))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Appends `count` slots of zeros (changeset `changesetIndex`) to every column but the
    /// sparse move targets, one uniqueness check per column; returns the first new slot.
    mutating func growColumns(by count: Int, changeset changesetIndex: UInt32) -> Int {
        let start = kind.count
        let needed = start + count
        kind.reserveAhead(needed, factor: Self.columnGrowthFactor)
        flags.reserveAhead(needed, factor: Self.columnGrowthFactor)
        node.reserveAhead(needed, factor: Self.columnGrowthFactor)
        field.reserveAhead(needed, factor: Self.columnGrowthFactor)
        index.reserveAhead(needed, factor: Self.columnGrowthFactor)
        priorSize.reserveAhead(needed, factor: Self.columnGrowthFactor)
        changeset.reserveAhead(needed, factor: Self.columnGrowthFactor)
        position.reserveAhead(needed, factor: Self.columnGrowthFactor)
        kind.append(contentsOf: repeatElement(0, count: count))
        flags.append(contentsOf: repeatElement(0, count: count))
        node.append(contentsOf: repeatElement(0, count: count))
        field.append(contentsOf: repeatElement(0, count: count))
        index.append(contentsOf: repeatElement(0, count: count))
        priorSize.append(contentsOf: repeatElement(0, count: count))
        changeset.append(contentsOf: repeatElement(changesetIndex, count: count))
        position.append(contentsOf: repeatElement(0, count: count))
        return start
    }

    /// How many times what it needs a column takes when it must grow
    /// (`ContiguousArray.reserveAhead`). Doubling faulted in about twice the columns' final
    /// size over a server's run; growing eightfold, about 1.14 times. A text-like server at
    /// K = 10 and 10^6 took 10 % fewer page faults, counted over the whole process.
    static let columnGrowthFactor = 8

    /// Reads the list indices of the list slots among `slots` (appended by `appendEntries`
    /// with `listIndicesFollow`) from their changeset's `instructions`, with the checks of
    /// `append(_:changeset:position:node:)`, over raw buffers (a subscript write costs a
    /// uniqueness check, and a copied instruction a retain).
    /// - Throws: `MergeError.indexBeyondPriorSize`, for the first slot in order that fails.
    mutating func fillListIndices(
        from instructions: ContiguousArray<Instruction>, slots: Range<Int>
    ) throws(MergeError) {
        let (kinds, positions) = (kind, position)
        var moves: [(slot: Int, to: UInt32)] = []  // rare: no allocation without a move
        let failure: MergeError? = index.withUnsafeMutableBufferPointer { index in
            priorSize.withUnsafeMutableBufferPointer { priorSize in
                for slot in slots where Kind.isList(kinds[slot]) {
                    let indices: ListIndices
                    do throws(MergeError) {
                        indices = try Self.checkedListIndices(
                            instructions, at: Int(positions[slot]))
                    } catch {
                        return error
                    }
                    index[slot] = indices.index
                    priorSize[slot] = indices.priorSize
                    if kinds[slot] == Kind.arrayMove { moves.append((slot, indices.index2)) }
                }
                return nil
            }
        }
        if let failure { throw failure }
        for move in moves { appendMoveTarget(move.slot, move.to) }
    }

    /// The list indices of list instruction `instructions[offset]`, checked against its prior
    /// size.
    @inline(__always)
    static func checkedListIndices(
        _ instructions: ContiguousArray<Instruction>, at offset: Int
    ) throws(MergeError) -> ListIndices {
        // Matched in place: a copied instruction costs a retain of its payload.
        switch instructions[offset] {
        case let .arrayUpdate(_, _, listIndex, _, priorSize),
            let .arrayErase(_, _, listIndex, priorSize):
            guard listIndex < priorSize else {
                throw .indexBeyondPriorSize(index: listIndex, priorSize: priorSize)
            }
            return ListIndices(index: listIndex, index2: 0, priorSize: priorSize)
        case let .arrayInsert(_, _, listIndex, _, priorSize):
            guard listIndex <= priorSize else {
                throw .indexBeyondPriorSize(index: listIndex, priorSize: priorSize)
            }
            return ListIndices(index: listIndex, index2: 0, priorSize: priorSize)
        case let .arrayMove(_, _, from, to, priorSize):
            guard from < priorSize else {
                throw .indexBeyondPriorSize(index: from, priorSize: priorSize)
            }
            guard to < priorSize else {
                throw .indexBeyondPriorSize(index: to, priorSize: priorSize)
            }
            return ListIndices(index: from, index2: to, priorSize: priorSize)
        default:
            preconditionFailure("only list instructions have list indices")
        }
    }

    /// Scans `instructions[offset]` into a new slot, matching the element in place (no copy
    /// of the instruction).
    @inline(__always)
    mutating func append(
        _ instructions: ContiguousArray<Instruction>, changeset changesetIndex: Int,
        position offset: Int, node objectNode: Int32
    ) throws(MergeError) {
        var flag = Self.alive
        var kindCode: UInt8
        var fieldValue = UInt32.max
        switch instructions[offset] {
        case .addTable:
            kindCode = Kind.addTable
        case .addColumn(_, let field, _, _, _, _):
            kindCode = Kind.addColumn
            fieldValue = field
        case .eraseColumn(_, let field):
            kindCode = Kind.eraseColumn
            fieldValue = field
        case .createObject:
            kindCode = Kind.createObject
        case .eraseObject:
            kindCode = Kind.eraseObject
        case let .update(_, field, _, isDefault):
            kindCode = Kind.update
            fieldValue = field
            if isDefault { flag |= Self.isDefault }
        case let .addInteger(_, field, _):
            kindCode = Kind.addInteger
            fieldValue = field
        case let .clear(_, field):
            kindCode = Kind.clear
            fieldValue = field
        case let .setInsert(_, field, _):
            kindCode = Kind.setInsert
            fieldValue = field
        case let .setErase(_, field, _):
            kindCode = Kind.setErase
            fieldValue = field
        case let .arrayUpdate(_, field, _, _, _):
            kindCode = Kind.arrayUpdate
            fieldValue = field
        case let .arrayInsert(_, field, _, _, _):
            kindCode = Kind.arrayInsert
            fieldValue = field
        case let .arrayMove(_, field, _, _, _):
            kindCode = Kind.arrayMove
            fieldValue = field
        case let .arrayErase(_, field, _, _):
            kindCode = Kind.arrayErase
            fieldValue = field
        }
        var indices = ListIndices(index: 0, index2: 0, priorSize: 0)
        if Kind.isList(kindCode) { indices = try Self.checkedListIndices(instructions, at: offset) }
        kind.append(kindCode)
        flags.append(flag)
        node.append(objectNode)
        field.append(fieldValue)
        index.append(indices.index)
        if kindCode == Kind.arrayMove { appendMoveTarget(kind.count - 1, indices.index2) }
        priorSize.append(indices.priorSize)
        changeset.append(UInt32(truncatingIfNeeded: changesetIndex))
        position.append(UInt32(truncatingIfNeeded: offset))
    }

    /// The Update vs Update rule of `Transform+Rules.swift` (`mergeUpdates`) for one major
    /// Update against the incoming slots `minors[from ..< to]` of its conflict group: the hot
    /// loop of map workloads. Minors on other objects, CreateObject and field instructions on
    /// other fields are skipped (their rules are no-ops); the loop stops at any other minor on
    /// the major's object (EraseObject, AddInteger on the field, …) or when the major is
    /// discarded.
    /// - Returns: the position to continue from.
    /// - Complexity: O(to − from).
    mutating func mergeUpdateRun(
        major: Int, minors: ContiguousArray<Int32>, from: Int, to: Int,
        ranks: ContiguousArray<UInt32>
    ) -> Int {
        precondition(major < localCount, "major slot must be local")
        precondition(from <= to && to <= minors.count && to <= groupMinors.count,
                     "minor range out of bounds")
        let majorUpdate = UpdateMajor(node: node[major], field: field[major],
                                      isDefault: flags[major] & Self.isDefault != 0,
                                      rank: ranks[Int(changeset[major])])
        var majorAlive = true
        var cursor = from
        groupMinors.withUnsafeMutableBufferPointer { packed in
            flags.withUnsafeMutableBufferPointer { flags in
                minors.withUnsafeBufferPointer { minors in
                    (cursor, majorAlive) = Self.updateRun(
                        majorUpdate, packed: packed, flags: flags, minors: minors, from: from,
                        to: to)
                }
            }
        }
        if !majorAlive { flags[major] &= ~Self.alive }
        return cursor
    }

    /// What `updateRun` needs of its major Update.
    struct UpdateMajor {
        let node: Int32
        let field: UInt32
        let isDefault: Bool
        let rank: UInt32
    }

    /// `mergeUpdateRun`'s loop over raw views (shared with `sweepUpdateMajors`): the packed
    /// records `packed[from ..< to]` against `major`, discarding the minors it beats (their
    /// slots' flags through `minors`, and their records).
    /// - Returns: the position to continue from, and whether the major is still alive (the
    ///   caller discards it otherwise).
    @inline(__always)
    static func updateRun(
        _ major: UpdateMajor, packed: UnsafeMutableBufferPointer<GroupMinor>,
        flags: UnsafeMutableBufferPointer<UInt8>, minors: UnsafeBufferPointer<Int32>,
        from: Int, to: Int
    ) -> (cursor: Int, majorAlive: Bool) {
        var cursor = from
        while cursor < to {
            let record = packed[cursor]
            // Dead minors, other objects, CreateObject and other fields are no-op rules.
            if record.flags & Self.alive == 0 || record.node != major.node
                || record.kind == Kind.createObject
                || (record.field != major.field && record.kind != Kind.eraseObject)
            {
                cursor += 1
                continue
            }
            // An erase of the object discards the major, whatever the discriminants.
            if record.kind == Kind.eraseObject { return (cursor + 1, false) }
            guard record.kind == Kind.update else { break }
            let minorDefault = record.flags & Self.isDefault != 0
            let majorLoses = major.isDefault == minorDefault
                ? record.rank > major.rank
                : major.isDefault
            if majorLoses { return (cursor + 1, false) }
            discardPacked(cursor, packed: packed, flags: flags, minors: minors)
            cursor += 1
        }
        return (cursor, true)
    }

    /// `discard(slot)` through raw views: the slot's flags and, for a packed slot, its
    /// record (`records[cursors[slot - localCount]]`).
    @inline(__always)
    static func discard(
        _ slot: Int, localCount: Int, flags: UnsafeMutableBufferPointer<UInt8>,
        records: UnsafeMutableBufferPointer<GroupMinor>, cursors: UnsafeBufferPointer<Int32>
    ) {
        let remaining = flags[slot] & ~alive
        flags[slot] = remaining
        if remaining & packed != 0 { records[Int(cursors[slot - localCount])].flags &= ~alive }
    }

    /// `discard` of the packed minor at group position `cursor`, through raw views: its
    /// slot's flags (through `minors`) and its record.
    @inline(__always)
    static func discardPacked(
        _ cursor: Int, packed: UnsafeMutableBufferPointer<GroupMinor>,
        flags: UnsafeMutableBufferPointer<UInt8>, minors: UnsafeBufferPointer<Int32>
    ) {
        flags[Int(minors[cursor])] &= ~alive
        packed[cursor].flags &= ~alive
    }

    /// `instruction` with the list indices and prior size of `slot`.
    func rebuilt(_ instruction: Instruction, _ slot: Int) -> Instruction {
        instruction.withListIndices(listIndices(slot))
    }

    /// `appendEntries`' and `appendUniform`'s list slots (from `start`, one per entry from
    /// `base`) take the indices their entries cache. Returns whether any list entry caches none.
    private mutating func fillCachedListIndices(
        _ entries: UnsafeBufferPointer<ScanEntry>, base: Int, count: Int, start: Int
    ) -> Bool {
        var missing = false
        index.withUnsafeMutableBufferPointer { index in
            priorSize.withUnsafeMutableBufferPointer { priorSize in
                for offset in 0..<count
                where Self.writeCachedListIndices(entries[base + offset], slot: start + offset,
                                                  index: index, priorSize: priorSize)
                {
                    missing = true
                }
            }
        }
        return missing
    }

    /// For a list entry (`ScanEntry.fillsSlot` false), writes the indices it caches to
    /// `slot` of the index and prior-size columns; returns whether it is a list entry that
    /// caches none (its slot then needs `fillListIndices`).
    @inline(__always)
    static func writeCachedListIndices(
        _ entry: ScanEntry, slot: Int, index: UnsafeMutableBufferPointer<UInt32>,
        priorSize: UnsafeMutableBufferPointer<UInt32>
    ) -> Bool {
        if entry.fillsSlot { return false }
        guard let list = entry.cachedListIndices else { return true }
        index[slot] = list.index
        priorSize[slot] = list.priorSize
        return false
    }

    /// The list indices of `slot` as the merge left them.
    @inline(__always)
    func listIndices(_ slot: Int) -> ListIndices {
        ListIndices(index: index[slot],
                    index2: kind[slot] == Kind.arrayMove ? moveTarget(slot) : 0,
                    priorSize: priorSize[slot])
    }

    /// `listIndices(slot)` read through `columns`, raw views of this arena's columns (for a
    /// loop over many slots: the arrays' subscripts check bounds and reload their bases).
    @inline(__always)
    func listIndices(_ slot: Int, in columns: Columns) -> ListIndices {
        ListIndices(index: columns.index[slot],
                    index2: columns.kind[slot] == Kind.arrayMove ? moveTarget(slot) : 0,
                    priorSize: columns.priorSize[slot])
    }

    /// The destination of ArrayMove `slot`.
    func moveTarget(_ slot: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: moveTargets[moveTargetPosition(slot)])
    }

    /// Sets the destination of ArrayMove `slot`.
    mutating func setMoveTarget(_ slot: Int, _ to: UInt32) {
        moveTargets[moveTargetPosition(slot)] = UInt64(slot) << 32 | UInt64(to)
    }

    /// Records the destination of ArrayMove `slot`, the highest slot so far.
    mutating func appendMoveTarget(_ slot: Int, _ to: UInt32) {
        precondition(moveTargets.last.map { Int($0 >> 32) < slot } ?? true,
                     "move targets are appended in slot order")
        moveTargets.append(UInt64(slot) << 32 | UInt64(to))
    }

    /// Where `slot`'s entry is in `moveTargets` (a binary search; the slot must be a move).
    private func moveTargetPosition(_ slot: Int) -> Int {
        var low = 0
        var high = moveTargets.count
        while low < high {
            let middle = (low + high) / 2
            if Int(moveTargets[middle] >> 32) < slot { low = middle + 1 } else { high = middle }
        }
        precondition(low < moveTargets.count && Int(moveTargets[low] >> 32) == slot,
                     "slot \(slot) is not an ArrayMove")
        return low
    }
}

/// Dense node numbers for the distinct objects of a merge window, with union-find.
///
/// Open addressing keyed by `stableHash(ObjectRef)`; a slot (`NodeSlot`, 16 bytes) holds the
/// table, `node + 1`, and the integer key itself (or, for other keys, the full hash, confirmed
/// against `objects`). Reset per merge to a capacity proportional to the window, so a reused
/// table costs O(window) to clear, never O(largest window seen).
struct ObjectNodeTable: Sendable {
    // Storage: every column but `objects` is raw scratch (`ScratchBuffer`), made unique and
    // sized by `reset(capacity:)`, `grow`, `growRecords` and `fillDenseMap`, and written with
    // plain stores.
    // As arrays stored in the struct, a new node cost six uniqueness checks (the slot, the
    // hash, the parent, the size, the dense entry, the object): about 6 per incoming
    // instruction of a churn merge at 100 clients, 1.3 % of its instructions in the check
    // alone.

    /// Open addressing, load factor at most 1/2 (its count is the table's capacity, a power
    /// of two). An integer-keyed object (the common case) is matched on its slot alone, so a
    /// probe of a long history's instruction touches one cache line, not the slot and then
    /// the object array.
    private(set) var slots = ScratchBuffer<NodeSlot>()
    var objects: ContiguousArray<ObjectRef> = []
    /// Per node (`0 ..< objects.count`, with room that doubles when full: a table sized for a
    /// long upload on one object must not map a record per slot): its hash and union-find
    /// parent and size.
    private var records = ScratchBuffer<NodeRecord>()
    /// A direct map for one table's integer keys in `denseMin ..< denseMin + dense.count`
    /// (keys with the sign bit flipped, so the range follows signed order): the node, or -1
    /// when the key has none (`buildDenseIndex`). Inside that range it is exact (every insert
    /// updates it), so `classify` reads one 4-byte entry instead of hashing and probing. That
    /// table's keys outside the range check `denseOutside` before probing; other tables probe.
    private(set) var dense = ScratchBuffer<Int32>()
    var denseTable: TableID = 0
    var denseMin: UInt64 = 0
    var denseActive = false
    /// One bit per `quickMix(key)` bucket for the dense table's integer keys outside the map's
    /// window: a clear bit proves a key has no node, without a probe.
    private var denseOutside = ScratchBuffer<UInt64>()
    static let denseOutsideWords = 1024

    /// The bits of `denseOutside` (`outsideBit`), valid until the next `fillDenseMap`.
    var denseOutsideBits: UnsafeBufferPointer<UInt64> { UnsafeBufferPointer(denseOutside.buffer) }

    /// A node's hash (to place it again when the table grows) and union-find state.
    struct NodeRecord: Sendable, BitwiseCopyable {
        var hash: UInt64
        var parent: Int32
        var size: Int32
    }

    var count: Int { objects.count }

    /// One slot: `meta` is 0 when empty, else `table << 32 | intKeyFlag | (node + 1)`;
    /// `key` is the integer primary key when `intKeyFlag` is set, else the object's hash.
    struct NodeSlot: Sendable {
        var key: UInt64
        var meta: UInt64

        static let empty = NodeSlot(key: 0, meta: 0)
        static let intKeyFlag: UInt64 = 1 << 31

        @inline(__always)
        init(key: UInt64, meta: UInt64) {
            self.key = key
            self.meta = meta
        }

        @inline(__always)
        init(_ object: ObjectRef, hash: UInt64, node: Int32) {
            let nodeBits = UInt64(UInt32(bitPattern: node + 1))
            precondition(nodeBits < Self.intKeyFlag, "too many objects in one merge")
            if case .int(let value) = object.key {
                self.init(key: UInt64(bitPattern: value),
                          meta: UInt64(object.table) << 32 | Self.intKeyFlag | nodeBits)
            } else {
                self.init(key: hash, meta: UInt64(object.table) << 32 | nodeBits)
            }
        }

        @inline(__always)
        var node: Int { Int(meta & (Self.intKeyFlag - 1)) - 1 }
    }

    /// Clears the table. It starts at a capacity for a quarter of the instructions having
    /// distinct objects (a smaller table stays in cache) and grows when needed.
    mutating func reset(capacity instructionCount: Int) {
        var capacity = 64
        while capacity < instructionCount / 2 + 2 { capacity *= 2 }
        slots.reset(count: capacity, repeating: .empty)
        objects.removeAll(keepingCapacity: true)
        records.reserve(Swift.min(capacity / 2, 1024),
                        repeating: NodeRecord(hash: 0, parent: 0, size: 0))
        denseActive = false
    }

    /// Builds the dense map for the table of the first object, if that object has an integer
    /// key: over the keys within 2 × the table's integer-keyed objects + 32 of an anchor key
    /// (a window of 4 × their count + 64 values), when at least half of those objects fall in
    /// it (dense keys, as sequential primary keys are). The window is whichever of those
    /// around the first object's key and the middle object's (in node order), the one
    /// starting at the smallest key and the one ending at the largest holds the most keys
    /// (the earlier on a tie). With the first key's window alone, a merge whose first object
    /// is one the client created in its own key range had no map, and classified every
    /// history instruction by a probe. Keys beyond the window, such as a client's own key
    /// range for new objects, go to `denseOutside`. Call once the incoming side is scanned.
    /// O(nodes), no sort.
    ///
    /// When no such window holds half of the keys, the reach grows to half of `lookups` (the
    /// local instructions the scan will classify; at most `denseSpanMax`), if that is more:
    /// a map of that size costs no more to fill than those lookups, and each of them then
    /// takes the map. A small upload's objects are scattered over the key space, so the
    /// window of four times their count held under half of them and the merge had no map at
    /// all (a probe, out of line, per history instruction: 60 % of map-uniform at 100
    /// clients and 10^5 instructions). Only then: a wider window where the narrow one holds
    /// the cluster would take in sparse key ranges and make a large map that misses in cache.
    /// - Complexity: O(nodes + the window).
    mutating func buildDenseIndex(lookups: Int = 0) {
        denseActive = false
        guard let first = objects.first, case .int(let firstValue) = first.key else { return }
        let table = first.table
        // Keys are compared with the sign bit flipped: signed order, unsigned arithmetic.
        let flip: UInt64 = 1 << 63
        let firstKey = UInt64(bitPattern: firstValue) ^ flip
        var keyCount = 0
        var smallest = firstKey
        var largest = firstKey
        for object in objects where object.table == table {
            guard case .int(let value) = object.key else { continue }
            let key = UInt64(bitPattern: value) ^ flip
            keyCount += 1
            smallest = min(smallest, key)
            largest = max(largest, key)
        }
        // The middle object's key, if it is one of this table's integer keys.
        var middleKey = firstKey
        let middle = objects[objects.count / 2]
        if middle.table == table, case .int(let value) = middle.key {
            middleKey = UInt64(bitPattern: value) ^ flip
        }
        // The window of `reach` around the anchor that holds the most keys, and how many.
        func bestWindow(_ reach: UInt64) -> (anchor: UInt64, keys: Int) {
            // Windows around the first and the middle key, from the smallest, to the largest.
            let candidates = (firstKey, middleKey,
                              smallest <= UInt64.max - reach ? smallest + reach : UInt64.max,
                              largest >= reach ? largest - reach : 0)
            @inline(__always) func near(_ key: UInt64, _ anchor: UInt64) -> Int {
                (key >= anchor ? key - anchor : anchor - key) <= reach ? 1 : 0
            }
            var counts = (0, 0, 0, 0)
            for object in objects where object.table == table {
                guard case .int(let value) = object.key else { continue }
                let key = UInt64(bitPattern: value) ^ flip
                counts.0 += near(key, candidates.0)
                counts.1 += near(key, candidates.1)
                counts.2 += near(key, candidates.2)
                counts.3 += near(key, candidates.3)
            }
            var best = (anchor: candidates.0, keys: counts.0)
            if counts.1 > best.keys { best = (candidates.1, counts.1) }
            if counts.2 > best.keys { best = (candidates.2, counts.2) }
            if counts.3 > best.keys { best = (candidates.3, counts.3) }
            return best
        }
        var reach = UInt64(2 * keyCount + 32)
        var (anchor, inWindow) = bestWindow(reach)
        let widened = UInt64(Swift.min(lookups, Self.denseSpanMax) / 2)
        if 2 * inWindow < keyCount && widened > reach {
            reach = widened
            (anchor, inWindow) = bestWindow(reach)
        }
        guard 2 * inWindow >= keyCount else { return }
        let windowLow = anchor >= reach ? anchor - reach : 0
        let windowHigh = anchor <= UInt64.max - reach ? anchor + reach : UInt64.max
        var low = anchor
        var high = anchor
        for object in objects where object.table == table {
            guard case .int(let value) = object.key else { continue }
            let key = UInt64(bitPattern: value) ^ flip
            if key >= windowLow && key <= windowHigh {
                low = min(low, key)
                high = max(high, key)
            }
        }
        fillDenseMap(table: table, low: low, high: high)
    }

    /// The most values a window widened for the lookups spans.
    static let denseSpanMax = 1 << 20

    /// Makes the dense map of `table` over the keys `low ... high` (sign bit flipped), from
    /// the nodes so far; other keys of the table are marked in `denseOutside`.
    private mutating func fillDenseMap(table: TableID, low: UInt64, high: UInt64) {
        let flip: UInt64 = 1 << 63
        denseTable = table
        denseMin = low
        dense.reset(count: Int(high - low) + 1, repeating: -1)
        denseOutside.reset(count: Self.denseOutsideWords, repeating: 0)
        let map = dense.buffer
        for node in objects.indices where objects[node].table == table {
            guard case .int(let value) = objects[node].key else { continue }
            let offset = (UInt64(bitPattern: value) ^ flip) &- low
            if offset <= high - low {
                map[Int(offset)] = Int32(node)
            } else {
                markOutside(UInt64(bitPattern: value))
            }
        }
        denseActive = true
    }

    /// Sets the `denseOutside` bit of integer key `key` (its bit pattern).
    @inline(__always)
    private mutating func markOutside(_ key: UInt64) {
        let bucket = Int(truncatingIfNeeded: quickMix(key)) & (Self.denseOutsideWords * 64 - 1)
        denseOutside.buffer[bucket >> 6] |= 1 << UInt64(bucket & 63)
    }

    /// Whether integer key `key` of the dense table, outside the map's window, may have a
    /// node (false: it has none).
    @inline(__always)
    func mayHaveNodeOutside(_ key: UInt64) -> Bool {
        Self.outsideBit(UnsafeBufferPointer(denseOutside.buffer), key)
    }

    /// `mayHaveNodeOutside` over the bitmap's buffer (`denseOutside`).
    @inline(__always)
    static func outsideBit(_ outside: UnsafeBufferPointer<UInt64>, _ key: UInt64) -> Bool {
        let bucket = Int(truncatingIfNeeded: quickMix(key)) & (denseOutsideWords * 64 - 1)
        return outside[bucket >> 6] >> UInt64(bucket & 63) & 1 != 0
    }

    /// The dense-map offset of integer key `key` (its bit pattern) in `table`, or nil when the
    /// map does not cover it.
    @inline(__always)
    func denseOffset(intKey key: UInt64, table: TableID) -> Int? {
        guard denseActive && table == denseTable else { return nil }
        let offset = (key ^ (1 << 63)) &- denseMin
        return offset < UInt64(dense.count) ? Int(offset) : nil
    }

    /// The slot index holding `object`, or the empty slot where it would go.
    @inline(__always)
    func probe(_ object: ObjectRef, hash: UInt64) -> (index: Int, found: Bool) {
        let mask = slots.count - 1
        var slotIndex = Int(truncatingIfNeeded: hash) & mask
        if case .int(let value) = object.key {
            return probeIntKey(UInt64(bitPattern: value), table: object.table, hash: hash)
        }
        let tableBits = UInt64(object.table) << 32
        while true {
            let slot = slots.buffer[slotIndex]
            if slot.meta == 0 { return (slotIndex, false) }
            if slot.key == hash && slot.meta & ~(NodeSlot.intKeyFlag - 1) == tableBits
                && objects[slot.node] == object
            {
                return (slotIndex, true)
            }
            slotIndex = (slotIndex + 1) & mask
        }
    }

    /// Asks for the slot where `probeIntKey` starts for integer key `key` of `table`, without
    /// waiting: a scan that knows its next keys hides the table's cache misses behind the
    /// probes it is making now.
    @inline(__always)
    func prefetch(intKey key: UInt64, table: TableID) {
        let hash = stableIntObjectHash(table: table, key: key)
        let slotIndex = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        syncsim_prefetch(slots.buffer.baseAddress! + slotIndex)
    }

    /// `probe` for an integer key (its bit pattern): matched on the slot alone.
    @inline(__always)
    func probeIntKey(_ key: UInt64, table: TableID, hash: UInt64) -> (index: Int, found: Bool) {
        let mask = slots.count - 1
        var slotIndex = Int(truncatingIfNeeded: hash) & mask
        let wantedMeta = UInt64(table) << 32 | NodeSlot.intKeyFlag
        while true {
            let slot = slots.buffer[slotIndex]
            if slot.meta == 0 { return (slotIndex, false) }
            if slot.key == key && slot.meta & ~(NodeSlot.intKeyFlag - 1) == wantedMeta {
                return (slotIndex, true)
            }
            slotIndex = (slotIndex + 1) & mask
        }
    }

    /// The node of `instructions[position]`'s object (created on first sight), joined with
    /// the node of its link target if it carries one; -1 for schema instructions.
    @inline(__always)
    mutating func scanNode(
        in instructions: ContiguousArray<Instruction>, at position: Int
    ) -> Int32 {
        guard let (object, link) = objectAndLink(instructions, at: position) else { return -1 }
        let objectNode = node(for: object)
        if let link { union(objectNode, node(for: link)) }
        return objectNode
    }

    /// For a local instruction when the incoming side has no EraseColumn: the node of its
    /// object if the incoming side touches the object (or the link target it carries), else
    /// nil, meaning no incoming instruction can interact with it (every rule between
    /// instructions on different objects is a no-op), so it need not enter the arena.
    @inline(__always)
    mutating func relevantNode(
        in instructions: ContiguousArray<Instruction>, at position: Int
    ) -> Int32? {
        guard let (object, link) = objectAndLink(instructions, at: position) else { return -1 }
        if let objectNode = existingNode(for: object) { return objectNode }
        guard let link, let targetNode = existingNode(for: link) else { return nil }
        let objectNode = node(for: object)
        union(objectNode, targetNode)
        return objectNode
    }

    /// Classifies the first `count` of a local changeset's scan entries
    /// (`Transformer.scanLocalBatch`): the node of each instruction's object, if the incoming
    /// side touches it. All probes of a changeset are made in one loop, independent loads the
    /// processor overlaps, where classifying one instruction at a time makes each wait for
    /// the last. Per position, `nodes` gets the object's node, `LocalScanBatch.untouched` (an
    /// object the incoming side does not touch), or `LocalScanBatch.general` (a schema
    /// instruction, a link payload or a non-integer key: the caller takes `relevantNode`).
    /// - Complexity: O(count), one dense-map load, bitmap test or probe each.
    func classify(
        _ entries: ContiguousArray<ScanEntry>, count: Int, into nodes: inout ContiguousArray<Int32>
    ) {
        entries.withUnsafeBufferPointer { entries in
            nodes.withUnsafeMutableBufferPointer { nodes in
                for position in 0..<count {
                    let entry = entries[position]
                    nodes[position] = entry.isGeneral
                        ? LocalScanBatch.general
                        : existingNode(intKey: entry.key, table: entry.table)
                }
            }
        }
    }

    /// The node of the object with integer key `key` (its bit pattern) in `table`, or -1
    /// (`LocalScanBatch.untouched`) when it has none: the dense map's entry for a key in its
    /// window, -1 for a key of the map's table whose outside bit is clear, else a probe.
    @inline(__always)
    func existingNode(intKey key: UInt64, table: TableID) -> Int32 {
        if let offset = denseOffset(intKey: key, table: table) { return dense.buffer[offset] }
        if denseActive && table == denseTable && !mayHaveNodeOutside(key) { return -1 }
        let (index, found) = probeIntKey(key, table: table,
                                         hash: stableIntObjectHash(table: table, key: key))
        return found ? Int32(slots.buffer[index].node) : -1
    }

    /// The node of `object` if it has one.
    @inline(__always)
    func existingNode(for object: ObjectRef) -> Int32? {
        let (index, found) = probe(object, hash: stableHash(object))
        return found ? Int32(slots.buffer[index].node) : nil
    }

    /// The node of the object with integer key `key` (its bit pattern) in `table`, created on
    /// first sight: `node(for:)` for a scan entry, without building the reference to probe.
    @inline(__always)
    mutating func node(intKey key: UInt64, table: TableID) -> Int32 {
        let hash = stableIntObjectHash(table: table, key: key)
        var (index, found) = probeIntKey(key, table: table, hash: hash)
        if found { return Int32(slots.buffer[index].node) }
        let object = ObjectRef(table: table, key: .int(Int64(bitPattern: key)))
        assert(stableHash(object) == hash, "integer-key hash differs from stableHash")
        // As `node(for:)`, from the probe already made.
        if (objects.count + 1) * 2 > slots.count {
            grow()
            index = probeIntKey(key, table: table, hash: hash).index
        }
        return insert(object, hash: hash, at: index)
    }

    /// The node of `object`, created on first sight.
    /// - Complexity: O(1) expected.
    @inline(__always)
    mutating func node(for object: ObjectRef) -> Int32 {
        let hash = stableHash(object)
        var (index, found) = probe(object, hash: hash)
        if found { return Int32(slots.buffer[index].node) }
        // Keep the load factor at or below 1/2.
        if (objects.count + 1) * 2 > slots.count {
            grow()
            index = probe(object, hash: hash).index
        }
        return insert(object, hash: hash, at: index)
    }

    /// Gives `object` the next node, in the empty slot `index` its probe found.
    @inline(__always)
    private mutating func insert(_ object: ObjectRef, hash: UInt64, at index: Int) -> Int32 {
        let node = Int32(objects.count)
        if objects.count == records.count { growRecords() }
        slots.buffer[index] = NodeSlot(object, hash: hash, node: node)
        objects.append(object)
        records.buffer[Int(node)] = NodeRecord(hash: hash, parent: node, size: 1)
        if denseActive && object.table == denseTable, case .int(let value) = object.key {
            if let offset = denseOffset(intKey: UInt64(bitPattern: value), table: object.table) {
                dense.buffer[offset] = node
            } else {
                markOutside(UInt64(bitPattern: value))
            }
        }
        return node
    }

    private mutating func grow() {
        let capacity = slots.count * 2
        let kept = objects.count
        slots.reset(count: capacity, repeating: .empty)
        let (table, nodes) = (slots.buffer, records.buffer)
        let mask = capacity - 1
        for node in 0..<kept {
            var slotIndex = Int(truncatingIfNeeded: nodes[node].hash) & mask
            while table[slotIndex].meta != 0 { slotIndex = (slotIndex + 1) & mask }
            table[slotIndex] = NodeSlot(objects[node], hash: nodes[node].hash, node: Int32(node))
        }
    }

    /// Moves the node records to storage of twice the room (out of line: the insert it
    /// interrupts is inlined into the scans).
    @inline(never)
    private mutating func growRecords() {
        records.grow(to: Swift.max(2 * records.count, 16), keeping: objects.count,
                     repeating: NodeRecord(hash: 0, parent: 0, size: 0))
    }

    /// The root of `node`'s group (path halving).
    @inline(__always)
    mutating func find(_ node: Int32) -> Int32 {
        let nodes = records.buffer
        var current = node
        while nodes[Int(current)].parent != current {
            let grand = nodes[Int(nodes[Int(current)].parent)].parent
            nodes[Int(current)].parent = grand
            current = grand
        }
        return current
    }

    /// Joins the groups of `a` and `b` (the smaller into the larger).
    mutating func union(_ a: Int32, _ b: Int32) {
        var rootA = find(a)
        var rootB = find(b)
        if rootA == rootB { return }
        let nodes = records.buffer
        if nodes[Int(rootA)].size < nodes[Int(rootB)].size { swap(&rootA, &rootB) }
        nodes[Int(rootB)].parent = rootA
        nodes[Int(rootA)].size += nodes[Int(rootB)].size
    }
}

/// The (object node, field) pairs the incoming side of a merge touches, and the nodes it
/// erases. A local field instruction on a field the incoming side does not touch, of an object
/// it does not erase, meets only no-op rules (every rule between field instructions needs the
/// same field; the only object-level rule that reaches a field instruction is EraseObject), so
/// the scan skips it like an instruction on an untouched object.
struct TouchedFields: Sendable {
    /// Per node: bit `f` for each touched field `f` < `maskedFields`, `overflowBit` when a
    /// field at or above that is touched (those are in `keys`), `erasesBit` when the incoming
    /// side erases the object. Field IDs are small dense integers, so the common check is one
    /// load from an array of 8 bytes per node and a bit test, not a hash probe. Sized once per
    /// merge for every node the incoming side can create (`reset(nodesMax:)`) and written
    /// through a raw pointer: growing it one node at a time, and its uniqueness check on
    /// every write, were 2 % of a churn merge at 100 clients. Only `0 ..< knownCount` means
    /// anything.
    private(set) var nodeMasks = ScratchBuffer<UInt64>()
    /// One more than the highest node recorded: nodes from here on are unknown to the filter
    /// (none of their instructions can interact).
    private(set) var knownCount = 0
    /// Open addressing for fields ≥ `maskedFields`: `key + 1` (0 = empty), load ≤ 1/2.
    var keys: ContiguousArray<UInt64> = []
    var count = 0

    static let maskedFields: UInt32 = 61
    /// Not in `nodeMasks`: in the history scan's per-key copy of them
    /// (`Transformer.historyKeyMasks`), set for a key whose node has a mask.
    static let knownBit: UInt64 = 1 << 61
    static let overflowBit: UInt64 = 1 << 62
    static let erasesBit: UInt64 = 1 << 63

    /// Empties the filter for a merge whose incoming side creates at most `nodesMax` nodes
    /// (`record` checks it).
    mutating func reset(nodesMax: Int) {
        nodeMasks.reset(count: nodesMax, repeating: 0)
        knownCount = 0
        if count > 0 || keys.count != 64 {
            keys.removeAll(keepingCapacity: true)
            keys.append(contentsOf: repeatElement(0, count: 64))
        }
        count = 0
    }

    @inline(__always)
    static func key(node: Int32, field: UInt32) -> UInt64 {
        UInt64(UInt32(bitPattern: node)) << 32 | UInt64(field)
    }

    /// Records incoming object instruction on `node`: its field (`UInt32.max` for an
    /// object-level instruction) and whether it erases the object.
    @inline(__always)
    mutating func record(node: Int32, field: UInt32, erases: Bool) {
        let masks = nodeMasks.buffer
        precondition(node >= 0 && Int(node) < masks.count, "more nodes than reset(nodesMax:)")
        knownCount = Swift.max(knownCount, Int(node) + 1)
        var bits = erases ? Self.erasesBit : 0
        if field != UInt32.max {
            if field < Self.maskedFields {
                bits |= 1 << UInt64(field)
            } else {
                bits |= Self.overflowBit
                recordOverflow(Self.key(node: node, field: field) &+ 1)
            }
        }
        masks[Int(node)] |= bits
    }

    private mutating func recordOverflow(_ stored: UInt64) {
        var mask = keys.count - 1
        var slot = Int(truncatingIfNeeded: quickMix(stored)) & mask
        while true {
            let current = keys[slot]
            if current == stored { return }
            if current == 0 { break }
            slot = (slot + 1) & mask
        }
        if (count + 1) * 2 > keys.count {
            let old = keys
            keys = ContiguousArray(repeating: 0, count: old.count * 2)
            mask = keys.count - 1
            for entry in old where entry != 0 {
                var index = Int(truncatingIfNeeded: quickMix(entry)) & mask
                while keys[index] != 0 { index = (index + 1) & mask }
                keys[index] = entry
            }
            slot = Int(truncatingIfNeeded: quickMix(stored)) & mask
            while keys[slot] != 0 { slot = (slot + 1) & mask }
        }
        keys[slot] = stored
        count += 1
    }

    /// Whether a local instruction on (`node`, `field`) can meet an incoming one that is not
    /// a no-op: the incoming side erases the object or touches the field.
    @inline(__always)
    func interacts(node: Int32, field: UInt32) -> Bool {
        if Int(node) >= knownCount { return false }
        let nodeMask = nodeMasks.buffer[Int(node)]
        if field == UInt32.max || nodeMask & Self.erasesBit != 0 { return true }
        if field < Self.maskedFields { return nodeMask >> UInt64(field) & 1 != 0 }
        if nodeMask & Self.overflowBit == 0 { return false }
        let stored = Self.key(node: node, field: field) &+ 1
        let mask = keys.count - 1
        var slot = Int(truncatingIfNeeded: quickMix(stored)) & mask
        while true {
            let current = keys[slot]
            if current == stored { return true }
            if current == 0 { return false }
            slot = (slot + 1) & mask
        }
    }
}

/// The object of `instructions[position]` and the link target it carries, matched in place
/// (only the references are copied, not the instruction); nil for schema instructions.
@inline(__always)
func objectAndLink(
    _ instructions: ContiguousArray<Instruction>, at position: Int
) -> (object: ObjectRef, link: ObjectRef?)? {
    switch instructions[position] {
    case .addTable, .addColumn, .eraseColumn:
        nil
    case .update(let object, _, .link(let link), _),
        .arrayUpdate(let object, _, _, .link(let link), _),
        .arrayInsert(let object, _, _, .link(let link), _),
        .setInsert(let object, _, .link(let link)):
        (object, link)
    case .createObject(let object), .eraseObject(let object),
        .update(let object, _, _, _), .arrayUpdate(let object, _, _, _, _),
        .addInteger(let object, _, _), .arrayInsert(let object, _, _, _, _),
        .arrayMove(let object, _, _, _, _), .arrayErase(let object, _, _, _),
        .clear(let object, _), .setInsert(let object, _, _), .setErase(let object, _, _):
        (object, nil)
    }
}

/// Scratch of `ObjectNodeTable.classify`, one entry per instruction of a changeset.
struct LocalScanBatch: Sendable {
    static let untouched: Int32 = -1
    static let general: Int32 = -2
    var entries: ContiguousArray<ScanEntry> = []
    var node: ContiguousArray<Int32> = []

    /// Makes room for `count` entries (contents unspecified until classified).
    mutating func resize(_ count: Int) {
        if node.count >= count { return }
        entries.append(contentsOf: repeatElement(.general, count: count - entries.count))
        node.append(contentsOf: repeatElement(0, count: count - node.count))
    }
}

/// What the local scan needs of one instruction, in 24 bytes: the table, integer primary key,
/// field (`UInt32.max` for object instructions), kind and arena flags of an object instruction
/// that carries no link. Anything else (schema instructions, link payloads, other key types)
/// is `general`, and the scan classifies it from the instruction itself. An instruction whose
/// own keys equal the `general` pattern is classified the general way too, which is always
/// exact.
struct ScanEntry: Sendable, Hashable {
    var key: UInt64
    var table: UInt32
    var field: UInt32
    /// `InstructionCode` of the instruction.
    var kind: UInt8
    /// `TransformArena.alive`, plus `TransformArena.isDefault` for a default Update.
    var flags: UInt8
    /// An ArrayInsert's or ArrayErase's index and prior size (`cachedListIndices`), 24 bits
    /// each, in the six bytes the fields above leave to alignment (the entry stays 24 bytes).
    /// A history's changesets keep their scan column across merges, so each later merge reads
    /// a list instruction's indices here instead of from the instruction, which is a separate
    /// allocation and was a cache miss per history list instruction (a twentieth of a list
    /// server merge). All ones when not cached.
    var listLow: UInt16 = .max
    var listHigh: UInt32 = .max

    static let general = ScanEntry(key: .max, table: .max, field: .max, kind: .max, flags: 0)
    /// Indices and prior sizes from this value on are not cached.
    static let listIndexLimit: UInt32 = (1 << 24) - 1

    /// The list index and prior size of an ArrayInsert or ArrayErase entry, if cached: valid
    /// for the kind (an insert's index at most its prior size, an erase's below it), both
    /// below `listIndexLimit`.
    @inline(__always)
    var cachedListIndices: (index: UInt32, priorSize: UInt32)? {
        if listLow == .max && listHigh == .max { return nil }
        return (UInt32(listLow) | (listHigh & 0xFF) << 16, listHigh >> 8)
    }

    /// Caches `index` and `priorSize` for an ArrayInsert or ArrayErase entry when they are
    /// valid for its kind and below `listIndexLimit`; clears the cache otherwise (then the
    /// merge reads, and checks, the instruction).
    @inline(__always)
    mutating func cacheListIndices(index: UInt32, priorSize: UInt32) {
        let valid = kind == Kind.arrayInsert ? index <= priorSize
            : kind == Kind.arrayErase && index < priorSize
        if valid && priorSize < Self.listIndexLimit {
            listLow = UInt16(truncatingIfNeeded: index)
            listHigh = index >> 16 | priorSize << 8
        } else {
            listLow = .max
            listHigh = .max
        }
    }

    /// Whether this is `general`: its kind, `UInt8.max`, is no instruction code. (Comparing
    /// the whole entry took eight compares per scanned instruction.)
    @inline(__always)
    var isGeneral: Bool { kind == Self.general.kind }

    /// Bit k set for each kind k whose slot needs list indices (`fillsSlot` false). Kinds are
    /// instruction codes, below 64, or `general`'s 255, whose bit (255 & 63 = 63) is no list
    /// kind's, so a loop may or `1 << (kind & 63)` together without a compare (a smart shift
    /// of the kind itself cost 3.6 % of a map merge's instructions).
    static let listKindsMask: UInt64 = 1 << UInt64(Kind.arrayInsert)
        | 1 << UInt64(Kind.arrayMove) | 1 << UInt64(Kind.arrayErase) | 1 << UInt64(Kind.arrayUpdate)

    /// Whether the arena slot can be filled from the entry alone: kinds without list indices.
    @inline(__always)
    var fillsSlot: Bool {
        kind != Kind.arrayInsert && kind != Kind.arrayErase && kind != Kind.arrayMove
            && kind != Kind.arrayUpdate
    }

}

// In an extension, so the struct keeps its memberwise `init(key:table:field:kind:flags:)`.
extension ScanEntry {
    /// The entry of `instructions[position]`, matched in place.
    @inline(__always)
    init(_ instructions: ContiguousArray<Instruction>, at position: Int) {
        self = instructions.withUnsafeBufferPointer { Self.entry(of: $0[position]) }
    }

    /// The entry of `instruction`, matched where it lies: a `borrowing` match does not copy
    /// the instruction's key and value (an outlined copy and destruction per instruction when
    /// it was matched by value).
    @inline(__always)
    static func entry(of instruction: borrowing Instruction) -> ScanEntry {
        let object: ObjectRef
        var field = UInt32.max
        let kind: UInt8
        var flags = TransformArena.alive
        var list: (index: UInt32, priorSize: UInt32)?
        switch instruction {
        case .addTable, .addColumn, .eraseColumn,
            .update(_, _, .link, _), .arrayUpdate(_, _, _, .link, _),
            .arrayInsert(_, _, _, .link, _), .setInsert(_, _, .link):
            return .general
        case .createObject(let ref):
            object = ref
            kind = Kind.createObject
        case .eraseObject(let ref):
            object = ref
            kind = Kind.eraseObject
        case .update(let ref, let f, _, let isDefault):
            object = ref
            field = f
            kind = Kind.update
            if isDefault { flags |= TransformArena.isDefault }
        case .addInteger(let ref, let f, _):
            (object, field, kind) = (ref, f, Kind.addInteger)
        case .clear(let ref, let f):
            (object, field, kind) = (ref, f, Kind.clear)
        case .setInsert(let ref, let f, _):
            (object, field, kind) = (ref, f, Kind.setInsert)
        case .setErase(let ref, let f, _):
            (object, field, kind) = (ref, f, Kind.setErase)
        case .arrayUpdate(let ref, let f, _, _, _):
            (object, field, kind) = (ref, f, Kind.arrayUpdate)
        case .arrayInsert(let ref, let f, let index, _, let priorSize):
            (object, field, kind) = (ref, f, Kind.arrayInsert)
            list = (index, priorSize)
        case .arrayMove(let ref, let f, _, _, _):
            (object, field, kind) = (ref, f, Kind.arrayMove)
        case .arrayErase(let ref, let f, let index, let priorSize):
            (object, field, kind) = (ref, f, Kind.arrayErase)
            list = (index, priorSize)
        }
        guard case .int(let key) = object.key else { return .general }
        var entry = ScanEntry(key: UInt64(bitPattern: key), table: object.table, field: field,
                              kind: kind, flags: flags)
        if let list { entry.cacheListIndices(index: list.index, priorSize: list.priorSize) }
        return entry
    }

    /// Writes the entries of `instructions` to the front of `entries`, which must have room.
    static func fill(_ entries: inout ContiguousArray<ScanEntry>,
                     from instructions: ContiguousArray<Instruction>) {
        precondition(entries.count >= instructions.count, "scan entries too short")
        entries.withUnsafeMutableBufferPointer { entries in
            instructions.withUnsafeBufferPointer { instructions in
                for position in instructions.indices {
                    entries[position] = ScanEntry.entry(of: instructions[position])
                }
            }
        }
    }

    /// The scan column of `instructions`.
    static func column(of instructions: ContiguousArray<Instruction>) -> ContiguousArray<ScanEntry> {
        var column = ContiguousArray(repeating: ScanEntry.general, count: instructions.count)
        fill(&column, from: instructions)
        return column
    }
}

/// The field of `instructions[position]` (`UInt32.max` for table and object instructions),
/// matched in place.
@inline(__always)
func fieldOf(_ instructions: ContiguousArray<Instruction>, at position: Int) -> UInt32 {
    switch instructions[position] {
    case .addTable, .createObject, .eraseObject:
        UInt32.max
    case .addColumn(_, let field, _, _, _, _), .eraseColumn(_, let field):
        field
    case .update(_, let field, _, _), .arrayUpdate(_, let field, _, _, _),
        .addInteger(_, let field, _), .arrayInsert(_, let field, _, _, _),
        .arrayMove(_, let field, _, _, _), .arrayErase(_, let field, _, _),
        .clear(_, let field), .setInsert(_, let field, _), .setErase(_, let field, _):
        field
    }
}
