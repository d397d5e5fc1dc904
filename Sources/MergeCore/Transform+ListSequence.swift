//! Contested list groups merged from element identities (`ListSequenceMerge`) instead of
//! pair by pair.

/// When a list group is merged by `ListSequenceMerge`.
struct ListSequenceSettings: Sendable {
    /// Off: every list group walks the grid (the differential tests' reference).
    var enabled = true
    /// Groups whose sides multiply to fewer pairs walk the grid (cheaper when small).
    var pairsMin = 4_096
    /// Groups with fewer pairs per element (base, local and incoming instructions) walk the
    /// grid: a pair check costs a few nanoseconds, the sequence merge about a hundred per
    /// element (both replays, the order, the sweeps).
    var pairsPerElementMin = 32
    /// Groups with fewer incoming instructions walk the grid: a cheap first filter, before the
    /// local side is counted. With D incoming and L local instructions a group has D · L pairs
    /// and more than L elements, so fewer than D pairs per element: any D below
    /// `pairsPerElementMin` fails that limit anyway, and this one only saves the checks.
    /// (It was 256 while the local side was always linked: the placements then replayed
    /// about L · ln(D) elements, more than D · L pair checks when D is small. Linking the
    /// smaller side, they replay at most min(D, L) · ln(max(D, L)). A server at K = 10 and
    /// 10^4 instructions merges 100 edits per list and upload: 0.58 → 0.88 M/s when 256
    /// became 16.)
    var incomingMin = 16
    /// Groups the list blocks can cut (typing) keep the block walk.
    var leavesBlockedGroups = true
    /// Which side `ListSequenceMerge` links first (its "local" side, whose elements the
    /// regions hold) and which it places row by row among them (see `LinkedSide`).
    var linkedSide = LinkedSide.smaller

    /// The side a sequence merge links first. The grid of inserts and erases is symmetric
    /// (every rule treats both instructions of a pair alike, ties going to the lower rank
    /// whichever side it is on), so either side may be the one whose inserts are placed row
    /// by row; the results are the same. The replays of a group cover about
    /// (linked side's size) · ln(placed side's size) elements, so linking the smaller side
    /// is cheaper: a server merging an upload of D edits against a history of L ≫ D.
    enum LinkedSide: Sendable {
        case local
        case incoming
        /// The side with fewer instructions in the group (the local side on a tie).
        case smaller
    }
}

