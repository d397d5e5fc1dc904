//! A uniform list block that a run of local edits cannot pass whole, met one local edit at a
//! time over a copy of its minors (`ListCells`).
//!
//! When a run of majors and a block of minors type at the same place (two clients' cursors
//! within a few positions of each other), the run cannot pass the block whole
//! (`ListMajorRun.passUniform`), and the walk meets every major with every minor: in a
//! text-like merge at 10^6 instructions, about 60 pairwise cells per merged instruction,
//! each loading the minor's state through its slot. Met one major at a time, though, most
//! majors still lie wholly above or below the block: the first major of a burst decides a
//! tie, and the block (or the major) is then on one side of every later major.
//!
//! So the block's alive minors are copied once into `ListCell`s (index, prior size, rank,
//! kind: a few contiguous bytes each), cut into chunks of a few copies
//! (`ListBlockSettings.cellChunkLength`, 16) whose summaries (`ListRunSummary` over the
//! chunk's copies, and the smallest rank among its inserts) are kept up to date, and each
//! major meets the chunks in order (a chunk is a block of the block: where other runs have
//! typed inside the block since it was cut, its minors spread over many positions, and a
//! major that lands among them still passes most chunks whole). A chunk also ends before a
//! copy that would widen its straddle zone beyond a few positions
//! (`ListBlockSettings.cellChunkSpan`, 4): a typed block often erases a few characters of
//! the text below and then types where other clients' text has since come between, so its
//! copies lie in two clusters thousands of positions apart, and a major typing in that
//! text lies inside a chunk holding both but passes each cluster whole (in the text-like
//! benchmark at 10^6, with chunks of eight, this took the majors' walks of a chunk from
//! 802,000 to 12,000 at K = 10, and from 4.3 million to 158,000 at K = 100). For each
//! chunk, the major:
//!
//! - **passes** the chunk in O(1) when the summary shows the outcome, by the rules of
//!   `Transform+ListBlocks.swift` (wholly above: min iₖ > x; wholly below:
//!   max (iₖ − pₖ) < x; prior sizes chaining from the major's) with one addition: an insert
//!   major at x also lies below a chunk whose min index is x when every insert of the chunk
//!   has a higher rank than the major's. The major's index stays at x while the minors lie
//!   above it, so a minor can meet it at a tie only at index x, and there every rule puts
//!   the minor above: an insert of higher rank wins the tie, and an erase at the insert's
//!   index lies above it (`insertVersusErase`). What the chunk owes its minors (the major's
//!   delta, on their indices if above and on their prior sizes either way) stays pending in
//!   the chunk until a walk or the write-back.
//! - **walks** the chunk's copies otherwise (`ListCells.walk`: the rules of
//!   `ListRunBuffers.walk` in one branch-light form), summarising them on the way.
//!
//! Going chunk by chunk for one major, and major by major, visits the grid's cells in one
//! of its valid orders (cell (major k, minor j) after (k − 1, j) and (k, j − 1)), as the
//! blocks do.
//!
//! **Tiles.** The majors go in tiles of the same length (`meetTiles`): a tile meets the
//! chunks in order, and passes a chunk whole, for all its majors at once, when the two
//! summaries show that `pass` would pass it for each major in turn (`ListTileSide`): a
//! 16 × 16 tile then costs one check where major by major it cost sixteen. Otherwise each major
//! of the tile meets the chunk as above. Tile by tile is also a valid order of the grid's
//! cells, so the results are the same, bit for bit (`ListCellTilesTests`), save which
//! prior-size mismatch is found first when there are several: the caller then meets the
//! block again major by major, from fresh copies, to report the pairwise walk's. In the
//! text-like benchmark at K = 10 a touching run's majors meet about 25,800 blocks this way.
//!
//! At the end the copies the walks and passes reached are written back to the minors once
//! (`finish`), marked dirty as the walk marks them. Same rules, same order of cells (a
//! major's cells in the block's order, majors in the run's order), so the same results bit
//! for bit: `ListBlockTests` compares this with the pairwise walk.

/// One alive minor of a uniform list block, copied out (`ListCells`).
struct ListCell {
    var index: UInt32 = 0
    var size: UInt32 = 0
    var rank: UInt32 = 0
    /// The minor's position in `groupMinors`.
    var cursor: Int32 = 0
    var isInsert = false
    var alive = true
}

