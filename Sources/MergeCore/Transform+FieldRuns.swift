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
struct FieldRunIndex: Sendable {
    var built = false
    /// Open addressing: `key + 1` (0 = empty) and the run number of each slot.
    var tableKeys: ContiguousArray<UInt64> = []
    var tableRuns: ContiguousArray<Int32> = []
    /// Per run number r: heads and tails of chains `2r` (class 0) and `2r + 1` (class 1).
    var head: ContiguousArray<Int32> = []
    var tail: ContiguousArray<Int32> = []
    /// `next[slot - base]`: the next incoming slot of the chain, or -1.
    var next: ContiguousArray<Int32> = []
    var base = 0
    var runCount = 0
    /// Whether any chain holds EraseObjects (else a major skips their lookup).
    var hasEraseRuns = false

    @inline(__always)
    static func key(node: Int32, field: UInt32) -> UInt64 {
        UInt64(UInt32(bitPattern: node)) << 32 | UInt64(field)
    }

    /// The run number of `key`, or -1.
    @inline(__always)
    func run(_ key: UInt64) -> Int {
        let mask = tableKeys.count - 1
        if mask < 0 { return -1 }
        var slotIndex = Int(truncatingIfNeeded: quickMix(key)) & mask
        while true {
            let stored = tableKeys[slotIndex]
            if stored == 0 { return -1 }
            if stored == key &+ 1 { return Int(tableRuns[slotIndex]) }
            slotIndex = (slotIndex + 1) & mask
        }
    }

    /// The run number of `key`, created if new.
    @inline(__always)
    mutating func insertRun(_ key: UInt64) -> Int {
        let mask = tableKeys.count - 1
        var slotIndex = Int(truncatingIfNeeded: quickMix(key)) & mask
        while true {
            let stored = tableKeys[slotIndex]
            if stored == key &+ 1 { return Int(tableRuns[slotIndex]) }
            if stored == 0 { break }
            slotIndex = (slotIndex + 1) & mask
        }
        if (runCount + 1) * 2 > tableKeys.count {
            grow()
            return insertRun(key)
        }
        let run = runCount
        runCount += 1
        tableKeys[slotIndex] = key &+ 1
        tableRuns[slotIndex] = Int32(run)
        head.append(-1)
        head.append(-1)
        tail.append(-1)
        tail.append(-1)
        return run
    }

    /// Doubles the table (load factor at most 1/2).
    mutating func grow() {
        let oldKeys = tableKeys
        let oldRuns = tableRuns
        let capacity = oldKeys.count * 2
        tableKeys = ContiguousArray(repeating: 0, count: capacity)
        tableRuns = ContiguousArray(repeating: -1, count: capacity)
        let mask = capacity - 1
        for oldIndex in oldKeys.indices where oldKeys[oldIndex] != 0 {
            var slotIndex = Int(truncatingIfNeeded: quickMix(oldKeys[oldIndex] &- 1)) & mask
            while tableKeys[slotIndex] != 0 { slotIndex = (slotIndex + 1) & mask }
            tableKeys[slotIndex] = oldKeys[oldIndex]
            tableRuns[slotIndex] = oldRuns[oldIndex]
        }
    }

    /// Appends incoming `slot` to chain `chain` (slots arrive in ascending order).
    @inline(__always)
    mutating func append(_ slot: Int, chain: Int) {
        let last = tail[chain]
        if last < 0 { head[chain] = Int32(slot) } else { next[Int(last) - base] = Int32(slot) }
        tail[chain] = Int32(slot)
    }

    /// Unlinks `current` (whose predecessor in `chain` is `previous`, or -1 at the head) and
    /// returns its successor. The tail is not maintained after the build.
    @inline(__always)
    mutating func unlink(chain: Int, previous: Int32, current: Int32) -> Int32 {
        let successor = next[Int(current) - base]
        if previous < 0 { head[chain] = successor } else { next[Int(previous) - base] = successor }
        return successor
    }

    @inline(__always)
    func successor(_ slot: Int32) -> Int32 { next[Int(slot) - base] }
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
    /// - Complexity: O(nodes + instructions of those groups), expected.
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
        fieldRuns.tableKeys.removeAll(keepingCapacity: true)
        fieldRuns.tableKeys.append(contentsOf: repeatElement(0, count: capacity))
        fieldRuns.tableRuns.removeAll(keepingCapacity: true)
        fieldRuns.tableRuns.append(contentsOf: repeatElement(-1, count: capacity))
        fieldRuns.head.removeAll(keepingCapacity: true)
        fieldRuns.tail.removeAll(keepingCapacity: true)
        fieldRuns.runCount = 0
        fieldRuns.hasEraseRuns = false
        fieldRuns.base = arena.localCount
        fieldRuns.next.removeAll(keepingCapacity: true)
        fieldRuns.next.append(contentsOf: repeatElement(-1, count: arena.count - arena.localCount))
        for root in 0..<nodeCount {
            let start = Int(groupStart[root])
            let end = Int(groupStart[root + 1])
            if end - start < fieldRunsGroupCountMin { continue }
            for cursor in start..<end {
                let minor = Int(groupPositions[cursor])
                let kind = arena.kind[minor]
                let chainClass: Int
                let field: UInt32
                if kind == Kind.update {
                    chainClass = 0
                    field = arena.field[minor]
                } else if kind == Kind.addInteger {
                    chainClass = 1
                    field = arena.field[minor]
                } else if kind == Kind.eraseObject {
                    chainClass = 0
                    field = UInt32.max
                    fieldRuns.hasEraseRuns = true
                } else {
                    continue
                }
                let run = fieldRuns.insertRun(FieldRunIndex.key(node: arena.node[minor],
                                                                field: field))
                fieldRuns.append(minor, chain: 2 * run + chainClass)
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
        var updateCurrent: Int32 = updateChain < 0 ? -1 : fieldRuns.head[updateChain]
        var addCurrent: Int32 = addChain < 0 ? -1 : fieldRuns.head[addChain]
        var eraseCurrent: Int32 = eraseChain < 0 ? -1 : fieldRuns.head[eraseChain]
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
}
