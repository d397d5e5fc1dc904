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
//! `FastPathTests` against `fieldRunsEnabled = false`).

/// Chains of incoming slots per (object node, field, class) for the large conflict groups of
/// one merge. Class 0 is Update (or, with field `UInt32.max`, EraseObject), class 1 is
/// AddInteger. Built lazily, at most once per merge.
///
/// Its tables are scratch buffers, not arrays: a client integrating 10^6 map updates on 10^4
/// objects builds a chain entry per incoming Update and unlinks most of them again, and every
/// write to an array held in the transformer checked its uniqueness first (about 50 million
/// runtime calls in that merge, 4 % of its instructions).
struct FieldRunIndex: Sendable {
    var built = false
    /// Open addressing over `tableCapacity` slots: `key + 1` (0 = empty) and the run number
    /// of each slot.
    var tableKeys = ScratchBuffer<UInt64>()
    var tableRuns = ScratchBuffer<Int32>()
    var tableCapacity = 0
    /// Per run number r: heads and tails of chains `2r` (class 0) and `2r + 1` (class 1).
    var head = ScratchBuffer<Int32>()
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

    /// Empties the index for a merge with `entries` chain entries at most (so at most that
    /// many runs) and `incoming` incoming slots from `base` on, with a table of `capacity`
    /// slots (a power of two).
    mutating func reset(capacity: Int, entries: Int, incoming: Int, base: Int) {
        tableCapacity = capacity
        tableKeys.reset(count: capacity, repeating: 0)
        tableRuns.reset(count: capacity, repeating: -1)
        head.reserve(2 * entries + 2, repeating: -1)
        tail.reserve(2 * entries + 2, repeating: -1)
        links.reserve(incoming, repeating: FieldRunLink(next: -1, rank: 0))
        runCount = 0
        hasEraseRuns = false
        self.base = base
    }

    /// The run number of `key`, or -1.
    @inline(__always)
    func run(_ key: UInt64) -> Int { table.run(key) }

