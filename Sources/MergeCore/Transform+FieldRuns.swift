//! Hot conflict groups of field updates: per-(object, field) chains of incoming instructions.
//!
//! The pairwise grid makes a local Update meet every incoming instruction of its conflict
//! group, so one hot object costs D_g · L_g. But a local Update, AddInteger or CreateObject
//! only *interacts* with few incoming kinds on its own object: Update and AddInteger on the
//! same field, and EraseObject of the object (everything else is a no-op rule: other objects of
//! the group, other fields, CreateObject, and Clear, list and set kinds on the field). For a
//! large group, `FieldRunIndex` chains those incoming instructions per (node, field, kind
//! class), in incoming order, and `mergeWithFieldRuns` walks only the chains that can interact,
//! merged by position, calling the very same rules in the very same order. Dead incoming
//! instructions are unlinked from their chain when met, so each is walked past once more at
//! most. An incoming Update is killed by the first local Update that beats it, and a local
//! Update stops at the first incoming Update that beats it, so a hot field of Updates costs
//! O(D_g + L_g) instead of D_g · L_g; the result is identical to the pairwise walk (checked by
//! `FastPathTests` against `fieldRunsEnabled = false`). A local Update whose field's Updates
//! are all it meets takes its chain inside the Update sweep (`FieldRunSweep`,
//! `Transform+UpdateSweep.swift`), without a dispatch of its own.

/// Chains of incoming slots per (object node, field, class) for the large conflict groups of
/// one merge. Class 0 is Update (or, with field `UInt32.max`, EraseObject), class 1 is
/// AddInteger. Built lazily, at most once per merge.
///
/// A (node, field) pair finds its run without hashing when every object's chained fields lie
/// close together (the usual case: a few small field IDs per object): node n's runs are
/// `nodeBase[n]` (its EraseObjects) and the `nodeFieldSpan[n]` after it, one per field from
/// `nodeFieldMin[n]` on, so a lookup reads one per-node entry of a small array. A client
/// integrating 10^6 map updates looked up each of its 10^6 local Updates in a hash table of
/// 1.5 MB, a cache miss each. When some object's fields spread wider than
/// `Transformer.fieldRunsDirectSpanMax`, the runs are numbered through the hash table.
///
/// Its tables are scratch buffers, not arrays: every write to an array held in the
/// transformer checked its uniqueness first (in that client merge, about 50 million runtime
/// calls, 4 % of its instructions).
struct FieldRunIndex: Sendable {
    var built = false
    /// Whether runs are numbered per node (`nodeBase`), not through the hash table.
    var direct = false
    /// Per node (direct numbering): its first run, or -1 when no chain holds its slots; the
    /// smallest field of its chained Updates and AddIntegers, and how many fields from there
    /// have runs (0 for an object with EraseObjects only).
    var nodeBase = ScratchBuffer<Int32>()
    var nodeFieldMin = ScratchBuffer<UInt32>()
    var nodeFieldSpan = ScratchBuffer<UInt32>()
    /// Open addressing over `tableCapacity` slots: `key + 1` (0 = empty) and the run number
    /// of each slot (hashed numbering).
    var tableKeys = ScratchBuffer<UInt64>()
    var tableRuns = ScratchBuffer<Int32>()
    var tableCapacity = 0
    /// Per run number r: heads and tails of chains `2r` (class 0) and `2r + 1` (class 1). A
    /// head carries its slot's rank: a local Update that loses to the head of its field's
    /// chain (about half of them, in a client merging 10^6 map updates) reads nothing else
    /// of the chain, where the rank in `links` was a cache miss of its own.
    var head = ScratchBuffer<FieldRunHead>()
    var tail = ScratchBuffer<Int32>()
    /// `links[slot - base]`: the next incoming slot of the chain, or -1, and the slot's
    /// changeset rank, in one record: a chain step reads one place, not the next slot, the
    /// owner and its rank from three.
    var links = ScratchBuffer<FieldRunLink>()
    var base = 0
    var runCount = 0
    /// Whether any chain holds EraseObjects (else a major skips their lookup).
    var hasEraseRuns = false

