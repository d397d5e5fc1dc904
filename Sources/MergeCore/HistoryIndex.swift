//! An incremental index over a growing history of changesets: which entries touch which
//! objects, and which hold schema instructions.
//!
//! ## Why
//!
//! A server integrating an upload U merges it against every history entry after U's base that
//! U's client did not make. Every pairwise rule between instructions on *different* objects is
//! a no-op (see `Transform.swift`), so only entries that touch one of U's objects (or a link
//! target U carries, or that carry a link to one of U's objects), and entries with a schema
//! instruction, can change U or be changed by it. Merging U against just those entries gives
//! the same transformed U and the same reciprocal forms for them; the other entries' reciprocal
//! forms stay as they are. An `EraseColumn` in U or in the window breaks this (it meets every
//! field instruction of its column, whatever the object), so the query then answers
//! "everything" and the caller merges the whole window, as before.
//!
//! ## Layout
//!
//! Positions are dense, `0 ..< count`, in append order. Each distinct object gets a dense node
//! (open addressing keyed by the fixed `stableHash(ObjectRef)`, no `Dictionary`). Each node has
//! a backward chain of postings, one per entry that touches it (deduplicated per entry), so the
//! entries at or after a position are the head of the chain: a query walks only matches.
//!
//! ## Value semantics and cost of a copy
//!
//! `HistoryIndex` is a value type made of a handful of `ContiguousArray`s. Copying it (a
//! server backup) is O(1); the first mutation of either copy afterwards copies the arrays,
//! O(objects + postings + entries), as the history array itself does. `truncate(toCount:)`
//! rolls back to a shorter history in O(removed postings); `reset()` forgets everything.

/// An index of history entries by the objects they touch.
public struct HistoryIndex: Sendable {
    /// Open-addressing slots: the hash's high 32 bits, then `node + 1` in the low 32 bits;
    /// 0 is empty. The count is a power of two, load factor at most 1/2.
    private var slots: ContiguousArray<UInt64> = ContiguousArray(repeating: 0, count: 64)
    /// The object of each node.
    private var objects: ContiguousArray<ObjectRef> = []
    /// The newest posting of each node, or -1.
    private var heads: ContiguousArray<Int32> = []
    /// Postings, in append (position) order: the entry position, the node, and the node's
    /// previous posting (or -1).
    private var postingPositions: ContiguousArray<Int32> = []
    private var postingNodes: ContiguousArray<Int32> = []
    private var postingPrevious: ContiguousArray<Int32> = []
    /// Positions of entries with a schema instruction (AddTable, AddColumn, EraseColumn),
    /// ascending; and of those with an EraseColumn, ascending.
    private var schemaPositions: ContiguousArray<Int32> = []
    private var eraseColumnPositions: ContiguousArray<Int32> = []
    /// The origin file ident of each entry.
    private var origins: ContiguousArray<UInt64> = []
    /// `instructionPrefix[p]`: instructions of the entries before position `p` (count + 1
    /// elements).
    private var instructionPrefix: ContiguousArray<Int> = [0]

    /// An empty index.
    public init() {}

    /// Entries indexed.
    public var count: Int { origins.count }

    /// What a query selects.
    public enum Selection: Sendable, Equatable {
        /// Only the positions written to the output (ascending, unique).
        case positions
        /// Every entry of the window: an EraseColumn is in the query or in the window.
        case everything
    }

