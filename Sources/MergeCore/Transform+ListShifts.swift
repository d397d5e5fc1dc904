//! A server's history runs that pass an upload clear of its edits, reported as ranges.
//!
//! When a server merges an upload of typed text against its history, most runs of the
//! history pass every region of the upload clear (`Transform+ListRegions.swift`): each of
//! their edits moves by the same two amounts, the net delta of the regions below the run
//! (its index) and of all of them (its prior size). Written slot by slot, that shift was read
//! back slot by slot into `LocalEdits`: a 16-byte re-index per history instruction, most of
//! the reciprocal history, with three passes over every slot (shift, count, record) and a
//! zero-fill of the streams before them (about 10 % of a text-like server merge at K = 100).
//!
//! A merge that reports its local side as `LocalEdits` therefore leaves such a run's shift
//! pending (`Transformer.pendingListShifts`): consecutive runs with the same shifts are one
//! entry. Nothing reads a local slot after the walk has passed it but `recordLocalEdits`,
//! which reports each pending run as `ListShift` ranges, one per changeset it spans
//! (`cutListShifts`). A range needs its instructions at consecutive positions of their
//! changeset: where the scan skipped an instruction between two slots (an edit of another
//! object), the run's shift is written to its slots after all and they are reported one by
//! one, as before. `LocalEdits.apply` gives the same
//! changesets either way; the tests compare both forms with the pairwise walk.

/// A stretch of local slots `first ..< end` whose ArrayInsert and ArrayErase slots all owe
/// `index` to their index and `size` to their prior size (wrapping).
struct PendingListShift: Sendable {
    var first: Int32
    var end: Int32
    var index: UInt32
    var size: UInt32
}

/// A pending shift's part within one local changeset: slots `start ..< end`, the first at
/// `position` of the changeset, the others after it in order.
struct ListShiftPiece: Sendable {
    var start: Int32
    var end: Int32
    var position: UInt32
    var index: UInt32
    var size: UInt32
}

extension Transformer {
    /// Leaves the shift of local run `slots` (every slot alive, passed every region clear)
    /// pending: joined to the last pending one when it follows it with the same shifts.
    mutating func deferListShift(_ slots: Range<Int>, index indexShift: Int64,
                                 size sizeShift: Int64) {
        if slots.isEmpty || (indexShift == 0 && sizeShift == 0) { return }
        let index = UInt32(bitPattern: Int32(truncatingIfNeeded: indexShift))
        let size = UInt32(bitPattern: Int32(truncatingIfNeeded: sizeShift))
        let (first, end) = (Int32(slots.lowerBound), Int32(slots.upperBound))
        if let last = pendingListShifts.last, last.end == first, last.index == index,
            last.size == size
        {
            pendingListShifts[pendingListShifts.count - 1].end = end
            return
        }
        pendingListShifts.append(PendingListShift(first: first, end: end, index: index,
                                                  size: size))
    }