/// How majors met `ListCells`: passed whole (of which at a tie), or walked; how many passes
/// were a whole tile's (`ListCells.meetTiles`), above its majors, at a tie or below them; and
/// how many blocks were met again major by major after their tiles found a prior-size
/// mismatch.
struct ListCellStats: Sendable {
    var passed = 0
    var passedAtTie = 0
    var walked = 0
    var tilesAbove = 0
    var tilesAtTie = 0
    var tilesBelow = 0
    var tileRestarts = 0

    mutating func add(_ other: ListCellStats) {
        passed &+= other.passed
        passedAtTie &+= other.passedAtTie
        walked &+= other.walked
        tilesAbove &+= other.tilesAbove
        tilesAtTie &+= other.tilesAtTie
        tilesBelow &+= other.tilesBelow
        tileRestarts &+= other.tileRestarts
    }
}

/// A stretch of `ListCells.cells` with its summary and the shifts it owes its copies.
struct ListCellChunk {
    var start: Int32 = 0
    var end: Int32 = 0
    /// Owed by every alive copy's index and prior size (passes add to them; a walk and
    /// `ListCells.finish` apply them).
    var indexOffset: UInt32 = 0
    var sizeOffset: UInt32 = 0
    /// The smallest rank among the alive inserts (`UInt32.max` when none).
    var minInsertRank = UInt32.max
    /// Of the alive copies, including the offsets.
    var summary = ListRunSummary()
}

/// The alive majors of a tile (`ListCells.meetTiles`) as one: the summary of a run
/// (`ListRunSummary`: min index, max (index − the deltas before it), net delta, first prior
/// size, whether the sizes chain), with what decides a tie at the max, and the shifts still
/// owed to the majors.
///
/// A chunk lies above every major in turn when its min index is above each major's
/// index less the deltas of the majors before it (each moved the chunk by its delta), that
/// is above the max; at the max itself, `ListCells.pass`' tie rule must hold for every
/// major that reaches it: an insert of a lower rank than every insert of the chunk. It
/// lies below every major when its max below is under their min index (those passes leave
/// its indices, and so its max below, where they are). The two cannot both hold for a
/// major, so `pass` would pick the same side for each.
struct ListTileSide {
    var count: Int32 = 0
    var minIndex = UInt32.max
    var maxBelow = Int64.min
    var netDelta: Int64 = 0
    var firstSize: UInt32 = 0
    var chains = true
    /// Of the majors at `maxBelow`: how many, whether all are inserts, and their largest rank.
    var tieCount: Int32 = 0
    var tieInsertsOnly = true
    var tieMaxRank: UInt32 = 0
    /// Owed by every alive major of the tile (`settle` applies them).
    var indexOffset: UInt32 = 0
    var sizeOffset: UInt32 = 0

    init(_ majors: UnsafeMutableBufferPointer<ListMajor>, _ tile: Range<Int>) {
        for major in tile where majors[major].alive {
            let state = majors[major]
            if count == 0 {
                firstSize = state.size
            } else if Int64(state.size) != Int64(firstSize) + netDelta {
                chains = false
            }
            let below = Int64(state.index) - netDelta
            if below > maxBelow {
                (maxBelow, tieCount, tieInsertsOnly, tieMaxRank) = (below, 1, state.isInsert,
                                                                    state.rank)
            } else if below == maxBelow {
                tieCount += 1
                tieInsertsOnly = tieInsertsOnly && state.isInsert
                tieMaxRank = max(tieMaxRank, state.rank)
            }
            minIndex = min(minIndex, state.index)
            netDelta += state.isInsert ? 1 : -1
            count += 1
        }
    }

    /// Every major's index moves by `delta`.
    mutating func shiftIndices(by delta: Int64) {
        indexOffset &+= UInt32(truncatingIfNeeded: delta)
        minIndex = UInt32(truncatingIfNeeded: Int64(minIndex) + delta)
        maxBelow += delta
    }

    /// Every major's prior size moves by `delta`.
    mutating func shiftSizes(by delta: Int64) {
        sizeOffset &+= UInt32(truncatingIfNeeded: delta)
        firstSize = UInt32(truncatingIfNeeded: Int64(firstSize) + delta)
    }

    /// Applies the pending shifts to the tile's alive majors.
    mutating func settle(_ majors: UnsafeMutableBufferPointer<ListMajor>, _ tile: Range<Int>) {
        if indexOffset == 0 && sizeOffset == 0 { return }
        for major in tile where majors[major].alive {
            majors[major].index &+= indexOffset
            majors[major].size &+= sizeOffset
        }
        (indexOffset, sizeOffset) = (0, 0)
    }
}