    /// Registers `changeset` as the entry at `position`, which must be `count`.
    /// - Complexity: O(instructions of the changeset) expected.
    public mutating func append(_ changeset: Changeset, at position: Int) {
        precondition(position == count, "history index entries must be appended in order")
        precondition(position < Int(Int32.max), "history index position out of range")
        let entry = Int32(position)
        var hasSchema = false
        var erasesColumn = false
        let instructions = changeset.instructions
        for index in instructions.indices {
            switch instructions[index] {
            case .addTable, .addColumn:
                hasSchema = true
            case .eraseColumn:
                hasSchema = true
                erasesColumn = true
            case .update(let object, _, .link(let target), _),
                .arrayUpdate(let object, _, _, .link(let target), _),
                .arrayInsert(let object, _, _, .link(let target), _),
                .setInsert(let object, _, .link(let target)):
                post(node(for: object), entry)
                post(node(for: target), entry)
            case .createObject(let object), .eraseObject(let object),
                .update(let object, _, _, _), .arrayUpdate(let object, _, _, _, _),
                .addInteger(let object, _, _), .arrayInsert(let object, _, _, _, _),
                .arrayMove(let object, _, _, _, _), .arrayErase(let object, _, _, _),
                .clear(let object, _), .setInsert(let object, _, _), .setErase(let object, _, _):
                post(node(for: object), entry)
            }
        }
        if hasSchema { schemaPositions.append(entry) }
        if erasesColumn { eraseColumnPositions.append(entry) }
        origins.append(changeset.originFileIdent)
        instructionPrefix.append(instructionPrefix[instructionPrefix.count - 1] + instructions.count)
        precondition(instructionPrefix.count == origins.count + 1, "prefix sums out of step")
        checkInvariants()
    }

    /// Rolls back to the first `newCount` entries, as if the later ones had never been
    /// appended (nodes of objects seen only in them stay, with empty chains).
    /// - Complexity: O(postings of the removed entries).
    public mutating func truncate(toCount newCount: Int) {
        precondition(newCount >= 0, "negative history index count")
        precondition(newCount <= count, "cannot truncate a history index to a larger count")
        let limit = Int32(newCount)
        while let last = postingPositions.last, last >= limit {
            let posting = postingPositions.count - 1
            heads[Int(postingNodes[posting])] = postingPrevious[posting]
            postingPositions.removeLast()
            postingNodes.removeLast()
            postingPrevious.removeLast()
        }
        while let last = schemaPositions.last, last >= limit { schemaPositions.removeLast() }
        while let last = eraseColumnPositions.last, last >= limit { eraseColumnPositions.removeLast() }
        origins.removeLast(origins.count - newCount)
        instructionPrefix.removeLast(instructionPrefix.count - newCount - 1)
        precondition(count == newCount, "truncate missed entries")
        checkInvariants()
    }

    /// Forgets every entry and object (a terminated history).
    /// - Complexity: O(capacity) to clear the slots.
    public mutating func reset() {
        slots.removeAll(keepingCapacity: true)
        slots.append(contentsOf: repeatElement(0, count: 64))
        objects.removeAll(keepingCapacity: true)
        heads.removeAll(keepingCapacity: true)
        postingPositions.removeAll(keepingCapacity: true)
        postingNodes.removeAll(keepingCapacity: true)
        postingPrevious.removeAll(keepingCapacity: true)
        schemaPositions.removeAll(keepingCapacity: true)
        eraseColumnPositions.removeAll(keepingCapacity: true)
        origins.removeAll(keepingCapacity: true)
        instructionPrefix.removeAll(keepingCapacity: true)
        instructionPrefix.append(0)
        precondition(count == 0, "reset left entries")
    }

    /// Instructions of the entries at positions `start ..< count` (all origins): an upper
    /// bound of a window's size, for callers that must keep the merge's instruction limit.
    /// - Complexity: O(1).
    public func instructionCount(from start: Int) -> Int {
        precondition(start >= 0 && start <= count, "window start out of range")
        return instructionPrefix[count] - instructionPrefix[start]
    }

    /// The origin file ident of the entry at `position`.
    /// - Complexity: O(1).
    public func origin(at position: Int) -> UInt64 {
        precondition(position >= 0 && position < count, "position out of range")
        return origins[position]
    }