    @inline(__always)
    static func key(node: Int32, field: UInt32) -> UInt64 {
        UInt64(UInt32(bitPattern: node)) << 32 | UInt64(field)
    }

    /// Empties the index for hashed numbering, in a merge with `entries` chain entries at
    /// most (so at most that many runs) and `incoming` incoming slots from `base` on, with a
    /// table of `capacity` slots (a power of two).
    mutating func resetHashed(capacity: Int, entries: Int, incoming: Int, base: Int) {
        direct = false
        tableCapacity = capacity
        tableKeys.reset(count: capacity, repeating: 0)
        tableRuns.reset(count: capacity, repeating: -1)
        head.reserve(2 * entries + 2, repeating: FieldRunHead.empty)
        tail.reserve(2 * entries + 2, repeating: -1)
        links.reserve(incoming, repeating: FieldRunLink(next: -1, rank: 0))
        runCount = 0
        self.base = base
    }

    /// Empties the chains for direct numbering, once `nodeBase`, `nodeFieldMin` and
    /// `nodeFieldSpan` number `runs` runs, in a merge with `incoming` incoming slots from
    /// `base` on.
    mutating func resetDirect(runs: Int, incoming: Int, base: Int) {
        direct = true
        tableCapacity = 0
        head.reset(count: 2 * runs, repeating: FieldRunHead.empty)
        tail.reset(count: 2 * runs, repeating: -1)
        links.reserve(incoming, repeating: FieldRunLink(next: -1, rank: 0))
        runCount = runs
        self.base = base
    }

    /// The run number of (`node`, `field`), or -1.
    @inline(__always)
    func run(node: Int32, field: UInt32) -> Int { lookup.run(node: node, field: field) }

    /// Raw views of the numbering, for loops that look up many pairs: valid until the next
    /// reset or `insertRun`.
    var lookup: FieldRunLookup {
        @inline(__always) get {
            FieldRunLookup(
                direct: direct, nodeBase: UnsafeBufferPointer(nodeBase.buffer),
                fieldMin: UnsafeBufferPointer(nodeFieldMin.buffer),
                fieldSpan: UnsafeBufferPointer(nodeFieldSpan.buffer),
                keys: UnsafeBufferPointer(tableKeys.buffer),
                runs: UnsafeBufferPointer(tableRuns.buffer), mask: tableCapacity - 1)
        }
    }

    /// The run number of `key`, created if new (with empty chains).
    @inline(__always)
    mutating func insertRun(_ key: UInt64) -> Int {
        let mask = tableCapacity - 1
        let keys = tableKeys.buffer
        var slotIndex = Int(truncatingIfNeeded: quickMix(key)) & mask
        while true {
            let stored = keys[slotIndex]
            if stored == key &+ 1 { return Int(tableRuns.buffer[slotIndex]) }
            if stored == 0 { break }
            slotIndex = (slotIndex + 1) & mask
        }
        if (runCount + 1) * 2 > tableCapacity { return insertRunAfterGrowing(key) }
        let run = runCount
        precondition(2 * run + 1 < head.count, "more field runs than chain entries")
        runCount += 1
        keys[slotIndex] = key &+ 1
        tableRuns.buffer[slotIndex] = Int32(run)
        head.buffer[2 * run] = FieldRunHead.empty
        head.buffer[2 * run + 1] = FieldRunHead.empty
        tail.buffer[2 * run] = -1
        tail.buffer[2 * run + 1] = -1
        return run
    }

    /// `insertRun` of a new key into a full table: the table doubles first.
    @inline(never)
    mutating func insertRunAfterGrowing(_ key: UInt64) -> Int {
        grow()
        return insertRun(key)
    }