    /// Cuts the pending shifts into `listShiftPieces`, one per local changeset they span.
    /// A pending shift any of whose pieces skips a position (the scan left out an instruction
    /// between two of its slots) is written to its slots instead
    /// (`TransformArena.shiftMajors`), which marks them dirty.
    ///
    /// A pending run's slots are alive ArrayInserts and ArrayErases that nothing has edited
    /// (`Transformer.majorRun` cut them so, and the walk does not come back to a slot it has
    /// passed), and the scan gives a changeset's slots ascending positions, so a piece is
    /// checked at its ends; debug builds check every slot. In a changeset whose slots hold all
    /// its instructions (`changesetSlotsWhole`) a piece's positions follow from its slots,
    /// and the changeset of a slot is found from `changesetFirstSlot` (forward from the last
    /// one, as the pending shifts come in slot order): nothing is read from the slots, which
    /// the walk last touched long before (at text-like K = 100 the two position reads and
    /// the changeset read were a cache miss each, most of this pass's time).
    /// - Complexity: O(pieces), plus the slots of the pending shifts written to their slots.
    mutating func cutListShifts() {
        listShiftPieces.removeAll(keepingCapacity: true)
        if pendingListShifts.isEmpty { return }
        let localCount = arena.localCount
        let changesetCount = localChangesetCount
        var changesetIndex = 0
        for pending in pendingListShifts {
            let piecesBefore = listShiftPieces.count
            var fits = true
            var slot = Int(pending.first)
            let end = Int(pending.end)
            precondition(slot < end && end <= localCount, "a pending shift beyond the local slots")
            changesetIndex = localChangeset(holding: slot, from: changesetIndex,
                                            count: changesetCount)
            while slot < end {
                let changesetStart = changesetFirstSlot[changesetIndex]
                let changesetEnd = changesetIndex + 1 == changesetCount
                    ? localCount : changesetFirstSlot[changesetIndex + 1]
                assert(changesetStart <= slot && slot < changesetEnd
                       && Int(arena.changeset[slot]) == changesetIndex,
                       "a slot outside the changeset found for it")
                let pieceEnd = min(end, changesetEnd)
                assert(plainListSlots(slot..<pieceEnd), "a pending shift over an edited slot")
                let first: UInt32
                if changesetSlotsWhole[changesetIndex] {
                    first = UInt32(truncatingIfNeeded: slot - changesetStart)
                    assert(arena.position[slot] == first
                           && arena.position[pieceEnd - 1] &- first
                               == UInt32(truncatingIfNeeded: pieceEnd - 1 - slot),
                           "a whole changeset's slot off its position")
                } else {
                    first = arena.position[slot]
                    if arena.position[pieceEnd - 1] &- first
                        != UInt32(truncatingIfNeeded: pieceEnd - 1 - slot)
                    {
                        fits = false
                        break
                    }
                }
                listShiftPieces.append(ListShiftPiece(
                    start: Int32(slot), end: Int32(pieceEnd), position: first,
                    index: pending.index, size: pending.size))
                slot = pieceEnd
                if slot < end {
                    changesetIndex = localChangeset(holding: slot, from: changesetIndex,
                                                    count: changesetCount)
                }
            }
            if fits { continue }
            listShiftsSettled += 1
            listShiftPieces.removeLast(listShiftPieces.count - piecesBefore)
            arena.shiftMajors(Int(pending.first)..<end, index: Int32(bitPattern: pending.index),
                              size: Int32(bitPattern: pending.size))
        }
        pendingListShifts.removeAll(keepingCapacity: true)
        listShiftRangesReported += listShiftPieces.count
    }

    /// The local changeset whose slots hold local slot `slot`, of the first `count`: forward
    /// from changeset `hint` when it starts at or before `slot` (the next pending shift lies
    /// above the last, and a changeset holds dozens of slots), else a binary search of
    /// `changesetFirstSlot`. Changesets without slots are passed over.
    @inline(__always)
    private func localChangeset(holding slot: Int, from hint: Int, count: Int) -> Int {
        changesetFirstSlot.withUnsafeBufferPointer { firstSlot in
            var index = hint
            if firstSlot[index] > slot {
                // The last changeset starting at or before `slot` (the first starts at 0).
                var (low, high) = (0, index)
                while high - low > 1 {
                    let middle = (low + high) / 2
                    if firstSlot[middle] <= slot { low = middle } else { high = middle }
                }
                index = low
            }
            while index + 1 < count && firstSlot[index + 1] <= slot { index += 1 }
            return index
        }
    }

    /// Whether `slots` (of one changeset) are alive, unedited ArrayInserts and ArrayErases at
    /// ascending positions: what `cutListShifts` relies on.
    private func plainListSlots(_ slots: Range<Int>) -> Bool {
        arena.slotsPristine(slots) && slots.allSatisfy { slot in
            let kind = arena.kind[slot]
            return (kind == Kind.arrayInsert || kind == Kind.arrayErase)
                && (slot == slots.lowerBound || arena.position[slot] > arena.position[slot - 1])
        }
    }
}