/// A uniform block's alive minors, copied out for a run's majors to meet one at a time, in
/// chunks (see the file's documentation).
struct ListCells {
    let buffers: ListRunBuffers
    let cells: UnsafeMutableBufferPointer<ListCell>
    let chunks: UnsafeMutableBufferPointer<ListCellChunk>
    /// How many copies a walk or a pass visited (the ones the pairwise walk marks dirty).
    private var reached = 0
    private(set) var stats = ListCellStats()

    /// Copies the alive minors of `block` (settled and uniform) into `space`, which holds
    /// at least `block.end - block.start` cells, and cuts them into chunks in `chunkSpace`
    /// (as many as `space` has cells will do): a chunk ends after `chunkLength` copies
    /// (`ListBlockSettings.cellChunkLength`), or before a copy that would widen its straddle
    /// zone beyond `chunkSpan` positions (`cellChunkSpan`).
    init(_ block: ListBlock, buffers: ListRunBuffers, space: UnsafeMutableBufferPointer<ListCell>,
         chunkSpace: UnsafeMutableBufferPointer<ListCellChunk>, chunkLength: Int,
         chunkSpan: Int64) {
        precondition(chunkLength > 0, "ListBlockSettings.cellChunkLength must be positive")
        self.buffers = buffers
        var count = 0
        for cursor in Int(block.start)..<Int(block.end) {
            let record = buffers.packed[cursor]
            if record.flags & TransformArena.alive == 0 { continue }
            let slot = Int(buffers.slots[cursor])
            space[count] = ListCell(index: buffers.indices[slot], size: buffers.sizes[slot],
                                    rank: record.rank,
                                    cursor: Int32(truncatingIfNeeded: cursor),
                                    isInsert: record.kind == Kind.arrayInsert)
            count += 1
        }
        cells = UnsafeMutableBufferPointer(rebasing: space[0..<count])
        var chunkCount = 0
        var state = ListCellChunk()
        for cell in 0..<count {
            let copy = space[cell]
            if state.summary.count == Int32(chunkLength)
                || (state.summary.count > 0
                    && state.summary.zoneWidth(adding: copy.index) > chunkSpan)
            {
                state.end = Int32(cell)
                chunkSpace[chunkCount] = state
                chunkCount += 1
                state = ListCellChunk()
                state.start = Int32(cell)
            }
            // A walk discards erases only: the ranks of the inserts stay.
            state.summary.add(node: 0, field: 0, index: copy.index, size: copy.size,
                              isInsert: copy.isInsert)
            if copy.isInsert { state.minInsertRank = min(state.minInsertRank, copy.rank) }
        }
        if state.summary.count > 0 {
            state.end = Int32(count)
            chunkSpace[chunkCount] = state
            chunkCount += 1
        }
        chunks = UnsafeMutableBufferPointer(rebasing: chunkSpace[0..<chunkCount])
    }

    private func applyOffsets(_ chunk: Int) {
        let (indexOffset, sizeOffset) = (chunks[chunk].indexOffset, chunks[chunk].sizeOffset)
        if indexOffset == 0 && sizeOffset == 0 { return }
        for cell in Int(chunks[chunk].start)..<Int(chunks[chunk].end) where cells[cell].alive {
            cells[cell].index &+= indexOffset
            cells[cell].size &+= sizeOffset
        }
        (chunks[chunk].indexOffset, chunks[chunk].sizeOffset) = (0, 0)
    }

    /// Meets `major` (on the block's list) with every alive copy, as the pairwise walk would:
    /// chunk by chunk, passing a chunk whole when its summary shows the outcome.
    /// - Returns: a prior-size mismatch if one was found.
    mutating func meet(_ major: inout ListMajor) -> MergeError? {
        for chunk in chunks.indices where chunks[chunk].summary.count > 0 {
            if pass(chunk, &major) {
                reached = max(reached, Int(chunks[chunk].end))
                continue
            }
            stats.walked += 1
            if let mismatch = walk(chunk, &major) { return mismatch }
            if !major.alive { return nil }
        }
        return nil
    }

    /// Meets every major of `majors` (alive, in the run's order, on the block's list) with
    /// every alive copy, in tiles: the majors in runs of `tileLength`, each run meeting the
    /// chunks in order, and passing a chunk whole when both summaries show the outcome
    /// (`ListTileSide`); else each of its majors meets the chunk as `meet` does. Cell
    /// (major k, minor j) still comes after (k − 1, j) and (k, j − 1): the same results as
    /// `meet` major by major, bit for bit.
    /// - Returns: a prior-size mismatch if one was found, which need not be the one `meet`
    ///   major by major finds first (the caller then starts again that way, from fresh
    ///   copies).
    mutating func meetTiles(_ majors: UnsafeMutableBufferPointer<ListMajor>,
                            tileLength: Int) -> MergeError? {
        precondition(tileLength > 0, "ListBlockSettings.cellChunkLength must be positive")
        var tileStart = 0
        while tileStart < majors.count {
            let tile = tileStart..<min(majors.count, tileStart + tileLength)
            if let mismatch = meetTile(majors, tile) { return mismatch }
            tileStart = tile.upperBound
        }
        return nil
    }