    /// Doubles the table (load factor at most 1/2).
    mutating func grow() {
        let oldKeys = Array(tableKeys.buffer)
        let oldRuns = Array(tableRuns.buffer)
        tableCapacity *= 2
        tableKeys.reset(count: tableCapacity, repeating: 0)
        tableRuns.reset(count: tableCapacity, repeating: -1)
        let keys = tableKeys.buffer
        let runs = tableRuns.buffer
        let mask = tableCapacity - 1
        for oldIndex in oldKeys.indices where oldKeys[oldIndex] != 0 {
            var slotIndex = Int(truncatingIfNeeded: quickMix(oldKeys[oldIndex] &- 1)) & mask
            while keys[slotIndex] != 0 { slotIndex = (slotIndex + 1) & mask }
            keys[slotIndex] = oldKeys[oldIndex]
            runs[slotIndex] = oldRuns[oldIndex]
        }
    }

    /// Appends incoming `slot`, of changeset rank `rank`, to chain `chain` (slots arrive in
    /// ascending order).
    @inline(__always)
    mutating func append(_ slot: Int, rank: UInt32, chain: Int) {
        let last = tail.buffer[chain]
        if last < 0 { head.buffer[chain] = FieldRunHead(slot: Int32(slot), rank: rank) } else {
            links.buffer[Int(last) - base].next = Int32(slot)
        }
        tail.buffer[chain] = Int32(slot)
        links.buffer[slot - base] = FieldRunLink(next: -1, rank: rank)
    }

    /// Unlinks `current` (whose predecessor in `chain` is `previous`, or -1 at the head) and
    /// returns its successor. The tail is not maintained after the build.
    @inline(__always)
    mutating func unlink(chain: Int, previous: Int32, current: Int32) -> Int32 {
        let successor = links.buffer[Int(current) - base].next
        if previous < 0 { head.buffer[chain] = self.head(successor) } else {
            links.buffer[Int(previous) - base].next = successor
        }
        return successor
    }

    @inline(__always)
    func successor(_ slot: Int32) -> Int32 { links.buffer[Int(slot) - base].next }

    /// The head record of a chain whose first slot is `slot` (-1: empty).
    @inline(__always)
    func head(_ slot: Int32) -> FieldRunHead {
        slot < 0 ? .empty : FieldRunHead(slot: slot, rank: links.buffer[Int(slot) - base].rank)
    }
}

/// The first slot of a field-run chain, or -1, and that slot's changeset rank
/// (`FieldRunIndex.head`).
struct FieldRunHead: BitwiseCopyable, Sendable {
    var slot: Int32
    var rank: UInt32

    static let empty = FieldRunHead(slot: -1, rank: 0)
}

/// How a `FieldRunIndex` numbers its runs, read through raw views.
struct FieldRunLookup {
    let direct: Bool
    let nodeBase: UnsafeBufferPointer<Int32>
    let fieldMin: UnsafeBufferPointer<UInt32>
    let fieldSpan: UnsafeBufferPointer<UInt32>
    let keys: UnsafeBufferPointer<UInt64>
    let runs: UnsafeBufferPointer<Int32>
    /// The hash table's capacity minus one; -1 when it is empty.
    let mask: Int

    /// The run number of (`node`, `field`), or -1. With direct numbering, a pair without
    /// chained slots may get a run whose chains are empty, which every walk treats alike.
    @inline(__always)
    func run(node: Int32, field: UInt32) -> Int {
        if direct {
            let first = nodeBase[Int(node)]
            if first < 0 { return -1 }
            if field == UInt32.max { return Int(first) }
            let offset = field &- fieldMin[Int(node)]
            return offset < fieldSpan[Int(node)] ? Int(first) + 1 + Int(offset) : -1
        }
        if mask < 0 { return -1 }
        let key = FieldRunIndex.key(node: node, field: field)
        var slotIndex = Int(truncatingIfNeeded: quickMix(key)) & mask
        while true {
            let stored = keys[slotIndex]
            if stored == 0 { return -1 }
            if stored == key &+ 1 { return Int(runs[slotIndex]) }
            slotIndex = (slotIndex + 1) & mask
        }
    }
}