    /// Raw views of the table, for loops that look up many keys: valid until the next
    /// `reset` or `insertRun`.
    var table: FieldRunTable {
        @inline(__always) get {
            FieldRunTable(keys: UnsafeBufferPointer(tableKeys.buffer),
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
        head.buffer[2 * run] = -1
        head.buffer[2 * run + 1] = -1
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
        if last < 0 { head.buffer[chain] = Int32(slot) } else {
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
        if previous < 0 { head.buffer[chain] = successor } else {
            links.buffer[Int(previous) - base].next = successor
        }
        return successor
    }

    @inline(__always)
    func successor(_ slot: Int32) -> Int32 { links.buffer[Int(slot) - base].next }
}

/// The (node, field) table of a `FieldRunIndex`, read through raw views.
struct FieldRunTable {
    let keys: UnsafeBufferPointer<UInt64>
    let runs: UnsafeBufferPointer<Int32>
    /// The capacity minus one; -1 when the table is empty.
    let mask: Int

    /// The run number of `key`, or -1.
    @inline(__always)
    func run(_ key: UInt64) -> Int {
        if mask < 0 { return -1 }
        var slotIndex = Int(truncatingIfNeeded: quickMix(key)) & mask
        while true {
            let stored = keys[slotIndex]
            if stored == 0 { return -1 }
            if stored == key &+ 1 { return Int(runs[slotIndex]) }
            slotIndex = (slotIndex + 1) & mask
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
        // Sized by the (node, field) keys as they arrive, not by the instructions: a table of
        // a few keys per object stays in cache.
        var capacity = 16
        while capacity < 2 * entryCount + 2 && capacity < 4096 { capacity *= 2 }
        fieldRuns.reset(capacity: capacity, entries: entryCount,
                        incoming: arena.count - arena.localCount, base: arena.localCount)
        // Each chain in incoming order: group by group (positions ascend in a group), or, when
        // the large groups hold most of the incoming side, in slot order, which is incoming
        // order within every group too. Slot order reads the columns as a stream, not a cache
        // miss per column per slot (a client integrating 10^6 map updates: a fifth of its
        // merge's time went to this build group by group); group order reads only the large
        // groups' slots (a churn download, whose groups are mostly small).
        let countMin = fieldRunsGroupCountMin
        let localCount = arena.localCount
        let inSlotOrder = 4 * entryCount >= arena.count - localCount
        arena.kind.withUnsafeBufferPointer { kinds in
            arena.field.withUnsafeBufferPointer { fields in
                arena.node.withUnsafeBufferPointer { nodes in
                    arena.changeset.withUnsafeBufferPointer { owners in
                        changesetRank.withUnsafeBufferPointer { ranks in
                            /// Appends incoming `minor` of `node` to its chain, if its kind
                            /// takes one.
                            func chain(_ minor: Int, node: Int32) {
                                let kind = kinds[minor]
                                let chainClass: Int
                                let field: UInt32
                                if kind == Kind.update {
                                    chainClass = 0
                                    field = fields[minor]
                                } else if kind == Kind.addInteger {
                                    chainClass = 1
                                    field = fields[minor]
                                } else if kind == Kind.eraseObject {
                                    chainClass = 0
                                    field = UInt32.max
                                    fieldRuns.hasEraseRuns = true
                                } else {
                                    return
                                }
                                let run = fieldRuns.insertRun(
                                    FieldRunIndex.key(node: node, field: field))
                                fieldRuns.append(minor, rank: ranks[Int(owners[minor])],
                                                 chain: 2 * run + chainClass)
                            }
                            if inSlotOrder {
                                for minor in localCount..<kinds.count {
                                    let node = nodes[minor]
                                    if node < 0 { continue }
                                    let root = Int(nodeRoot[Int(node)])
                                    if groupStart[root + 1] - groupStart[root] < countMin {
                                        continue
                                    }
                                    chain(minor, node: node)
                                }
                            } else {
                                for root in 0..<nodeCount {
                                    let start = Int(groupStart[root])
                                    let end = Int(groupStart[root + 1])
                                    if end - start < countMin { continue }
                                    for cursor in start..<end {
                                        let minor = Int(groupPositions[cursor])
                                        chain(minor, node: nodes[minor])
                                    }
                                }
                            }
                        }
                    }
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
            ? fieldRuns.run(FieldRunIndex.key(node: majorNode, field: UInt32.max)) : -1
        let eraseChain = eraseRun < 0 ? -1 : 2 * eraseRun
        var updateChain = -1
        var addChain = -1
        if majorKind != Kind.createObject {
            let fieldRun = fieldRuns.run(FieldRunIndex.key(node: majorNode,
                                                           field: arena.field[major]))
            if fieldRun >= 0 {
                updateChain = 2 * fieldRun
                // AddInteger vs AddInteger commutes: only a local Update meets incoming adds.
                if majorKind == Kind.update { addChain = 2 * fieldRun + 1 }
            }
        }
        var updateCurrent: Int32 = updateChain < 0 ? -1 : fieldRuns.head.buffer[updateChain]
        var addCurrent: Int32 = addChain < 0 ? -1 : fieldRuns.head.buffer[addChain]
        var eraseCurrent: Int32 = eraseChain < 0 ? -1 : fieldRuns.head.buffer[eraseChain]
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

    /// Whether `sweepFieldRunUpdates` can start at local object instruction `major` of kind
    /// `kind`: an Update of a group with at least `fieldRunsGroupCountMin` incoming
    /// instructions and no list blocks. Checked in the walk, inline: merges whose groups are
    /// all small never build the chains for it.
    @inline(__always)
    func fieldRunSweepStarts(at major: Int, kind: UInt8) -> Bool {
        guard kind == Kind.update else { return false }
        let root = Int(nodeRoot[Int(arena.node[major])])
        return Int(groupStart[root + 1] - groupStart[root]) >= fieldRunsGroupCountMin
            && groupBlockLower[root] < 0
    }

    /// Sweeps local Update majors of large groups from `first` on, each through its field's
    /// chain of incoming Updates exactly as `mergeWithFieldRuns` walks it, in one loop over
    /// raw views instead of a dispatch per major. A client integrating a large download has
    /// every group large (10^6 map updates on 10^4 objects: about 100 incoming instructions
    /// per object), and each local Update went through the walk's dispatch, `mergeWithGroup`
    /// and `mergeWithFieldRuns`: about 470 instructions per major, a third of the merge.
    ///
    /// The sweep takes a major only when its field's chain is all it meets: an alive Update
    /// whose group has at least `fieldRunsGroupCountMin` incoming instructions and no list
    /// blocks, with no EraseObject chain for its object and no AddInteger chain for its field
    /// (dead or alive: those chains go through the generic rules). On such a chain
    /// `mergeWithFieldRuns` never passes an alive minor: each one either loses to the major
    /// (discarded and unlinked) or beats it (the major is discarded and the walk ends), so the
    /// chain is only ever cut at its head. The sweep stops at the first alive major it does
    /// not take; dead majors are skipped, as the walk does.
    /// - Returns: the slot the walk continues from, or nil when the sweep took no slot.
    /// - Precondition: no incoming schema instruction and no EraseColumn in the merge.
    mutating func sweepFieldRunUpdates(from first: Int) -> Int? {
        if !fieldRuns.built { buildFieldRuns() }
        let end = arena.localCount
        let countMin = fieldRunsGroupCountMin
        let hasEraseRuns = fieldRuns.hasEraseRuns
        let base = fieldRuns.base
        let head = fieldRuns.head.buffer
        let links = fieldRuns.links.buffer
        let table = fieldRuns.table
        var swept = 0
        let stop = TransformArena.SweepViews.with(
            kinds: arena.kind, nodes: arena.node, fields: arena.field, owners: arena.changeset,
            roots: nodeRoot, groupStart: groupStart, blockLower: groupBlockLower,
            packed: groupPacked, ranks: changesetRank, minors: groupPositions
        ) { views in
            arena.groupCursor.withUnsafeBufferPointer { cursors in
                arena.groupMinors.withUnsafeMutableBufferPointer { records in
                    arena.flags.withUnsafeMutableBufferPointer { flags in
                        var major = first
                        while major < end {
                            let majorFlags = flags[major]
                            if majorFlags & TransformArena.alive == 0 {
                                major += 1
                                continue
                            }
                            let node = views.nodes[major]
                            guard views.kinds[major] == Kind.update && node >= 0 else { break }
                            let root = Int(views.roots[Int(node)])
                            guard views.groupStart[root + 1] - views.groupStart[root] >= countMin,
                                views.blockLower[root] < 0 else { break }
                            if hasEraseRuns {
                                let eraseRun = table.run(
                                    FieldRunIndex.key(node: node, field: UInt32.max))
                                if eraseRun >= 0 && head[2 * eraseRun] >= 0 { break }
                            }
                            let run = table.run(
                                FieldRunIndex.key(node: node, field: views.fields[major]))
                            if run >= 0 {
                                if head[2 * run + 1] >= 0 { break }
                                let chain = 2 * run
                                let majorDefault = majorFlags & TransformArena.isDefault != 0
                                let majorRank = views.ranks[Int(views.owners[major])]
                                var current = head[chain]
                                while current >= 0 {
                                    let minor = Int(current)
                                    let minorFlags = flags[minor]
                                    if minorFlags & TransformArena.alive != 0 {
                                        // Update vs Update (`mergeUpdates`).
                                        let minorDefault =
                                            minorFlags & TransformArena.isDefault != 0
                                        let majorLoses = majorDefault == minorDefault
                                            ? links[minor - base].rank > majorRank
                                            : majorDefault
                                        if majorLoses {
                                            flags[major] = majorFlags & ~TransformArena.alive
                                            break
                                        }
                                        flags[minor] = minorFlags & ~TransformArena.alive
                                        if minorFlags & TransformArena.packed != 0 {
                                            records[Int(cursors[minor - end])].flags &=
                                                ~TransformArena.alive
                                        }
                                    }
                                    current = links[minor - base].next
                                    head[chain] = current
                                }
                            }
                            swept += 1
                            major += 1
                        }
                        return major
                    }
                }
            }
        }
        arena.fieldRunMajorsSwept &+= swept
        return stop > first ? stop : nil
    }
}