    /// One tile of `meetTiles`.
    private mutating func meetTile(_ majors: UnsafeMutableBufferPointer<ListMajor>,
                                   _ tile: Range<Int>) -> MergeError? {
        var side = ListTileSide(majors, tile)
        for chunk in chunks.indices where chunks[chunk].summary.count > 0 {
            if side.count == 0 { break }
            if passTile(chunk, &side) {
                reached = max(reached, Int(chunks[chunk].end))
                continue
            }
            side.settle(majors, tile)
            for major in tile where majors[major].alive {
                // A discard may have left the chunk without an alive copy.
                if chunks[chunk].summary.count == 0 { break }
                if pass(chunk, &majors[major]) {
                    reached = max(reached, Int(chunks[chunk].end))
                    continue
                }
                stats.walked += 1
                if let mismatch = walk(chunk, &majors[major]) { return mismatch }
            }
            side = ListTileSide(majors, tile)
        }
        side.settle(majors, tile)
        return nil
    }

    /// Passes the tile `side` over `chunk` whole if both summaries show the outcome: what
    /// `pass` would do for each of its majors in turn (see `ListTileSide`).
    private mutating func passTile(_ chunk: Int, _ side: inout ListTileSide) -> Bool {
        let summary = chunks[chunk].summary
        guard summary.chains && side.chains && side.firstSize == summary.firstSize else {
            return false
        }
        let tieAbove = Int64(summary.minIndex) == side.maxBelow && side.tieInsertsOnly
            && chunks[chunk].minInsertRank > side.tieMaxRank
        if Int64(summary.minIndex) > side.maxBelow || tieAbove {
            let delta = side.netDelta
            chunks[chunk].indexOffset &+= UInt32(truncatingIfNeeded: delta)
            chunks[chunk].sizeOffset &+= UInt32(truncatingIfNeeded: delta)
            chunks[chunk].summary.shiftIndices(by: delta)
            chunks[chunk].summary.shiftSizes(by: delta)
            side.shiftSizes(by: summary.netDelta)
            stats.passed += Int(side.count)
            if tieAbove {
                stats.passedAtTie += Int(side.tieCount)
                stats.tilesAtTie += 1
            } else {
                stats.tilesAbove += 1
            }
            return true
        }
        if summary.maxBelow < Int64(side.minIndex) {
            chunks[chunk].sizeOffset &+= UInt32(truncatingIfNeeded: side.netDelta)
            chunks[chunk].summary.shiftSizes(by: side.netDelta)
            side.shiftIndices(by: summary.netDelta)
            side.shiftSizes(by: summary.netDelta)
            stats.passed += Int(side.count)
            stats.tilesBelow += 1
            return true
        }
        return false
    }

    /// Passes `major` over `chunk` whole if its summary shows the outcome.
    private mutating func pass(_ chunk: Int, _ major: inout ListMajor) -> Bool {
        let summary = chunks[chunk].summary
        guard summary.chains && major.size == summary.firstSize else { return false }
        let x = major.index
        let delta: Int64 = major.isInsert ? 1 : -1
        let majorDelta = UInt32(truncatingIfNeeded: delta)
        let chunkDelta = UInt32(truncatingIfNeeded: summary.netDelta)
        let tieAbove = summary.minIndex == x && major.isInsert
            && chunks[chunk].minInsertRank > major.rank
        if summary.minIndex > x || tieAbove {
            chunks[chunk].indexOffset &+= majorDelta
            chunks[chunk].sizeOffset &+= majorDelta
            chunks[chunk].summary.shiftIndices(by: delta)
            chunks[chunk].summary.shiftSizes(by: delta)
            major.size &+= chunkDelta
            stats.passed += 1
            if tieAbove { stats.passedAtTie += 1 }
            return true
        }
        if summary.maxBelow < Int64(x) {
            chunks[chunk].sizeOffset &+= majorDelta
            chunks[chunk].summary.shiftSizes(by: delta)
            major.index &+= chunkDelta
            major.size &+= chunkDelta
            stats.passed += 1
            return true
        }
        return false
    }