extension Transformer {
    /// Before the walk: merges every list group whose instructions on both sides are alive
    /// ArrayInsert and ArrayErase instructions on one list, and that `listSequenceSettings`
    /// admits (enough incoming instructions, pairs and pairs per element; no list blocks),
    /// with `ListSequenceMerge`, and marks it
    /// (`sequencedGroup`, `groupBlockLower` -3) so the walk skips its local instructions. A
    /// group the sequence merge gives up on walks the grid as before.
    ///
    /// Only without incoming schema instructions or an EraseColumn (the caller checks): then
    /// a local schema instruction meets list instructions only in no-op rules, so merging the
    /// group before the walk reaches it changes nothing.
    ///
    /// `keepsLocalReplays`: the local side may come back, as it is, in later merges (a server's
    /// history, in the `localEdits` form), so its list replays are worth keeping
    /// (`ListReplayCache`); a client's changesets, which the merge rewrites, are not.
    /// - Returns: whether any group was merged here.
    /// - Complexity: O(D + L) to find the groups, plus each merged group's cost.
    mutating func mergeListSequences(keepsLocalReplays: Bool) -> Bool {
        let rootCount = nodeRoot.count
        sequencedGroup.removeAll(keepingCapacity: true)
        sequencedGroup.append(contentsOf: repeatElement(Self.sequenceNone, count: rootCount))
        let pairsMin = listSequenceSettings.pairsMin
        var anyCandidate = false
        for root in 0..<rootCount {
            let start = Int(groupStart[root])
            let end = Int(groupStart[root + 1])
            if end == start || end - start < listSequenceSettings.incomingMin
                || (end - start) * arena.localCount < pairsMin
            {
                continue
            }
            if !isSingleListOfEdits(groupPositions[start..<end]) { continue }
            if listSequenceSettings.leavesBlockedGroups && !listBlocks(root).isEmpty {
                // Typing: the block walk merges it. Rejected before the local side is counted,
                // a pass over the whole window (4 % of a text-like server merge at K = 100).
                // The blocks are cut from the slots' columns: packing would size one record
                // per incoming instruction of the merge, which a merged group never reads.
                sequencedGroup[root] = Self.sequenceRejected
            } else {
                sequencedGroup[root] = Self.sequenceCandidate
                anyCandidate = true
            }
        }
        if !anyCandidate { return false }
        // The local side: count each candidate's instructions, rejecting a group with any other.
        sequenceLocalStart.removeAll(keepingCapacity: true)
        sequenceLocalStart.append(contentsOf: repeatElement(0, count: rootCount + 1))
        countSequenceLocals()
        let settings = listSequenceSettings
        for root in 0..<rootCount {
            let localInGroup = Int(sequenceLocalStart[root + 1])
            sequenceLocalStart[root + 1] += sequenceLocalStart[root]
            if sequencedGroup[root] != Self.sequenceCandidate { continue }
            let start = Int(groupStart[root])
            let incomingInGroup = Int(groupStart[root + 1]) - start
            let baseSize = Int(arena.priorSize[Int(groupPositions[start])])
            let pairs = localInGroup * incomingInGroup
            // A candidate has at least `incomingMin` incoming instructions (checked above).
            if localInGroup == 0 || pairs < pairsMin
                || pairs < settings.pairsPerElementMin * (baseSize + localInGroup + incomingInGroup)
            {
                sequencedGroup[root] = Self.sequenceRejected
            }
        }
        // Each candidate's local slots, in order (a counting sort).
        let slotCount = Int(sequenceLocalStart[rootCount])
        if slotCount == 0 { return false }
        sequenceLocalSlots.removeAll(keepingCapacity: true)
        sequenceLocalSlots.append(contentsOf: repeatElement(0, count: slotCount))
        sequenceCursor.removeAll(keepingCapacity: true)
        sequenceCursor.append(contentsOf: sequenceLocalStart)
        fillSequenceLocals()
        var anyMerged = false
        for root in 0..<rootCount where sequencedGroup[root] == Self.sequenceCandidate {
            if mergeListSequence(root, keepsLocalReplays: keepsLocalReplays) {
                listSequencesMerged &+= 1
                sequencedGroup[root] = Self.sequenceMerged
                groupBlockLower[root] = -3
                anyMerged = true
            } else {
                sequencedGroup[root] = Self.sequenceRejected
            }
        }
        return anyMerged
    }

    /// Counts each candidate group's alive local slots into `sequenceLocalStart[root + 1]`, and
    /// rejects a candidate with a local slot that is not an edit of its list.
    private mutating func countSequenceLocals() {
        let (localCount, nodeRoot) = (arena.localCount, nodeRoot)
        let (groupStart, groupPositions) = (groupStart, groupPositions)
        arena.withColumns { columns in
            sequencedGroup.withUnsafeMutableBufferPointer { group in
                sequenceLocalStart.withUnsafeMutableBufferPointer { counts in
                    Self.forEachCandidateLocal(localCount, columns, nodeRoot, group) { slot, root in
                        let first = Int(groupPositions[Int(groupStart[root])])
                        if columns.isListEdit(slot, onListOf: first) {
                            counts[root + 1] &+= 1
                        } else {
                            group[root] = Self.sequenceRejected
                        }
                    }
                }
            }
        }
    }