    /// The entries at positions `start ..< count` whose origin is not `excludedOrigin` and
    /// that a merge of `changesets` against the window must see: those touching (as object or
    /// link target) an object that `changesets` touch, and those with a schema instruction.
    ///
    /// Writes them to `positions` (cleared first), ascending and unique, and returns
    /// `.positions`; returns `.everything` (and leaves `positions` empty) when `changesets` or
    /// the window hold an `EraseColumn`, where every entry of the window matters.
    /// `nodeScratch` is a caller-owned buffer (cleared and reused).
    /// - Complexity: O(I · log I + M · log M) for I instructions of `changesets` and M
    ///   postings in the window on their objects, plus S schema entries in the window.
    public func relevantEntries(
        touchedBy changesets: ContiguousArray<Changeset>, from start: Int,
        excludingOrigin excludedOrigin: UInt64?, into positions: inout ContiguousArray<Int32>,
        nodeScratch: inout ContiguousArray<Int32>
    ) -> Selection {
        precondition(start >= 0 && start <= count, "window start out of range")
        positions.removeAll(keepingCapacity: true)
        nodeScratch.removeAll(keepingCapacity: true)
        let first = Int32(start)
        if let last = eraseColumnPositions.last, last >= first { return .everything }
        for changeset in changesets {
            let instructions = changeset.instructions
            for index in instructions.indices {
                switch instructions[index] {
                case .addTable, .addColumn:
                    continue
                case .eraseColumn:
                    positions.removeAll(keepingCapacity: true)
                    return .everything
                case .update(let object, _, .link(let target), _),
                    .arrayUpdate(let object, _, _, .link(let target), _),
                    .arrayInsert(let object, _, _, .link(let target), _),
                    .setInsert(let object, _, .link(let target)):
                    if let node = existingNode(for: object) { nodeScratch.append(node) }
                    if let node = existingNode(for: target) { nodeScratch.append(node) }
                case .createObject(let object), .eraseObject(let object),
                    .update(let object, _, _, _), .arrayUpdate(let object, _, _, _, _),
                    .addInteger(let object, _, _), .arrayInsert(let object, _, _, _, _),
                    .arrayMove(let object, _, _, _, _), .arrayErase(let object, _, _, _),
                    .clear(let object, _), .setInsert(let object, _, _), .setErase(let object, _, _):
                    if let node = existingNode(for: object) { nodeScratch.append(node) }
                }
            }
        }
        nodeScratch.sort()
        var previousNode: Int32 = -1
        for node in nodeScratch where node != previousNode {
            previousNode = node
            var posting = heads[Int(node)]
            while posting >= 0 {
                let position = postingPositions[Int(posting)]
                if position < first { break }
                if origins[Int(position)] != excludedOrigin { positions.append(position) }
                posting = postingPrevious[Int(posting)]
            }
        }
        var schemaIndex = schemaPositions.count - 1
        while schemaIndex >= 0, schemaPositions[schemaIndex] >= first {
            let position = schemaPositions[schemaIndex]
            if origins[Int(position)] != excludedOrigin { positions.append(position) }
            schemaIndex -= 1
        }
        positions.sort()
        // Deduplicate in place.
        var kept = 0
        for index in positions.indices where kept == 0 || positions[index] != positions[kept - 1] {
            positions[kept] = positions[index]
            kept += 1
        }
        positions.removeLast(positions.count - kept)
        precondition(positions.first.map { $0 >= first } ?? true, "selected an entry before the window")
        precondition(positions.last.map { Int($0) < count } ?? true, "selected an entry beyond the history")
        return .positions
    }

    // MARK: - Node table

    /// Adds a posting of `entry` to `node`, unless the node's newest posting is that entry.
    @inline(__always)
    private mutating func post(_ node: Int32, _ entry: Int32) {
        let head = heads[Int(node)]
        if head >= 0 && postingPositions[Int(head)] == entry { return }
        precondition(postingPositions.count < Int(Int32.max), "too many history index postings")
        postingPositions.append(entry)
        postingNodes.append(node)
        postingPrevious.append(head)
        heads[Int(node)] = Int32(postingPositions.count - 1)
    }

