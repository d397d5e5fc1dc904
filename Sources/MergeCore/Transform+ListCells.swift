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
//! (`ListBlockSettings.cellChunkLength`, 8) whose summaries (`ListRunSummary` over the
//! chunk's copies, and the smallest rank among its inserts) are kept up to date, and each
//! major meets the chunks in order (a chunk is a block of the block: where other runs have
//! typed inside the block since it was cut, its minors spread over many positions, and a
//! major that lands among them still passes most chunks whole). For each chunk, the major:
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

/// How majors met `ListCells`: passed whole (of which at a tie), or walked.
struct ListCellStats: Sendable {
    var passed = 0
    var passedAtTie = 0
    var walked = 0

    mutating func add(_ other: ListCellStats) {
        passed &+= other.passed
        passedAtTie &+= other.passedAtTie
        walked &+= other.walked
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
    /// at least `block.end - block.start` cells, and cuts them into chunks of `chunkLength`
    /// (`ListBlockSettings.cellChunkLength`) in `chunkSpace` (as many as `space` has cells
    /// will do).
    init(_ block: ListBlock, buffers: ListRunBuffers, space: UnsafeMutableBufferPointer<ListCell>,
         chunkSpace: UnsafeMutableBufferPointer<ListCellChunk>, chunkLength: Int) {
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
        let chunkCount = (count + chunkLength - 1) / chunkLength
        chunks = UnsafeMutableBufferPointer(rebasing: chunkSpace[0..<chunkCount])
        for chunk in 0..<chunkCount {
            var state = ListCellChunk()
            state.start = Int32(chunk * chunkLength)
            state.end = Int32(min(count, (chunk + 1) * chunkLength))
            // A walk discards erases only: the ranks of the inserts stay.
            for cell in cells[Int(state.start)..<Int(state.end)] {
                state.summary.add(node: 0, field: 0, index: cell.index, size: cell.size,
                                  isInsert: cell.isInsert)
                if cell.isInsert { state.minInsertRank = min(state.minInsertRank, cell.rank) }
            }
            chunks[chunk] = state
        }
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