    /// Lists each candidate group's local slots in order into `sequenceLocalSlots` (a counting
    /// sort by group, `sequenceCursor` holding each group's next place).
    private mutating func fillSequenceLocals() {
        let (localCount, nodeRoot) = (arena.localCount, nodeRoot)
        arena.withColumns { columns in
            sequencedGroup.withUnsafeMutableBufferPointer { group in
                sequenceCursor.withUnsafeMutableBufferPointer { cursor in
                    sequenceLocalSlots.withUnsafeMutableBufferPointer { slots in
                        Self.forEachCandidateLocal(localCount, columns, nodeRoot, group) {
                            slot, root in
                            slots[Int(cursor[root])] = Int32(slot)
                            cursor[root] &+= 1
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with each alive local slot (of the first `count`) whose group is still a
    /// candidate, in slot order, and its group root; `body` may change the groups' states.
    /// Through raw buffers: the loop visits every local slot of the merge (the whole window,
    /// for a server), and each array access on `self` checked uniqueness or bounds.
    @inline(__always)
    private static func forEachCandidateLocal(
        _ count: Int, _ columns: TransformArena.Columns, _ nodeRoot: ContiguousArray<Int32>,
        _ group: UnsafeMutableBufferPointer<UInt8>, _ body: (Int, Int) -> Void
    ) {
        nodeRoot.withUnsafeBufferPointer { nodeRoot in
            for slot in 0..<count where columns.flags[slot] & TransformArena.alive != 0 {
                let node = columns.node[slot]
                if node < 0 { continue }
                let root = Int(nodeRoot[Int(node)])
                if group[root] != sequenceCandidate { continue }
                body(slot, root)
            }
        }
    }

    /// Whether the incoming slots at `positions` are all alive ArrayInsert or ArrayErase
    /// instructions on one object's field.
    private func isSingleListOfEdits(_ positions: ArraySlice<Int32>) -> Bool {
        let first = Int(positions[positions.startIndex])
        return arena.withColumns { columns in
            positions.allSatisfy {
                columns.flags[Int($0)] & TransformArena.alive != 0
                    && columns.isListEdit(Int($0), onListOf: first)
            }
        }
    }

    /// Runs `ListSequenceMerge` on group `root` and writes its result into the arena.
    private mutating func mergeListSequence(_ root: Int, keepsLocalReplays: Bool) -> Bool {
        let localSlots = sequenceLocalSlots[
            Int(sequenceLocalStart[root])..<Int(sequenceLocalStart[root + 1])]
        let incomingSlots = groupPositions[Int(groupStart[root])..<Int(groupStart[root + 1])]
        let linksIncoming = switch listSequenceSettings.linkedSide {
        case .local: false
        case .incoming: true
        case .smaller: incomingSlots.count < localSlots.count
        }
        let (linked, placed) = linksIncoming ? (incomingSlots, localSlots)
            : (localSlots, incomingSlots)
        arena.readSequenceEdits(linked, ranks: changesetRank, into: &listSequence.local)
        arena.readSequenceEdits(placed, ranks: changesetRank, into: &listSequence.incoming)
        let stored: ListSequenceMerge.StoredSide = !keepsLocalReplays ? .none
            : linksIncoming ? .incoming : .local
        guard listSequence.run(storing: stored) else { return false }
        if linksIncoming { listSequencesSwapped &+= 1 }
        arena.storeSequenceEdits(linked, listSequence.local, alive: listSequence.localAlive)
        arena.storeSequenceEdits(placed, listSequence.incoming, alive: listSequence.incomingAlive)
        return true
    }

    static let sequenceNone: UInt8 = 0
    static let sequenceCandidate: UInt8 = 1
    static let sequenceRejected: UInt8 = 2
    static let sequenceMerged: UInt8 = 3
}

extension TransformArena {
    /// The flags, kind, node, field, index and prior size columns as raw buffers, for loops
    /// over many slots.
    struct Columns {
        let flags: UnsafeBufferPointer<UInt8>
        let kind: UnsafeBufferPointer<UInt8>
        let node: UnsafeBufferPointer<Int32>
        let field: UnsafeBufferPointer<UInt32>
        let index: UnsafeBufferPointer<UInt32>
        let priorSize: UnsafeBufferPointer<UInt32>

        /// The slots every column holds (reads through the views are unchecked in release).
        var count: Int {
            min(flags.count, kind.count, node.count, field.count, index.count, priorSize.count)
        }

        /// Whether `slot` is an ArrayInsert or ArrayErase on the list that slot `first` edits:
        /// the only instructions a sequence-merged group may hold, on either side.
        @inline(__always)
        func isListEdit(_ slot: Int, onListOf first: Int) -> Bool {
            (kind[slot] == Kind.arrayInsert || kind[slot] == Kind.arrayErase)
                && node[slot] == node[first] && field[slot] == field[first]
        }
    }

    /// Runs `body` with raw views of the columns the list paths read.
    func withColumns<Result>(_ body: (Columns) -> Result) -> Result {
        flags.withUnsafeBufferPointer { flags in
            kind.withUnsafeBufferPointer { kind in
                node.withUnsafeBufferPointer { node in
                    field.withUnsafeBufferPointer { field in
                        index.withUnsafeBufferPointer { index in
                            priorSize.withUnsafeBufferPointer { priorSize in
                                body(Columns(flags: flags, kind: kind, node: node, field: field,
                                             index: index, priorSize: priorSize))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Replaces `edits` with the sequence merge's view of `slots` (alive ArrayInsert and
    /// ArrayErase slots), written through raw buffers: appending slot by slot checked the
    /// array's uniqueness each time (the merge is a property of the transformer), and a lazy
    /// map appended element by element.
    func readSequenceEdits(_ slots: ArraySlice<Int32>, ranks: ContiguousArray<UInt32>,
                           into edits: inout ContiguousArray<ListSequenceEdit>) {
        // Every element is written below: the ones already there are kept, not refilled (the
        // fill, one element at a time, cost more than the reads).
        if edits.count > slots.count {
            edits.removeLast(edits.count - slots.count)
        } else {
            edits.append(contentsOf: repeatElement(
                ListSequenceEdit(isInsert: false, index: 0, priorSize: 0, rank: 0),
                count: slots.count - edits.count))
        }
        edits.withUnsafeMutableBufferPointer { edits in
            slots.withUnsafeBufferPointer { slots in
                kind.withUnsafeBufferPointer { kind in
                    index.withUnsafeBufferPointer { index in
                        priorSize.withUnsafeBufferPointer { priorSize in
                            changeset.withUnsafeBufferPointer { changeset in
                                ranks.withUnsafeBufferPointer { ranks in
                                    for offset in 0..<slots.count {
                                        let s = Int(slots[offset])
                                        edits[offset] = ListSequenceEdit(
                                            isInsert: kind[s] == Kind.arrayInsert,
                                            index: index[s], priorSize: priorSize[s],
                                            rank: ranks[Int(changeset[s])])
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Writes a sequence merge's results back to `slots`: each is marked `sequenced`, a moved
    /// edit gets its new index and prior size and is marked dirty, a discarded one loses its
    /// slot (`discard`, which also clears a packed record's alive bit).
    mutating func storeSequenceEdits(_ slots: ArraySlice<Int32>,
                                     _ edits: ContiguousArray<ListSequenceEdit>,
                                     alive: ContiguousArray<Bool>) {
        precondition(edits.count == slots.count && alive.count == slots.count,
                     "a result per slot")
        // Every view raw, and one write of the flags: the loop visits every history slot of
        // a contested list (about 5 million at list K = 100 and 10^5), and through the
        // arrays' checked subscripts it took 29 instructions a slot (26 now).
        let anyDiscarded = slots.withUnsafeBufferPointer { slots in
            edits.withUnsafeBufferPointer { edits in
                alive.withUnsafeBufferPointer { alive in
                    index.withUnsafeMutableBufferPointer { index in
                        priorSize.withUnsafeMutableBufferPointer { priorSize in
                            flags.withUnsafeMutableBufferPointer { flags in
                                var anyDiscarded = false
                                for offset in 0..<slots.count {
                                    let s = Int(slots[offset])
                                    let edit = edits[offset]
                                    let kept = alive[offset]
                                    let moved = edit.index != index[s]
                                        || edit.priorSize != priorSize[s]
                                    if kept && moved {
                                        index[s] = edit.index
                                        priorSize[s] = edit.priorSize
                                    }
                                    flags[s] |= Self.sequenced
                                        | (kept && moved ? Self.dirty : 0)
                                    anyDiscarded = anyDiscarded || !kept
                                }
                                return anyDiscarded
                            }
                        }
                    }
                }
            }
        }
        if anyDiscarded {
            for (offset, slot) in slots.enumerated() where !alive[offset] { discard(Int(slot)) }
        }
    }
}