    /// The pairwise walk of `major` over `chunk`'s copies (the rules of
    /// `ListRunBuffers.walk(_:from:to:)`, without the dead records, the node, field and kind
    /// checks and the indirection through the slots), summarising them on the way.
    /// - Returns: a prior-size mismatch if one was found.
    private mutating func walk(_ chunk: Int, _ major: inout ListMajor) -> MergeError? {
        applyOffsets(chunk)
        let (start, end) = (Int(chunks[chunk].start), Int(chunks[chunk].end))
        let (majorIsInsert, majorRank) = (major.isInsert, major.rank)
        let majorDelta: UInt32 = majorIsInsert ? 1 : UInt32.max
        var majorIndex = major.index
        var majorSize = major.size
        var mismatch: MergeError?
        // The summary of the copies as they are left, in scalars: min index, max (index −
        // the deltas of the alive copies before it), the net delta.
        var minIndex = UInt32.max
        var maxBelow = Int64.min
        var netDelta: Int64 = 0
        var cell = start
        // The four rules in one: the minor lies above the major when its index is larger, or
        // equal and the tie goes its way (an insert meeting an insert of a higher rank, or
        // an erase meeting an insert); what lies above moves by the other's delta; both prior
        // sizes move by the other's delta; two erases of one element discard both.
        while cell < end {
            if !cells[cell].alive {
                cell += 1
                continue
            }
            let minorSize = cells[cell].size
            guard minorSize == majorSize else {
                mismatch = .priorSizeMismatch(priorSizeIncoming: minorSize,
                                              priorSizeLocal: majorSize)
                break
            }
            let minorIndex = cells[cell].index
            let minorIsInsert = cells[cell].isInsert
            if !majorIsInsert && !minorIsInsert && majorIndex == minorIndex {
                cells[cell].alive = false
                major.alive = false
                cell += 1
                break
            }
            let minorDelta: UInt32 = minorIsInsert ? 1 : UInt32.max
            let tieAbove = majorIsInsert && (!minorIsInsert || cells[cell].rank > majorRank)
            let above = majorIndex < minorIndex || (majorIndex == minorIndex && tieAbove)
            let index = minorIndex &+ (above ? majorDelta : 0)
            cells[cell].index = index
            cells[cell].size = minorSize &+ majorDelta
            minIndex = min(minIndex, index)
            maxBelow = max(maxBelow, Int64(index) &- netDelta)
            netDelta &+= minorIsInsert ? 1 : -1
            majorIndex = majorIndex &+ (above ? 0 : minorDelta)
            majorSize = majorSize &+ minorDelta
            cell += 1
        }
        reached = max(reached, cell)
        for rest in cells[cell..<end] where rest.alive {
            minIndex = min(minIndex, rest.index)
            maxBelow = max(maxBelow, Int64(rest.index) &- netDelta)
            netDelta &+= rest.isInsert ? 1 : -1
        }
        major.index = majorIndex
        major.size = majorSize
        // The same copies less a discarded erase: the count, and the first prior size (the
        // first alive copy's). Prior sizes still chain when they did (each walked copy moved
        // by the major's delta; a discarded erase's neighbours chain across it), unless the
        // walk stopped at a mismatch.
        if !major.alive { chunks[chunk].summary.count -= 1 }
        if chunks[chunk].summary.count > 0 {
            var first = start
            while !cells[first].alive { first += 1 }
            chunks[chunk].summary.minIndex = minIndex
            chunks[chunk].summary.maxBelow = maxBelow
            chunks[chunk].summary.netDelta = netDelta
            chunks[chunk].summary.firstSize = cells[first].size
        }
        if mismatch != nil { chunks[chunk].summary.chains = false }
        return mismatch
    }

    /// Writes the copies the majors reached back to their minors.
    mutating func finish() {
        for chunk in chunks.indices { applyOffsets(chunk) }
        buffers.scatter(cells, reached: reached)
    }
}

extension ListRunBuffers {
    /// Writes the first `reached` of `cells` back to their minors, marking them dirty as the
    /// pairwise walk does and clearing the alive bit of the discarded ones.
    @inline(__always)
    func scatter(_ cells: UnsafeMutableBufferPointer<ListCell>, reached: Int) {
        for cell in cells[0..<reached] {
            let cursor = Int(cell.cursor)
            let slot = Int(slots[cursor])
            indices[slot] = cell.index
            sizes[slot] = cell.size
            flags[slot] |= TransformArena.dirty
            if !cell.alive {
                flags[slot] &= ~TransformArena.alive
                packed[cursor].flags &= ~TransformArena.alive
            }
        }
    }
}