    /// The node of `object` if it has one.
    @inline(__always)
    private func existingNode(for object: ObjectRef) -> Int32? {
        let hash = stableHash(object)
        let mask = slots.count - 1
        var slotIndex = Int(truncatingIfNeeded: hash) & mask
        let tag = hash & 0xFFFF_FFFF_0000_0000
        while true {
            let slot = slots[slotIndex]
            if slot == 0 { return nil }
            if slot & 0xFFFF_FFFF_0000_0000 == tag {
                let node = Int(slot & 0xFFFF_FFFF) - 1
                if objects[node] == object { return Int32(node) }
            }
            slotIndex = (slotIndex + 1) & mask
        }
    }

    /// The node of `object`, created on first sight.
    /// - Complexity: O(1) expected (amortised over growth).
    private mutating func node(for object: ObjectRef) -> Int32 {
        if let node = existingNode(for: object) { return node }
        if (objects.count + 1) * 2 > slots.count { grow() }
        precondition(objects.count < Int(Int32.max) - 1, "too many objects in the history index")
        let node = Int32(objects.count)
        objects.append(object)
        heads.append(-1)
        insertSlot(hash: stableHash(object), node: node)
        return node
    }

    private mutating func insertSlot(hash: UInt64, node: Int32) {
        let mask = slots.count - 1
        var slotIndex = Int(truncatingIfNeeded: hash) & mask
        while slots[slotIndex] != 0 { slotIndex = (slotIndex + 1) & mask }
        slots[slotIndex] = (hash & 0xFFFF_FFFF_0000_0000) | UInt64(node + 1)
    }

    /// Doubles the slot array and reinserts every node.
    private mutating func grow() {
        let capacity = slots.count * 2
        slots.removeAll(keepingCapacity: true)
        slots.append(contentsOf: repeatElement(0, count: capacity))
        for node in objects.indices {
            insertSlot(hash: stableHash(objects[node]), node: Int32(node))
        }
        precondition(objects.count * 2 <= slots.count, "history index table too full after growing")
    }

    // MARK: - Invariants

#if SYNCSIM_INTERNAL_CHECKS
    /// Cheap checks on every mutation: parallel arrays in step, postings in position order.
    /// (The full walk is `checkInvariantsFully()`.)
    @inline(never)
    func checkInvariants() {
        precondition(heads.count == objects.count, "heads out of step with objects")
        precondition(postingNodes.count == postingPositions.count, "posting arrays out of step")
        precondition(postingPrevious.count == postingPositions.count, "posting arrays out of step")
        precondition(instructionPrefix.count == origins.count + 1, "prefix sums out of step")
        if let last = postingPositions.last { precondition(Int(last) < count, "posting beyond the end") }
    }
#else
    @inline(__always)
    func checkInvariants() {}
#endif

    /// Walks the whole index and traps on a broken invariant: postings ascending, every chain
    /// strictly descending and consistent with its node, schema lists ascending.
    /// - Complexity: O(objects + postings + entries).
    public func checkInvariantsFully() {
        for index in postingPositions.indices.dropFirst() {
            precondition(postingPositions[index - 1] <= postingPositions[index],
                         "postings not in position order")
        }
        for node in heads.indices {
            var posting = heads[node]
            var previousPosition = Int32.max
            while posting >= 0 {
                precondition(Int(postingNodes[Int(posting)]) == node, "posting on the wrong chain")
                precondition(postingPositions[Int(posting)] < previousPosition,
                             "chain not strictly descending")
                previousPosition = postingPositions[Int(posting)]
                posting = postingPrevious[Int(posting)]
            }
            precondition(existingNode(for: objects[node]) == Int32(node), "object not findable")
        }
        for index in schemaPositions.indices.dropFirst() {
            precondition(schemaPositions[index - 1] < schemaPositions[index], "schema list unsorted")
        }
        for index in eraseColumnPositions.indices.dropFirst() {
            precondition(eraseColumnPositions[index - 1] < eraseColumnPositions[index],
                         "EraseColumn list unsorted")
        }
    }
}