/// Which incoming slots `Transformer.buildFieldRuns` chains, and in which order.
struct FieldRunVisit {
    /// Slot order over the whole incoming side, or group by group over the large groups.
    let inSlotOrder: Bool
    /// The smallest group (incoming instructions) whose slots are chained.
    let countMin: Int
    let localCount: Int

    /// Calls `body(minor, node, chainClass, field)` for each incoming Update (class 0),
    /// AddInteger (class 1) and EraseObject (class 0, field `UInt32.max`) of a group with at
    /// least `countMin` incoming instructions, each chain's slots in ascending order.
    @inline(__always)
    func entries(
        of arena: TransformArena, roots: ContiguousArray<Int32>,
        groupStart: ContiguousArray<Int32>, positions: ContiguousArray<Int32>,
        _ body: (Int, Int32, Int, UInt32) -> Void
    ) {
        arena.kind.withUnsafeBufferPointer { kinds in
            arena.field.withUnsafeBufferPointer { fields in
                arena.node.withUnsafeBufferPointer { nodes in
                    roots.withUnsafeBufferPointer { roots in
                        groupStart.withUnsafeBufferPointer { groupStart in
                            @inline(__always) func visit(_ minor: Int, node: Int32) {
                                let kind = kinds[minor]
                                if kind == Kind.update {
                                    body(minor, node, 0, fields[minor])
                                } else if kind == Kind.addInteger {
                                    body(minor, node, 1, fields[minor])
                                } else if kind == Kind.eraseObject {
                                    body(minor, node, 0, UInt32.max)
                                }
                            }
                            if inSlotOrder {
                                for minor in localCount..<kinds.count {
                                    let node = nodes[minor]
                                    if node < 0 { continue }
                                    let root = Int(roots[Int(node)])
                                    if groupStart[root + 1] - groupStart[root] >= countMin {
                                        visit(minor, node: node)
                                    }
                                }
                            } else {
                                for root in 0..<(groupStart.count - 1) {
                                    let start = Int(groupStart[root])
                                    let end = Int(groupStart[root + 1])
                                    if end - start < countMin { continue }
                                    for cursor in start..<end {
                                        let minor = Int(positions[cursor])
                                        visit(minor, node: nodes[minor])
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One incoming slot's place in its field-run chain (`FieldRunIndex.links`).
struct FieldRunLink: BitwiseCopyable, Sendable {
    /// The next incoming slot of the chain, or -1.
    var next: Int32
    /// The rank of the slot's changeset (`Transformer.changesetRank`).
    var rank: UInt32
}

extension Transformer {
    /// Whether local slot `major` may take the field-run path.
    @inline(__always)
    func fieldRunsApply(kind majorKind: UInt8, groupCount: Int) -> Bool {
        fieldRunsEnabled && groupCount >= fieldRunsGroupCountMin && schemaPositions.isEmpty
            && (majorKind == Kind.update || majorKind == Kind.addInteger
                || majorKind == Kind.createObject)
    }

    /// Chains the incoming Update, AddInteger and EraseObject slots of every conflict group
    /// with at least `fieldRunsGroupCountMin` incoming instructions.
    /// - Complexity: O(nodes + incoming instructions), expected.
    mutating func buildFieldRuns() {
        precondition(!fieldRuns.built, "field runs built twice in one merge")
        let nodeCount = nodes.count
        var entryCount = 0
        for root in 0..<nodeCount {
            let count = Int(groupStart[root + 1] - groupStart[root])
            if count >= fieldRunsGroupCountMin { entryCount += count }
        }
        let localCount = arena.localCount
        let incomingCount = arena.count - localCount
        // Each chain in incoming order: group by group (positions ascend in a group), or, when
        // the large groups hold most of the incoming side, in slot order, which is incoming
        // order within every group too. Slot order reads the columns as a stream, not a cache
        // miss per column per slot (a client integrating 10^6 map updates: a fifth of its
        // merge's time went to this build group by group); group order reads only the large
        // groups' slots (a churn download, whose groups are mostly small).
        let visit = FieldRunVisit(inSlotOrder: 4 * entryCount >= incomingCount,
                                  countMin: fieldRunsGroupCountMin, localCount: localCount)
        // First pass: which objects have chains, and the range of their chained fields.
        fieldRuns.nodeBase.reset(count: nodeCount, repeating: -1)
        fieldRuns.nodeFieldMin.reset(count: nodeCount, repeating: UInt32.max)
        fieldRuns.nodeFieldSpan.reset(count: nodeCount, repeating: 0)
        let (bases, fieldMin, fieldSpan) = (fieldRuns.nodeBase.buffer,
                                            fieldRuns.nodeFieldMin.buffer,
                                            fieldRuns.nodeFieldSpan.buffer)
        var hasEraseRuns = false
        visit.entries(of: arena, roots: nodeRoot, groupStart: groupStart,
                      positions: groupPositions) { _, node, _, field in
            bases[Int(node)] = 0
            if field == UInt32.max {
                hasEraseRuns = true
            } else {
                fieldMin[Int(node)] = min(fieldMin[Int(node)], field)
                fieldSpan[Int(node)] = max(fieldSpan[Int(node)], field)  // the largest, for now
            }
        }
        var runCount = 0
        var direct = true
        for node in 0..<nodeCount where bases[node] >= 0 {
            let span = fieldMin[node] == UInt32.max ? 0 : fieldSpan[node] - fieldMin[node] + 1
            if span > fieldRunsDirectSpanMax {
                direct = false
                break
            }
            if fieldMin[node] == UInt32.max { fieldMin[node] = 0 }
            fieldSpan[node] = span
            bases[node] = Int32(runCount)
            runCount += 1 + Int(span)
        }
        if direct {
            fieldRuns.resetDirect(runs: runCount, incoming: incomingCount, base: localCount)
        } else {
            // Sized by the (node, field) keys as they arrive, not by the instructions: a table
            // of a few keys per object stays in cache.
            var capacity = 16
            while capacity < 2 * entryCount + 2 && capacity < 4096 { capacity *= 2 }
            fieldRuns.resetHashed(capacity: capacity, entries: entryCount,
                                  incoming: incomingCount, base: localCount)
        }
        fieldRuns.hasEraseRuns = hasEraseRuns
        // Second pass: the chains. `lookup` serves the direct numbering only; the hashed one
        // numbers the runs as it inserts them.
        let lookup = fieldRuns.lookup
        arena.changeset.withUnsafeBufferPointer { owners in
            changesetRank.withUnsafeBufferPointer { ranks in
                visit.entries(of: arena, roots: nodeRoot, groupStart: groupStart,
                              positions: groupPositions) { minor, node, chainClass, field in
                    let run = direct ? lookup.run(node: node, field: field)
                        : fieldRuns.insertRun(FieldRunIndex.key(node: node, field: field))
                    fieldRuns.append(minor, rank: ranks[Int(owners[minor])],
                                     chain: 2 * run + chainClass)
                }
            }
        }
        fieldRuns.built = true
    }

    /// Merges local Update, AddInteger or CreateObject `major` (in a large group, no incoming
    /// schema instruction) with the incoming instructions it can interact with, in incoming
    /// order: Updates and AddIntegers on its field and EraseObjects of its object. Identical
    /// to `mergeWithGroup`'s walk, which meets the same instructions in the same order and
    /// finds every other one a no-op.
    /// - Complexity: O(1 + incoming instructions met, including dead ones unlinked).
    mutating func mergeWithFieldRuns(_ major: Int) throws(MergeError) {
        if !fieldRuns.built { buildFieldRuns() }
        let majorKind = arena.kind[major]
        let majorNode = arena.node[major]
        precondition(majorNode >= 0, "field runs hold object instructions only")
        let eraseRun = fieldRuns.hasEraseRuns
            ? fieldRuns.run(node: majorNode, field: UInt32.max) : -1
        let eraseChain = eraseRun < 0 ? -1 : 2 * eraseRun
        var updateChain = -1
        var addChain = -1
        if majorKind != Kind.createObject {
            let fieldRun = fieldRuns.run(node: majorNode, field: arena.field[major])
            if fieldRun >= 0 {
                updateChain = 2 * fieldRun
                // AddInteger vs AddInteger commutes: only a local Update meets incoming adds.
                if majorKind == Kind.update { addChain = 2 * fieldRun + 1 }
            }
        }
        var updateCurrent: Int32 = updateChain < 0 ? -1 : fieldRuns.head.buffer[updateChain].slot
        var addCurrent: Int32 = addChain < 0 ? -1 : fieldRuns.head.buffer[addChain].slot
        var eraseCurrent: Int32 = eraseChain < 0 ? -1 : fieldRuns.head.buffer[eraseChain].slot
        var updatePrevious: Int32 = -1
        var addPrevious: Int32 = -1
        var erasePrevious: Int32 = -1
        let majorDefault = arena.flags[major] & TransformArena.isDefault != 0
        let majorRank = changesetRank[Int(arena.changeset[major])]
        var steps = 0
        let stepsMax = arena.count + 3
        while true {
            steps += 1
            precondition(steps <= stepsMax, "field-run walk did not terminate")
            // Unlink dead instructions at the cursors.
            while updateCurrent >= 0 && !arena.isAlive(Int(updateCurrent)) {
                updateCurrent = fieldRuns.unlink(chain: updateChain, previous: updatePrevious,
                                                 current: updateCurrent)
            }
            while addCurrent >= 0 && !arena.isAlive(Int(addCurrent)) {
                addCurrent = fieldRuns.unlink(chain: addChain, previous: addPrevious,
                                              current: addCurrent)
            }
            while eraseCurrent >= 0 && !arena.isAlive(Int(eraseCurrent)) {
                eraseCurrent = fieldRuns.unlink(chain: eraseChain, previous: erasePrevious,
                                                current: eraseCurrent)
            }
            // The earliest of the three (incoming slots ascend in incoming order).
            var minor = Int32.max
            if updateCurrent >= 0 { minor = updateCurrent }
            if addCurrent >= 0 && addCurrent < minor { minor = addCurrent }
            if eraseCurrent >= 0 && eraseCurrent < minor { minor = eraseCurrent }
            if minor == Int32.max { return }
            let minorSlot = Int(minor)
            if minor == updateCurrent && majorKind == Kind.update {
                // Update vs Update: `mergeUpdates`, inline.
                let minorDefault = arena.flags[minorSlot] & TransformArena.isDefault != 0
                let majorLoses = majorDefault == minorDefault
                    ? changesetRank[Int(arena.changeset[minorSlot])] > majorRank
                    : majorDefault
                if majorLoses {
                    arena.discard(major)
                    return
                }
                arena.discard(minorSlot)
                updateCurrent = fieldRuns.unlink(chain: updateChain, previous: updatePrevious,
                                                 current: updateCurrent)
                continue
            }
            try mergePair(major, minorSlot)
            if !arena.isAlive(major) { return }
            if minor == updateCurrent {
                updatePrevious = updateCurrent
                updateCurrent = fieldRuns.successor(updateCurrent)
            } else if minor == addCurrent {
                addPrevious = addCurrent
                addCurrent = fieldRuns.successor(addCurrent)
            } else {
                erasePrevious = eraseCurrent
                eraseCurrent = fieldRuns.successor(eraseCurrent)
            }
        }
    }

    /// Views of the field runs for the Update sweep (`TransformArena.sweepUpdateMajors`);
    /// `isBuilt` is false before they are built in this merge.
    var fieldRunSweep: FieldRunSweep {
        FieldRunSweep(isBuilt: fieldRuns.built, lookup: fieldRuns.lookup,
                      head: fieldRuns.head.buffer,
                      links: UnsafeBufferPointer(fieldRuns.links.buffer),
                      base: fieldRuns.base, hasEraseRuns: fieldRuns.hasEraseRuns)
    }
}

/// The field runs as the Update sweep reads them (`TransformArena.sweepUpdateMajors`): raw
/// views of a built `FieldRunIndex`, valid until its next build.
///
/// A client integrating a large download has every conflict group large (10^6 map updates on
/// 10^4 objects: about 100 incoming instructions per object), and each local Update went
/// through the walk's dispatch, `mergeWithGroup` and `mergeWithFieldRuns` one by one: about
/// 470 instructions per major. The sweep takes such an Update in its loop when its field's
/// chain of incoming Updates is all it meets.
///
/// Not an optional: unwrapping one in the sweep's loop copied all of its views, through
/// `memcpy`, for every major.
struct FieldRunSweep {
    /// Whether the field runs are built in this merge; else the other views are stale.
    let isBuilt: Bool
    let lookup: FieldRunLookup
    let head: UnsafeMutableBufferPointer<FieldRunHead>
    let links: UnsafeBufferPointer<FieldRunLink>
    /// The first incoming slot (`FieldRunIndex.base`, the arena's `localCount`).
    let base: Int
    let hasEraseRuns: Bool

    /// The chain of incoming Updates that a local Update of `node` and `field` meets, -1 if
    /// none, or nil when it meets more: an EraseObject chain for its object or an AddInteger
    /// chain for its field, dead or alive.
    @inline(__always)
    func chain(node: Int32, field: UInt32) -> Int? {
        if hasEraseRuns {
            let eraseRun = lookup.run(node: node, field: UInt32.max)
            if eraseRun >= 0 && head[2 * eraseRun].slot >= 0 { return nil }
        }
        let run = lookup.run(node: node, field: field)
        if run < 0 { return -1 }
        return head[2 * run + 1].slot >= 0 ? nil : 2 * run
    }

    /// Merges local Update `major` (of `node` and `field`, with flags `majorFlags` and
    /// changeset rank `rank`) with its field's chain exactly as
    /// `Transformer.mergeWithFieldRuns` walks it, when that chain is all it meets: no
    /// EraseObject chain for its object and no AddInteger chain for its field, dead or alive
    /// (those go through the generic rules). On such a chain the walk never passes an alive
    /// minor: each one either loses to the major (discarded, in its packed record too, and
    /// unlinked) or beats it (the major is discarded and the walk ends), so the chain is only
    /// ever cut at its head.
    /// - Returns: whether the major survives, or nil, with nothing changed, when it meets
    ///   anything but its field's Updates.
    @inline(__always)
    func mergeUpdate(
        _ major: Int, node: Int32, field: UInt32, majorFlags: UInt8, rank: UInt32,
        flags: UnsafeMutableBufferPointer<UInt8>,
        records: UnsafeMutableBufferPointer<GroupMinor>, cursors: UnsafeBufferPointer<Int32>
    ) -> Bool? {
        guard let chain = chain(node: node, field: field) else { return nil }
        if chain < 0 { return true }
        let majorDefault = majorFlags & TransformArena.isDefault != 0
        // The chain is only ever cut at its head, so the minor met is always the head, and
        // its rank is the head's.
        var current = head[chain]
        while current.slot >= 0 {
            let minor = Int(current.slot)
            let minorFlags = flags[minor]
            if minorFlags & TransformArena.alive != 0 {
                // Update vs Update (`mergeUpdates`).
                let minorDefault = minorFlags & TransformArena.isDefault != 0
                let majorLoses = majorDefault == minorDefault
                    ? current.rank > rank : majorDefault
                if majorLoses { return false }
                TransformArena.discard(minor, localCount: base, flags: flags, records: records,
                                       cursors: cursors)
            }
            let next = links[minor - base].next
            current = next < 0 ? .empty
                : FieldRunHead(slot: next, rank: links[Int(next) - base].rank)
            head[chain] = current
        }
        return true
    }
}
