//! The list tight loop (`TransformArena.mergeListRun`) and its exact block skipping.
//!
//! A local ArrayInsert or ArrayErase (the major) meets its group's incoming instructions (the
//! minors) in incoming order. Against a minor on its list, exactly one side moves: either the
//! minor lies above the major (the minor's index shifts by the major's delta d, +1 for an
//! insert and -1 for an erase, and the major's index stays), or it lies below (the major's
//! index shifts by the minor's delta and the minor's index stays). Both prior sizes move
//! either way: the major's by the minor's delta, the minor's by d.
//!
//! A contested list walks every pair. But when the incoming side edits one region at a time
//! (a typing cursor), a run of consecutive minors can often be shown to lie wholly on one
//! side of the major, and then the run's effect is known without visiting it. Let the run's
//! alive minors be m₁ … mₙ with indices iₖ, deltas dₖ and prefix sums pₖ = d₁ + … + dₖ₋₁:
//!
//! - **Wholly above** when min iₖ > x (the major's index x stays fixed while it passes, and
//!   every rule sends a minor strictly above x up or down by d, ties included): every minor's
//!   index moves by d.
//! - **Wholly below** when max (iₖ − pₖ) < x (the major, at x + pₖ when it meets mₖ, is then
//!   strictly above each minor): the major's index moves by pₙ₊₁, no minor's index moves.
//!
//! Ties (iₖ = x) are never skipped, so the discriminant and the erase-erase rule (both
//! discarded) only run in the pairwise walk. Prior sizes are skipped only when they chain
//! (each minor's prior size is the first one's plus pₖ) and the first equals the major's;
//! then every pairwise check would pass, and the major's size moves by pₙ₊₁ and each minor's
//! by d. Anything else (another list in the run, another kind, a size that does not chain, a
//! run that straddles x) walks the run pair by pair, exactly as before, so the result is the
//! pairwise grid's, bit for bit.
//!
//! A run is a `ListBlock`: a stretch of a group's packed minors, cut where its straddle zone
//! (min iₖ … max iₖ − pₖ, the majors that cannot pass it whole) would grow wider than
//! `ListBlockSettings.spanMax` (a cursor jump; a typing run keeps it one or two wide) or at
//! `lengthMax` minors, with its summary (`ListRunSummary`: min index, max iₖ − pₖ, net delta,
//! first prior size) and the index and size shifts it owes its minors. Those shifts are
//! applied lazily: a block's minors are brought up to date (`settle`) before anything reads
//! them pair by pair, that is before the walk, before any other rule meets the group
//! (`Transformer.settleListBlocks`) and before the write-back.
//! A walked block's summary is recomputed the next time it is tried.
//!
//! The local side types in runs too. A run of consecutive local ArrayInsert/ArrayErase slots
//! on one list (`Transformer.majorRun`, cut by the same zone rule) is summarised the same way
//! (`ListRunSummary`: min index xₖ, max (xₖ − qₖ) for the run's own prefix deltas qₖ, net
//! delta, first prior size) and passes a block in O(1) when the block lies above every major
//! (min iⱼ > max (xₖ − qₖ): each major, shifted by the majors before it, still lies below the
//! block's lowest minor) or below every major (max (iⱼ − pⱼ) < min xₖ), the prior sizes of
//! both runs chaining from equal first sizes. A block the run cannot pass is met one major
//! at a time, and the run goes on with the next block. Grid cell (major k, block b) depends
//! only on (k − 1, b) and (k, b − 1), so going block by block instead of major by major is
//! one of the grid's valid orders and gives its result.

/// What a run of list instructions (in order) does, as far as passing it whole goes: the
/// list, the min index, max (index − sum of the deltas before it), the net delta and the first
/// prior size, and whether the run is on one list with prior sizes that chain.
struct ListRunSummary: Sendable, Equatable {
    var count: Int32 = 0
    var node: Int32 = -1
    var field: UInt32 = 0
    var minIndex: UInt32 = 0
    var firstSize: UInt32 = 0
    var maxBelow: Int64 = 0
    var netDelta: Int64 = 0
    /// False once an instruction on another list, or whose prior size is not the first one's
    /// plus the deltas before it, was added.
    var chains = true

    /// The width of the straddle zone (`minIndex ... maxBelow`) if an instruction at `index`
    /// were added next.
    func zoneWidth(adding index: UInt32) -> Int64 {
        if count == 0 { return 0 }
        return max(maxBelow, Int64(index) - netDelta) - Int64(min(minIndex, index))
    }

    mutating func add(node: Int32, field: UInt32, index: UInt32, size: UInt32,
                      isInsert: Bool) {
        if count == 0 {
            self.node = node
            self.field = field
            minIndex = index
            firstSize = size
            maxBelow = Int64(index)
        } else {
            if node != self.node || field != self.field
                || Int64(size) != Int64(firstSize) + netDelta
            {
                chains = false
            }
            minIndex = min(minIndex, index)
            maxBelow = max(maxBelow, Int64(index) - netDelta)
        }
        netDelta += isInsert ? 1 : -1
        count += 1
    }

    /// Adds arena slot `slot` (a list instruction) as the columns hold it.
    @inline(__always)
    mutating func add(_ slot: Int, of columns: TransformArena.Columns) {
        add(node: columns.node[slot], field: columns.field[slot], index: columns.index[slot],
            size: columns.priorSize[slot], isInsert: columns.kind[slot] == Kind.arrayInsert)
    }

    /// Every instruction's index moves by `delta` (the run lies above what it passed).
    mutating func shiftIndices(by delta: Int64) {
        minIndex = UInt32(truncatingIfNeeded: Int64(minIndex) + delta)
        maxBelow += delta
    }

    /// Every instruction's prior size moves by `delta`.
    mutating func shiftSizes(by delta: Int64) {
        firstSize = UInt32(truncatingIfNeeded: Int64(firstSize) + delta)
    }
}

/// A stretch of one group's packed minors (`TransformArena.groupMinors`) with what the list
/// loop needs to pass it without visiting it.
struct ListBlock: Sendable {
    enum State: UInt8, Sendable {
        /// The summary must be recomputed (the minors are up to date).
        case stale
        /// Every alive minor is an ArrayInsert or ArrayErase on one list, and their prior
        /// sizes chain.
        case uniform
        /// No alive minor.
        case empty
        /// Walked pair by pair: other kinds, lists or nodes, or sizes that do not chain.
        case mixed
    }

    /// The cursor range `start ..< end` in `groupMinors`.
    var start: Int32
    var end: Int32
    var state = State.stale
    /// Including the pending `indexOffset` and `sizeOffset`.
    var summary = ListRunSummary()
    /// Shifts owed to every alive minor's index and prior size (`settle` applies them).
    var indexOffset: Int32 = 0
    var sizeOffset: Int32 = 0

    init(start: Int, end: Int) {
        self.start = Int32(start)
        self.end = Int32(end)
    }

    /// The minors lie above what passed them, which moved the list by `delta`.
    mutating func shiftAbove(by delta: Int64) {
        indexOffset += Int32(truncatingIfNeeded: delta)
        summary.shiftIndices(by: delta)
    }

    /// What passed the minors changed the list's size by `delta`.
    mutating func shiftSizes(by delta: Int64) {
        sizeOffset += Int32(truncatingIfNeeded: delta)
        summary.shiftSizes(by: delta)
    }

    /// How a run of majors passed a block whole (`pass`).
    enum Passing {
        /// No alive minor, or all on another list: every rule was a no-op.
        case unrelated
        /// The block lies above every major: the majors' indices stay.
        case above
        /// The block lies below every major: each major's index moves by the block's net
        /// delta.
        case below
    }

    /// Decides whether majors on `node`'s list `field` — one, or a run summarised by
    /// `majors` — pass this block whole (see the file's documentation), and if so applies
    /// the block's side: its minors' indices move by the majors' net delta when it lies
    /// above, and their prior sizes move by it either way. The caller moves the majors: their
    /// prior sizes by the block's net delta, and their indices too when the block lies below.
    /// - Returns: nil when the block must be walked pair by pair.
    @inline(__always)
    mutating func pass(majorsMinIndex minIndex: UInt32, maxBelow: Int64, firstSize: UInt32,
                       netDelta: Int64, node: Int32, field: UInt32) -> Passing? {
        if isUnrelated(node: node, field: field) { return .unrelated }
        guard state == .uniform && summary.firstSize == firstSize else { return nil }
        let passing: Passing
        if Int64(summary.minIndex) > maxBelow {
            shiftAbove(by: netDelta)
            passing = .above
        } else if summary.maxBelow < Int64(minIndex) {
            passing = .below
        } else {
            return nil
        }
        shiftSizes(by: netDelta)
        return passing
    }

    /// Whether every rule between this block's minors and majors on `node`'s list `field` is
    /// a no-op: it has no alive minor, or all are on another list.
    @inline(__always)
    func isUnrelated(node: Int32, field: UInt32) -> Bool {
        state == .empty || (state == .uniform && (summary.node != node || summary.field != field))
    }
}

/// A run of consecutive local list instructions on one list (majors), passed over a group's
/// blocks together (`Transformer.mergeMajorRun`), with the shifts owed to them.
struct ListMajorRun: Sendable {
    var slots: Range<Int>
    var summary = ListRunSummary()
    var indexOffset: Int32 = 0
    var sizeOffset: Int32 = 0

    /// Passes the whole run over the blocks `from ..< to` while the two summaries prove the
    /// pairwise grid's outcome: each block is uniform on the run's list, starts at the run's
    /// prior size, and lies above every major (each major, shifted by the majors before it,
    /// still below the block's lowest minor) or below every major. The updates are
    /// `ListBlock.pass`'s for the block and the mirror image for the run, in one loop over the
    /// blocks in place, with the run's state in registers and no per-block dispatch on the
    /// block's state or the side (a run meets blocks above and below it in no predictable
    /// order).
    /// - Returns: the first block it did not pass (`to` when none).
    /// - Complexity: O(blocks passed), about 2 ns each (text-like, 10^6 instructions).
    @inline(__always)
    mutating func passUniform(_ blocks: UnsafeMutableBufferPointer<ListBlock>, from: Int,
                              to: Int) -> Int {
        var cursor = ListRunCursor(summary)
        var blockIndex = from
        while blockIndex < to && cursor.pass(blocks.baseAddress! + blockIndex) {
            blockIndex += 1
        }
        cursor.finish(&self)
        return blockIndex
    }

    /// `Transformer.walkTouchedRegions`' common case, in locals: from `offsets[start]` on,
    /// each touched block's step (what the untouched blocks before it did: `steps`, less
    /// `moved`, the step already applied) moves the run, and the run passes the block as
    /// `passUniform` would, until a block it does not pass (its step applied, the block as it
    /// was) or the end. A run with no alive major only takes the steps.
    /// - Returns: the index in `offsets` of the block not passed (`offsets.count` when none).
    @inline(__always)
    mutating func passTouched(
        _ blocks: UnsafeMutableBufferPointer<ListBlock>, base: Int,
        offsets: UnsafeBufferPointer<Int32>, steps: UnsafeBufferPointer<ListTouchedStep>,
        from start: Int, moved: inout ListTouchedStep
    ) -> Int {
        if start >= offsets.count { return start }
        let alive = summary.count != 0
        var cursor = ListRunCursor(summary)
        // Each step is a sum from the first touched block on: `moved`, applied before, comes
        // off.
        let (movedBelow, movedUntouched) = (moved.below, moved.untouched)
        var index = start
        while index < offsets.count {
            let step = steps[index]
            (cursor.stepBelow, cursor.stepAll) = (step.below &- movedBelow,
                                                  step.untouched &- movedUntouched)
            // A run whose majors are all discarded meets nothing more.
            if alive && !cursor.pass(blocks.baseAddress! + base + Int(offsets[index])) { break }
            index += 1
        }
        moved = steps[min(index, offsets.count - 1)]
        cursor.finish(&self)
        return index
    }
}

/// A list slot's index, prior size and flags, as a touching run's walk found them
/// (`TransformArena.saveListSlots`).
struct ListSlotValues: Sendable, BitwiseCopyable {
    var index: UInt32
    var size: UInt32
    var flags: UInt8
}

/// A run of list slots as `TransformArena.listRunEnd` grows it, one slot at a time: the zone
/// in locals, the list the first slot's, so that `ListRunSummary.add`'s node and field checks
/// are the loop's own and only the prior-size chain is left to track. `listRunEnd` takes
/// consecutive slots; `cutColumnListRuns` the alive ones of a changeset.
struct ListRunCut {
    let node: Int32
    let field: UInt32
    let firstSize: Int64
    let span: Int64
    var minIndex: UInt32
    var maxBelow: Int64
    var netDelta: Int64
    var chains = true
    var count: Int32 = 1

    /// A run of `slot` alone; nil unless it is an ArrayInsert or ArrayErase.
    @inline(__always)
    init?(_ slot: Int, of columns: TransformArena.Columns, spanMax: UInt32) {
        let kind = columns.kind[slot]
        guard kind == Kind.arrayInsert || kind == Kind.arrayErase else { return nil }
        (node, field) = (columns.node[slot], columns.field[slot])
        (firstSize, span) = (Int64(columns.priorSize[slot]), Int64(spanMax))
        minIndex = columns.index[slot]
        maxBelow = Int64(minIndex)
        netDelta = kind == Kind.arrayInsert ? 1 : -1
    }

    /// Adds `slot` (alive) if it is an ArrayInsert or ArrayErase on the run's list that keeps
    /// the zone within the span; false, with nothing changed, if not.
    @inline(__always)
    mutating func take(_ slot: Int, of columns: TransformArena.Columns) -> Bool {
        let kind = columns.kind[slot]
        guard kind == Kind.arrayInsert || kind == Kind.arrayErase,
            columns.node[slot] == node, columns.field[slot] == field
        else { return false }
        let index = columns.index[slot]
        let below = max(maxBelow, Int64(index) - netDelta)
        let low = min(minIndex, index)
        if below - Int64(low) > span { return false }
        chains = chains && Int64(columns.priorSize[slot]) == firstSize + netDelta
        minIndex = low
        maxBelow = below
        netDelta += kind == Kind.arrayInsert ? 1 : -1
        count += 1
        return true
    }

    var zone: ListRunSummary {
        var zone = ListRunSummary()
        zone.count = count
        zone.node = node
        zone.field = field
        zone.minIndex = minIndex
        zone.firstSize = UInt32(firstSize)
        zone.maxBelow = maxBelow
        zone.netDelta = netDelta
        zone.chains = chains
        return zone
    }
}

/// A run's state while `ListMajorRun.passUniform` and `passTouched` pass blocks, in registers:
/// the summary's list, net delta, min index, max below and first prior size as the run
/// started, and what moved it since, as sums: the steps' (`passTouched`: the untouched
/// blocks before each touched one; set by the caller), and the net deltas of the blocks
/// passed (below the run, for its indices; all of them, for its prior sizes). Sums, rather
/// than a summary moved at each block, leave fewer values for the registers.
struct ListRunCursor {
    let node: Int32
    let field: UInt32
    let runDelta: Int64
    let minIndex: Int64
    let maxBelow: Int64
    let size: Int64
    var stepBelow: Int64 = 0
    var stepAll: Int64 = 0
    var passedBelow: Int64 = 0
    var passedAll: Int64 = 0

    @inline(__always)
    init(_ summary: ListRunSummary) {
        (node, field, runDelta) = (summary.node, summary.field, summary.netDelta)
        (minIndex, maxBelow, size) = (Int64(summary.minIndex), summary.maxBelow,
                                      Int64(summary.firstSize))
    }

    /// How far the run's indices and prior sizes have moved.
    var indexShift: Int64 { stepBelow &+ passedBelow }
    var sizeShift: Int64 { stepAll &+ passedAll }

    /// Passes `block` whole if the summaries prove the outcome (uniform on the run's list, at
    /// the run's prior size, above or below every major): the block's side applied to it, the
    /// run's to `self`. False, with nothing changed, when the block must be walked. The
    /// run's min index and first prior size are taken as its summary holds them (truncated
    /// to 32 bits).
    @inline(__always)
    mutating func pass(_ block: UnsafeMutablePointer<ListBlock>) -> Bool {
        let runSize = UInt32(truncatingIfNeeded: size &+ sizeShift)
        guard block.pointee.state == .uniform && block.pointee.summary.node == node
            && block.pointee.summary.field == field && block.pointee.summary.firstSize == runSize
        else { return false }
        let blockMin = Int64(block.pointee.summary.minIndex)
        let blockMaxBelow = block.pointee.summary.maxBelow
        let above = blockMin > maxBelow &+ indexShift
        guard above || blockMaxBelow < Int64(UInt32(truncatingIfNeeded: minIndex &+ indexShift))
        else { return false }
        let blockDelta = block.pointee.summary.netDelta
        // Above: the block's indices move by the run's delta. Below: the run's by the
        // block's. Prior sizes move either way.
        let blockShift = above ? runDelta : 0
        block.pointee.indexOffset &+= Int32(truncatingIfNeeded: blockShift)
        block.pointee.summary.minIndex = UInt32(truncatingIfNeeded: blockMin &+ blockShift)
        block.pointee.summary.maxBelow = blockMaxBelow &+ blockShift
        block.pointee.sizeOffset &+= Int32(truncatingIfNeeded: runDelta)
        block.pointee.summary.firstSize = UInt32(truncatingIfNeeded: Int64(runSize) &+ runDelta)
        passedBelow &+= above ? 0 : blockDelta
        passedAll &+= blockDelta
        return true
    }

    /// Moves `run`'s summary as the cursor moved, and adds the shifts its majors are owed.
    @inline(__always)
    func finish(_ run: inout ListMajorRun) {
        run.summary.minIndex = UInt32(truncatingIfNeeded: minIndex &+ indexShift)
        run.summary.maxBelow = maxBelow &+ indexShift
        run.summary.firstSize = UInt32(truncatingIfNeeded: size &+ sizeShift)
        run.indexOffset &+= Int32(truncatingIfNeeded: indexShift)
        run.sizeOffset &+= Int32(truncatingIfNeeded: sizeShift)
    }
}

/// How groups are cut into `ListBlock`s (`Transformer.listBlockSettings`).
struct ListBlockSettings: Sendable {
    /// Off: the list loop walks every pair (the differential tests' reference).
    var enabled = true
    /// Groups with fewer incoming instructions walk every pair.
    var groupCountMin = 64
    /// A block holds at most this many minors.
    var lengthMax = 256
    /// A block ends before a minor that would widen its straddle zone beyond this.
    var spanMax: UInt32 = 4
    /// A group whose blocks would average fewer minors walks every pair (random positions).
    var averageLengthMin = 4
    /// Passing local runs over all of a group's blocks at once (`Transform+ListRegions.swift`).
    var regions = ListRegionSettings()
    /// Copies per chunk, and majors per tile, when a run's majors meet a block one by one
    /// (`ListCells`).
    var cellChunkLength = 16
    /// A chunk of those copies ends before one that would widen its straddle zone beyond
    /// this many positions.
    var cellChunkSpan: Int64 = 4
}

/// The major of a list run, as the loop updates it.
struct ListMajor {
    let node: Int32
    let field: UInt32
    let isInsert: Bool
    let rank: UInt32
    var index: UInt32
    var size: UInt32
    var alive = true
}

/// Raw views of the arena columns the list loop reads and writes.
struct ListRunBuffers {
    let packed: UnsafeMutableBufferPointer<GroupMinor>
    let flags: UnsafeMutableBufferPointer<UInt8>
    let indices: UnsafeMutableBufferPointer<UInt32>
    let sizes: UnsafeMutableBufferPointer<UInt32>
    let slots: UnsafeBufferPointer<Int32>

    /// The ArrayInsert/ArrayErase rules for `major` against the minors at `from ..< to`, pair
    /// by pair (the rules of `insertVersusInsert`, `insertVersusErase` and
    /// `eraseVersusErase`). Stops at an EraseObject of the major's object, at the first alive
    /// minor on the same list that is not an ArrayInsert or ArrayErase, at a prior-size
    /// mismatch, or when the major is discarded.
    /// - Returns: the position to continue from, and the mismatch if one was found.
    @inline(__always)
    func walk(_ major: inout ListMajor, from: Int, to: Int) -> (Int, MergeError?) {
        let (majorNode, majorField, majorIsInsert, majorRank) =
            (major.node, major.field, major.isInsert, major.rank)
        var majorIndex = major.index
        var majorSize = major.size
        var cursor = from
        var mismatch: MergeError?
        while cursor < to {
            let record = packed[cursor]
            if record.flags & TransformArena.alive == 0 || record.node != majorNode {
                cursor += 1
                continue
            }
            let minorKind = record.kind
            if record.field != majorField {
                // Other fields commute; EraseObject is left to the generic rules.
                if minorKind == Kind.eraseObject { break }
                cursor += 1
                continue
            }
            let minorIsInsert = minorKind == Kind.arrayInsert
            guard minorIsInsert || minorKind == Kind.arrayErase else { break }
            let minor = Int(slots[cursor])
            let minorSize = sizes[minor]
            guard minorSize == majorSize else {
                mismatch = .priorSizeMismatch(priorSizeIncoming: minorSize,
                                              priorSizeLocal: majorSize)
                break
            }
            let minorIndex = indices[minor]
            flags[minor] |= TransformArena.dirty
            if majorIsInsert && minorIsInsert {
                let minorWins = record.rank > majorRank
                if majorIndex < minorIndex || (majorIndex == minorIndex && minorWins) {
                    indices[minor] = minorIndex + 1
                } else {
                    majorIndex += 1
                }
                majorSize += 1
                sizes[minor] = minorSize + 1
            } else if majorIsInsert {
                if majorIndex <= minorIndex {
                    indices[minor] = minorIndex + 1
                } else {
                    majorIndex -= 1
                }
                majorSize -= 1
                sizes[minor] = minorSize + 1
            } else if minorIsInsert {
                if minorIndex <= majorIndex {
                    majorIndex += 1
                } else {
                    indices[minor] = minorIndex - 1
                }
                majorSize += 1
                sizes[minor] = minorSize - 1
            } else if majorIndex == minorIndex {
                flags[minor] &= ~TransformArena.alive
                packed[cursor].flags &= ~TransformArena.alive
                major.alive = false
                cursor += 1
                break
            } else {
                if majorIndex < minorIndex {
                    indices[minor] = minorIndex - 1
                } else {
                    majorIndex -= 1
                }
                majorSize -= 1
                sizes[minor] = minorSize - 1
            }
            cursor += 1
        }
        major.index = majorIndex
        major.size = majorSize
        return (cursor, mismatch)
    }

    /// Writes `major`'s state back to its slot `slot`: new indices mark it dirty, and a
    /// discarded major loses its alive bit.
    @inline(__always)
    func store(_ major: ListMajor, at slot: Int) {
        if major.index != indices[slot] || major.size != sizes[slot] {
            indices[slot] = major.index
            sizes[slot] = major.size
            flags[slot] |= TransformArena.dirty
        }
        if !major.alive { flags[slot] &= ~TransformArena.alive }
    }

    /// Recomputes `block`'s summary from its minors (which must be up to date).
    func summarise(_ block: inout ListBlock) {
        var summary = ListRunSummary()
        var uniform = true
        for cursor in Int(block.start)..<Int(block.end) {
            let record = packed[cursor]
            if record.flags & TransformArena.alive == 0 { continue }
            let isInsert = record.kind == Kind.arrayInsert
            guard isInsert || record.kind == Kind.arrayErase else {
                uniform = false
                break
            }
            let slot = Int(slots[cursor])
            summary.add(node: record.node, field: record.field, index: indices[slot],
                        size: sizes[slot], isInsert: isInsert)
        }
        block.summary = summary
        block.state = !uniform || !summary.chains ? .mixed : summary.count == 0 ? .empty : .uniform
    }

    /// Passes `major` over the whole of `block` without visiting its minors, if the summary
    /// proves the pairwise walk's outcome (see the file's documentation).
    /// - Returns: whether the block was passed.
    @inline(__always)
    func pass(_ block: inout ListBlock, _ major: inout ListMajor) -> Bool {
        // A single major is a run of one: its zone is its own index.
        guard let passing = block.pass(
            majorsMinIndex: major.index, maxBelow: Int64(major.index), firstSize: major.size,
            netDelta: major.isInsert ? 1 : -1, node: major.node, field: major.field)
        else { return false }
        if passing == .unrelated { return true }
        let blockDelta = UInt32(truncatingIfNeeded: block.summary.netDelta)
        if passing == .below { major.index = major.index &+ blockDelta }
        major.size = major.size &+ blockDelta
        return true
    }

    /// Applies `block`'s pending shifts to its alive minors (marking them dirty).
    func settle(_ block: inout ListBlock) {
        if block.indexOffset == 0 && block.sizeOffset == 0 { return }
        let indexShift = UInt32(bitPattern: block.indexOffset)
        let sizeShift = UInt32(bitPattern: block.sizeOffset)
        for cursor in Int(block.start)..<Int(block.end)
        where packed[cursor].flags & TransformArena.alive != 0 {
            let slot = Int(slots[cursor])
            indices[slot] = indices[slot] &+ indexShift
            sizes[slot] = sizes[slot] &+ sizeShift
            flags[slot] |= TransformArena.dirty
        }
        block.indexOffset = 0
        block.sizeOffset = 0
    }
}

extension TransformArena {
    /// Runs `body` with raw views of the list loop's columns (one uniqueness check each),
    /// and of `listBlocks` when `withBlocks` (else an empty view: a run without blocks, the
    /// contested list's, pays no check for them).
    @inline(__always)
    private mutating func withListRunBuffers<Result>(
        minors: ContiguousArray<Int32>, withBlocks: Bool,
        _ body: (ListRunBuffers, UnsafeMutableBufferPointer<ListBlock>) -> Result
    ) -> Result {
        groupMinors.withUnsafeMutableBufferPointer { packed in
            flags.withUnsafeMutableBufferPointer { flags in
                index.withUnsafeMutableBufferPointer { indices in
                    priorSize.withUnsafeMutableBufferPointer { sizes in
                        minors.withUnsafeBufferPointer { slots in
                            let buffers = ListRunBuffers(packed: packed, flags: flags,
                                                         indices: indices, sizes: sizes,
                                                         slots: slots)
                            if !withBlocks {
                                return body(buffers, UnsafeMutableBufferPointer(start: nil,
                                                                                count: 0))
                            }
                            return listBlocks.withUnsafeMutableBufferPointer { blocks in
                                body(buffers, blocks)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The ArrayInsert/ArrayErase rules for one major list instruction against the incoming
    /// slots `minors[from ..< to]` (one conflict group, in order), over raw buffers: the hot
    /// loop of a contested list. Minors on other objects or other fields are skipped; the
    /// loop stops at an EraseObject of the major's object, at the first alive minor on the
    /// same list that is not an ArrayInsert or ArrayErase, or when the major is discarded.
    /// With `blocks` (the group's `listBlocks`, covering `from ..< to` or more, ending at
    /// `to`), whole blocks are passed when their summary proves the outcome.
    ///
    /// The rules are the same as `insertVersusInsert`, `insertVersusErase` and
    /// `eraseVersusErase` (the exhaustive tests cover both paths).
    /// - Returns: the position to continue from, and a prior-size mismatch if one was found.
    /// - Complexity: O(to − from) pairwise; with blocks, O(1) per passed block.
    mutating func mergeListRun(
        major: Int, minors: ContiguousArray<Int32>, from: Int, to: Int,
        ranks: ContiguousArray<UInt32>, blocks: Range<Int> = 0..<0
    ) -> (stoppedAt: Int, mismatch: MergeError?) {
        precondition(major < localCount, "major slot must be local")
        precondition(from <= to && to <= minors.count && to <= groupMinors.count,
                     "minor range out of bounds")
        precondition(blocks.isEmpty || Int(listBlocks[blocks.upperBound - 1].end) == to,
                     "list blocks must end at the run's end")
        var state = ListMajor(
            node: node[major], field: field[major], isInsert: kind[major] == Kind.arrayInsert,
            rank: ranks[Int(changeset[major])], index: index[major], size: priorSize[major])
        var passed = 0
        let withBlocks = !blocks.isEmpty
        let (stoppedAt, mismatch) = withListRunBuffers(minors: minors, withBlocks: withBlocks) {
            buffers, blockBuffer in
            defer { buffers.store(state, at: major) }
            if !withBlocks { return buffers.walk(&state, from: from, to: to) }
            // The block holding `from`.
            var low = blocks.lowerBound
            var high = blocks.upperBound - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if Int(blockBuffer[middle].start) <= from {
                    low = middle
                } else {
                    high = middle - 1
                }
            }
            var blockIndex = low
            var cursor = from
            while cursor < to {
                // In place: a block is 72 bytes, and most are only compared.
                let end = Int(blockBuffer[blockIndex].end)
                if cursor == Int(blockBuffer[blockIndex].start) {
                    if blockBuffer[blockIndex].state == .stale {
                        buffers.summarise(&blockBuffer[blockIndex])
                    }
                    if buffers.pass(&blockBuffer[blockIndex], &state) {
                        passed += 1
                        cursor = end
                        blockIndex += 1
                        continue
                    }
                }
                buffers.settle(&blockBuffer[blockIndex])
                blockBuffer[blockIndex].state = .stale
                let (stop, mismatch) = buffers.walk(&state, from: cursor, to: end)
                if stop < end || !state.alive || mismatch != nil { return (stop, mismatch) }
                cursor = end
                blockIndex += 1
            }
            return (cursor, nil)
        }
        listBlocksPassed &+= passed
        return (stoppedAt, mismatch)
    }

    /// `mergeListRun` for consecutive local majors, in one pass over raw buffers: from slot
    /// `first` on, every dead slot is skipped and every alive ArrayInsert or ArrayErase whose
    /// group is known to have no blocks (`blockLower[root] == -2`, decided by
    /// `Transformer.listBlocks` once the group is packed) walks all of its
    /// group's minors (`groupStart[root] ..< groupStart[root + 1]`), exactly as
    /// `Transformer.mergeListMajor` would start it. A contested list's majors each meet a few
    /// minors per merge when many clients upload small changesets; this pays the dispatch and
    /// the buffer set-up once per sweep instead of once per major.
    ///
    /// - Returns: where the sweep stopped: `major` is the first slot it did not finish
    ///   (`localCount` if none); `cursor` is -1 if the sweep did not start that slot (another
    ///   kind, or a group not yet decided: the caller takes the usual path), else the
    ///   minor position the slot's walk stopped at, which needs the generic rules; `mismatch`
    ///   is a prior-size mismatch found there.
    /// - Complexity: O(the minors walked + slots swept).
    mutating func sweepListMajors(
        from first: Int, roots: ContiguousArray<Int32>, groupStart: ContiguousArray<Int32>,
        blockLower: ContiguousArray<Int32>, ranks: ContiguousArray<UInt32>,
        minors: ContiguousArray<Int32>
    ) -> (major: Int, cursor: Int, mismatch: MergeError?) {
        let end = localCount
        let (kinds, nodes, fields, owners) = (kind, node, field, changeset)
        var swept = 0
        defer { listMajorsSwept &+= swept }
        return withListRunBuffers(minors: minors, withBlocks: false) { buffers, _ in
            var major = first
            while major < end {
                if buffers.flags[major] & Self.alive == 0 {
                    major += 1
                    continue
                }
                // Another kind (a schema instruction has no node) ends the sweep.
                let kind = kinds[major]
                guard kind == Kind.arrayInsert || kind == Kind.arrayErase else {
                    return (major, -1, nil)
                }
                let root = Int(roots[Int(nodes[major])])
                guard blockLower[root] == -2 else { return (major, -1, nil) }
                let groupEnd = Int(groupStart[root + 1])
                var state = ListMajor(
                    node: nodes[major], field: fields[major], isInsert: kind == Kind.arrayInsert,
                    rank: ranks[Int(owners[major])], index: buffers.indices[major],
                    size: buffers.sizes[major])
                let (stop, mismatch) = buffers.walk(&state, from: Int(groupStart[root]),
                                                    to: groupEnd)
                swept += 1
                buffers.store(state, at: major)
                if mismatch != nil || (state.alive && stop < groupEnd) {
                    return (major, stop, mismatch)
                }
                major += 1
            }
            return (end, -1, nil)
        }
    }

    /// Cuts the group minors at `from ..< to` into `listBlocks` (appended, stale, in order).
    /// A block ends at `settings.lengthMax` minors, or before an alive list minor that would
    /// widen its straddle zone (min index ... max index − prefix delta: the majors that cannot
    /// pass it whole) beyond `settings.spanMax`. A typing run keeps a zone one or two wide
    /// however long it is; a cursor jump starts a new block.
    /// Reads the packed records (`groupMinors`) when `packed`, else the slots' own columns
    /// (the same values, without packing a group that may never walk).
    /// - Returns: the blocks' range in `listBlocks`, or nil when they would average fewer than
    ///   `settings.averageLengthMin` minors (none are then appended).
    mutating func appendListBlocks(
        minors: ContiguousArray<Int32>, from: Int, to: Int, settings: ListBlockSettings,
        packed: Bool
    ) -> Range<Int>? {
        let first = listBlocks.count
        var start = from
        var zone = ListRunSummary()
        for cursor in from..<to {
            let slot = Int(minors[cursor])
            let record = packed ? groupMinors[cursor]
                : GroupMinor(node: node[slot], field: field[slot], rank: 0, kind: kind[slot],
                             flags: flags[slot])
            let isInsert = record.kind == Kind.arrayInsert
            let isList = record.flags & Self.alive != 0
                && (isInsert || record.kind == Kind.arrayErase)
            if cursor - start == settings.lengthMax
                || (isList && zone.zoneWidth(adding: index[slot]) > Int64(settings.spanMax))
            {
                listBlocks.append(ListBlock(start: start, end: cursor))
                // Blocks only add up (the last one is still to come): once they are too many
                // for the average, the answer is known, so edits at random positions stop
                // here instead of cutting the whole group.
                if (listBlocks.count - first + 1) * settings.averageLengthMin > to - from {
                    listBlocks.removeLast(listBlocks.count - first)
                    return nil
                }
                start = cursor
                zone = ListRunSummary()
            }
            if isList {
                zone.add(node: record.node, field: record.field, index: index[slot],
                         size: priorSize[slot], isInsert: isInsert)
            }
        }
        listBlocks.append(ListBlock(start: start, end: to))
        let count = listBlocks.count - first
        if count * settings.averageLengthMin > to - from {
            listBlocks.removeLast(count)
            return nil
        }
        return first..<listBlocks.count
    }

    /// Whether `slot` is an alive ArrayInsert or ArrayErase.
    @inline(__always)
    func isListSlot(_ slot: Int) -> Bool {
        let kind = self.kind[slot]
        return isAlive(slot) && (kind == Kind.arrayInsert || kind == Kind.arrayErase)
    }

    /// The end of the run of alive ArrayInsert/ArrayErase slots from `first` (below `end`) on
    /// `first`'s list whose straddle zone stays within `spanMax` (`Transformer.majorRun`),
    /// read through raw views, and the run's summary (`summariseMajors` of `first ..< end`).
    func listRunEnd(from first: Int, to end: Int, spanMax: UInt32)
        -> (end: Int, zone: ListRunSummary)
    {
        if first >= end { return (first, ListRunSummary()) }
        // At K = 100 a server cuts its whole window into runs on every upload (text-like:
        // about 50 instructions per slot, 55 through `zoneWidth` and `add`).
        return withColumns { columns in
            precondition(end <= columns.count, "slots beyond the arena")
            guard columns.flags[first] & Self.alive != 0,
                var cut = ListRunCut(first, of: columns, spanMax: spanMax)
            else { return (first, ListRunSummary()) }
            var slot = first + 1
            while slot < end && columns.flags[slot] & Self.alive != 0
                && cut.take(slot, of: columns)
            {
                slot += 1
            }
            return (slot, cut.zone)
        }
    }

    /// The summary of the alive local slots in `slots` (list instructions); nil when they are
    /// not on one list with prior sizes that chain.
    func summariseMajors(_ slots: Range<Int>) -> ListRunSummary? {
        // Raw views: a run of thousands of history majors (K = 100) paid a bounds check
        // and a reload of each column's base per read.
        let summary = withColumns { columns in
            precondition(slots.upperBound <= columns.count, "majors beyond the arena")
            var summary = ListRunSummary()
            for slot in slots where columns.flags[slot] & Self.alive != 0 {
                summary.add(slot, of: columns)
            }
            return summary
        }
        return summary.chains ? summary : nil
    }

    /// Moves the index of every alive ArrayInsert and ArrayErase of `slots` by `index` and its
    /// prior size by `size` (wrapping; marking them dirty): a run's shift, written to its
    /// slots (`settleMajors`).
    mutating func shiftMajors(_ slots: Range<Int>, index: Int32, size: Int32) {
        var run = ListMajorRun(slots: slots)
        run.indexOffset = index
        run.sizeOffset = size
        settleMajors(&run)
    }

    /// Applies the shifts owed to `run`'s alive majors (marking them dirty).
    mutating func settleMajors(_ run: inout ListMajorRun) {
        if run.indexOffset == 0 && run.sizeOffset == 0 { return }
        precondition(run.slots.upperBound <= min(flags.count, index.count, priorSize.count),
                     "majors beyond the arena")
        let indexShift = UInt32(bitPattern: run.indexOffset)
        let sizeShift = UInt32(bitPattern: run.sizeOffset)
        let slots = run.slots
        // Raw views: one uniqueness check per column, not one per write.
        flags.withUnsafeMutableBufferPointer { flags in
            index.withUnsafeMutableBufferPointer { indices in
                priorSize.withUnsafeMutableBufferPointer { sizes in
                    for slot in slots where flags[slot] & Self.alive != 0 {
                        indices[slot] = indices[slot] &+ indexShift
                        sizes[slot] = sizes[slot] &+ sizeShift
                        flags[slot] |= Self.dirty
                    }
                }
            }
        }
        run.indexOffset = 0
        run.sizeOffset = 0
    }

    /// Copies the index, prior size and flags of `slots` into the first `slots.count` values
    /// of `saved` (grown when shorter), through raw views: a touching run's slots, about 50,
    /// 88,000 times a text-like merge at K = 100.
    func saveListSlots(_ slots: Range<Int>, into saved: inout ContiguousArray<ListSlotValues>) {
        if saved.count < slots.count {
            saved = ContiguousArray(repeating: ListSlotValues(index: 0, size: 0, flags: 0),
                                    count: max(slots.count, 2 * saved.count))
        }
        withColumns { columns in
            precondition(slots.upperBound <= columns.count, "slots beyond the arena")
            saved.withUnsafeMutableBufferPointer { saved in
                for (offset, slot) in slots.enumerated() {
                    saved[offset] = ListSlotValues(index: columns.index[slot],
                                                   size: columns.priorSize[slot],
                                                   flags: columns.flags[slot])
                }
            }
        }
    }

    /// If every slot of `run` was as its changeset holds it in `saved` (`saveListSlots`, in
    /// its first values), is still alive, and, with the offsets the run still owes, moved by
    /// one shift (the same amounts for every index and every prior size, no flag changed but
    /// `dirty`): puts the saved values back, clears the offsets and returns the shift, which
    /// the caller then owes the slots. Else nil, with nothing changed: the caller settles the
    /// run (`settleMajors`). One pass checks and one puts back, instead of settling first.
    mutating func unwriteUniformShift(_ run: inout ListMajorRun,
                                      saved: ContiguousArray<ListSlotValues>)
        -> (index: Int32, size: Int32)?
    {
        let slots = run.slots
        precondition(saved.count >= slots.count, "fewer saved values than slots")
        if slots.isEmpty { return nil }
        let (indexOwed, sizeOwed) = (UInt32(bitPattern: run.indexOffset),
                                     UInt32(bitPattern: run.sizeOffset))
        let first = slots.lowerBound
        let indexShift = index[first] &+ indexOwed &- saved[0].index
        let sizeShift = priorSize[first] &+ sizeOwed &- saved[0].size
        let uniform = saved.withUnsafeBufferPointer { saved in
            flags.withUnsafeBufferPointer { flags in
                index.withUnsafeBufferPointer { indices in
                    priorSize.withUnsafeBufferPointer { sizes in
                        var differs: UInt32 = 0
                        for (offset, slot) in slots.enumerated() {
                            let was = saved[offset]
                            differs |= UInt32((was.flags & Self.untouchedMask) ^ Self.alive)
                            differs |= UInt32((flags[slot] | Self.dirty)
                                              ^ (was.flags | Self.dirty))
                            differs |= (indices[slot] &+ indexOwed &- was.index) ^ indexShift
                            differs |= (sizes[slot] &+ sizeOwed &- was.size) ^ sizeShift
                        }
                        return differs == 0
                    }
                }
            }
        }
        if !uniform { return nil }
        saved.withUnsafeBufferPointer { saved in
            flags.withUnsafeMutableBufferPointer { flags in
                index.withUnsafeMutableBufferPointer { indices in
                    priorSize.withUnsafeMutableBufferPointer { sizes in
                        for (offset, slot) in slots.enumerated() {
                            (indices[slot], sizes[slot]) = (saved[offset].index,
                                                            saved[offset].size)
                            flags[slot] = saved[offset].flags
                        }
                    }
                }
            }
        }
        (run.indexOffset, run.sizeOffset) = (0, 0)
        return (Int32(bitPattern: indexShift), Int32(bitPattern: sizeShift))
    }

    /// Passes `run` over the blocks from `blocks.lowerBound` on, while the summaries prove
    /// the outcome (`ListMajorRun.passUniform`, and blocks whose rules are all no-ops).
    /// - Returns: the first block it could not pass (`blocks.upperBound` when none).
    mutating func passMajorRun(_ run: inout ListMajorRun, blocks: Range<Int>,
                               minors: ContiguousArray<Int32>) -> Int {
        let stop = withListRunBuffers(minors: minors, withBlocks: true) { buffers, blockBuffer in
            var blockIndex = blocks.lowerBound
            while blockIndex < blocks.upperBound {
                blockIndex = run.passUniform(blockBuffer, from: blockIndex,
                                             to: blocks.upperBound)
                if blockIndex == blocks.upperBound { break }
                if blockBuffer[blockIndex].state == .stale {
                    // Summarised, the block may pass after all: try it again.
                    buffers.summarise(&blockBuffer[blockIndex])
                    continue
                }
                // A block whose rules are all no-ops for the run is passed as it is.
                if !blockBuffer[blockIndex].isUnrelated(node: run.summary.node,
                                                        field: run.summary.field) { break }
                blockIndex += 1
            }
            return blockIndex
        }
        listBlocksPassed &+= (stop - blocks.lowerBound) * Int(run.summary.count)
        return stop
    }

    /// Recomputes the summary of every stale block of `blocks`.
    mutating func summariseListBlocks(_ blocks: Range<Int>, minors: ContiguousArray<Int32>) {
        withListRunBuffers(minors: minors, withBlocks: true) { buffers, blockBuffer in
            for blockIndex in blocks where blockBuffer[blockIndex].state == .stale {
                buffers.summarise(&blockBuffer[blockIndex])
            }
        }
    }

    /// `Transformer.walkTouchedRegions`' loop over the touched blocks, in one set of raw
    /// views: before the block at `offsets[i]` (from `blocks.lowerBound`), `run` moves by
    /// what the untouched blocks before it did (`steps[i]`: the net delta of those below the
    /// touched regions, for its indices, and of all of them, for its prior sizes); then it
    /// meets the block as `Transformer.mergeMajorRun` does: it passes it whole if the
    /// summaries show the outcome, else its majors meet it one by one (every alive minor of a
    /// uniform block is an ArrayInsert or ArrayErase on the run's list, so only a prior-size
    /// mismatch or a discard stops a walk; the majors, in tiles, pass chunks of a copy of the
    /// block whole when they can, `ListCells`) and the run is summarised again. A change of the
    /// run's net delta is appended to `deltaChanges` (the block's offset and the new delta).
    /// - Returns: `stoppedAfter`, the index in `offsets` of the block after whose walk the
    ///   majors no longer chain (nil when the run met every block), or the mismatch. The
    ///   run's shifts since its last walk stay pending in `run` (its offsets).
    mutating func walkTouchedBlocks(
        _ run: inout ListMajorRun, blocks: Range<Int>, offsets: UnsafeBufferPointer<Int32>,
        steps: UnsafeBufferPointer<ListTouchedStep>,
        deltaChanges: inout ContiguousArray<(offset: Int32, delta: Int64)>,
        ranks: ContiguousArray<UInt32>, minors: ContiguousArray<Int32>, chunkLength: Int,
        chunkSpan: Int64
    ) -> (stoppedAfter: Int?, mismatch: MergeError?) {
        let (kinds, nodes, fields, owners) = (kind, node, field, changeset)
        let slots = run.slots
        var cellStats = ListCellStats()
        // The copies' space, reused from run to run (taken out of `self` for the loop).
        var (cellSpace, chunkSpace, majorSpace) = (listCellSpace, listChunkSpace, listMajorSpace)
        (listCellSpace, listChunkSpace, listMajorSpace) = ([], [], [])
        defer {
            listCellStats.add(cellStats)
            (listCellSpace, listChunkSpace, listMajorSpace) = (cellSpace, chunkSpace, majorSpace)
        }
        if majorSpace.count < slots.count {
            majorSpace = ContiguousArray(
                repeating: ListMajor(node: 0, field: 0, isInsert: false, rank: 0, index: 0,
                                     size: 0),
                count: slots.count)
        }
        return withListRunBuffers(minors: minors, withBlocks: true) { buffers, blockBuffer in
            /// Local slot `major` as the loops update it.
            @inline(__always)
            func listMajor(_ major: Int) -> ListMajor {
                ListMajor(node: nodes[major], field: fields[major],
                          isInsert: kinds[major] == Kind.arrayInsert,
                          rank: ranks[Int(owners[major])], index: buffers.indices[major],
                          size: buffers.sizes[major])
            }
            var moved = ListTouchedStep(below: 0, untouched: 0)
            var currentDelta = run.summary.netDelta
            var index = 0
            while true {
                // The blocks the run passes whole, one after another (about 99 % of them in a
                // text-like merge), then the first it does not: its step is applied, and it
                // failed `passUniform` as it was.
                index = run.passTouched(blockBuffer, base: blocks.lowerBound, offsets: offsets,
                                        steps: steps, from: index, moved: &moved)
                if index == offsets.count { break }
                defer { index += 1 }
                let blockIndex = blocks.lowerBound + Int(offsets[index])
                if blockBuffer[blockIndex].state == .stale {
                    buffers.summarise(&blockBuffer[blockIndex])
                    if run.passUniform(blockBuffer, from: blockIndex, to: blockIndex + 1)
                        > blockIndex
                    {
                        continue
                    }
                }
                if blockBuffer[blockIndex].isUnrelated(node: run.summary.node,
                                                       field: run.summary.field) { continue }
                // The majors walk the block one by one, from their settled state.
                let indexShift = UInt32(bitPattern: run.indexOffset)
                let sizeShift = UInt32(bitPattern: run.sizeOffset)
                if run.indexOffset != 0 || run.sizeOffset != 0 {
                    for slot in slots where buffers.flags[slot] & Self.alive != 0 {
                        buffers.indices[slot] = buffers.indices[slot] &+ indexShift
                        buffers.sizes[slot] = buffers.sizes[slot] &+ sizeShift
                        buffers.flags[slot] |= Self.dirty
                    }
                    (run.indexOffset, run.sizeOffset) = (0, 0)
                }
                let uniform = blockBuffer[blockIndex].state == .uniform
                buffers.settle(&blockBuffer[blockIndex])
                blockBuffer[blockIndex].state = .stale
                let block = blockBuffer[blockIndex]
                var summary = ListRunSummary()
                let length = uniform ? Int(block.end - block.start) : 0
                if cellSpace.count < length {
                    cellSpace = ContiguousArray(repeating: ListCell(), count: 2 * length)
                    // Chunks of one copy at the least.
                    chunkSpace = ContiguousArray(repeating: ListCellChunk(), count: 2 * length)
                }
                let mismatch = Self.withSpaces(&cellSpace, &chunkSpace, &majorSpace) {
                    space, chunkSpace, majorSpace -> MergeError? in
                    // A uniform block (not unrelated) is on the run's list: its majors meet
                    // a copy of its alive minors (`Transform+ListCells.swift`), in tiles.
                    var cells = uniform
                        ? ListCells(block, buffers: buffers, space: space, chunkSpace: chunkSpace,
                                    chunkLength: chunkLength, chunkSpan: chunkSpan)
                        : nil
                    defer {
                        if var used = cells {
                            used.finish()
                            cellStats.add(used.stats)
                        }
                    }
                    /// Writes back `state`, local `major`'s, and adds it to the run's new
                    /// summary if it is alive.
                    @inline(__always)
                    func keep(_ state: ListMajor, at major: Int) {
                        buffers.store(state, at: major)
                        if state.alive {
                            summary.add(node: state.node, field: state.field,
                                        index: state.index, size: state.size,
                                        isInsert: state.isInsert)
                        }
                    }
                    if var tiled = cells {
                        var count = 0
                        for major in slots where buffers.flags[major] & Self.alive != 0 {
                            majorSpace[count] = listMajor(major)
                            count += 1
                        }
                        let majors = UnsafeMutableBufferPointer(rebasing: majorSpace[0..<count])
                        if tiled.meetTiles(majors, tileLength: chunkLength) == nil {
                            cells = tiled
                            var next = 0
                            for major in slots where buffers.flags[major] & Self.alive != 0 {
                                keep(majors[next], at: major)
                                next += 1
                            }
                            return nil
                        }
                        // Prior sizes that do not chain: the walk below, major by major from
                        // fresh copies, reports the mismatch the pairwise walk finds first.
                        cellStats.tileRestarts += 1
                        cells = ListCells(block, buffers: buffers, space: space,
                                          chunkSpace: chunkSpace, chunkLength: chunkLength,
                                          chunkSpan: chunkSpan)
                    }
                    for major in slots where buffers.flags[major] & Self.alive != 0 {
                        var state = listMajor(major)
                        if cells != nil {
                            let mismatch = cells!.meet(&state)
                            keep(state, at: major)
                            if let mismatch { return mismatch }
                        } else {
                            let (stop, mismatch) = buffers.walk(
                                &state, from: Int(block.start), to: Int(block.end))
                            keep(state, at: major)
                            if let mismatch { return mismatch }
                            precondition(!state.alive || stop == Int(block.end),
                                         "a uniform block's walk stops only at a discard")
                        }
                    }
                    return nil
                }
                if let mismatch { return (nil, mismatch) }
                if !summary.chains { return (index, nil) }
                run.summary = summary
                let delta = summary.count == 0 ? 0 : summary.netDelta
                if delta != currentDelta {
                    currentDelta = delta
                    deltaChanges.append((offsets[index], delta))
                }
            }
            return (nil, nil)
        }
    }

    /// Runs `body` with raw views of `cells`, `chunks` and `majors`.
    @inline(__always)
    private static func withSpaces<Result>(
        _ cells: inout ContiguousArray<ListCell>, _ chunks: inout ContiguousArray<ListCellChunk>,
        _ majors: inout ContiguousArray<ListMajor>,
        _ body: (UnsafeMutableBufferPointer<ListCell>, UnsafeMutableBufferPointer<ListCellChunk>,
                 UnsafeMutableBufferPointer<ListMajor>) -> Result
    ) -> Result {
        cells.withUnsafeMutableBufferPointer { cells in
            chunks.withUnsafeMutableBufferPointer { chunks in
                majors.withUnsafeMutableBufferPointer { majors in body(cells, chunks, majors) }
            }
        }
    }

    /// Recomputes the summary of every stale block among `blocks.lowerBound + offsets[i]`.
    mutating func summariseListBlocks(_ blocks: Range<Int>, offsets: UnsafeBufferPointer<Int32>,
                                      minors: ContiguousArray<Int32>) {
        withListRunBuffers(minors: minors, withBlocks: true) { buffers, blockBuffer in
            for offset in offsets {
                let blockIndex = blocks.lowerBound + Int(offset)
                if blockBuffer[blockIndex].state == .stale {
                    buffers.summarise(&blockBuffer[blockIndex])
                }
            }
        }
    }

    /// Brings the minors of `blocks` up to date and marks the blocks stale, before another
    /// rule reads or writes them.
    mutating func settleListBlocks(_ blocks: Range<Int>, minors: ContiguousArray<Int32>) {
        withListRunBuffers(minors: minors, withBlocks: true) { buffers, blockBuffer in
            for blockIndex in blocks {
                buffers.settle(&blockBuffer[blockIndex])
                blockBuffer[blockIndex].state = .stale
            }
        }
    }
}

extension Transformer {
    /// Group `root`'s list blocks, cut the first time a list major walks the group, or when
    /// `mergeListSequences` asks (before packing it); empty when it walks every pair.
    mutating func listBlocks(_ root: Int) -> Range<Int> {
        if groupBlockLower[root] == -1 {
            let start = Int(groupStart[root])
            let end = Int(groupStart[root + 1])
            let settings = listBlockSettings
            if settings.enabled && end - start >= settings.groupCountMin,
                let range = arena.appendListBlocks(minors: groupPositions, from: start, to: end,
                                                   settings: settings, packed: groupPacked[root])
            {
                groupBlockLower[root] = Int32(range.lowerBound)
                groupBlockUpper[root] = Int32(range.upperBound)
                blockedGroups.append(Int32(root))
            } else {
                // "Walks every pair" (-2) only once packed: the list sweep reads a group so
                // marked through its packed records. Cut before packing (the sequence merge
                // asks), a group without blocks stays undecided and is cut again once packed.
                groupBlockLower[root] = groupPacked[root] ? -2 : -1
            }
        }
        let lower = Int(groupBlockLower[root])
        return lower < 0 ? 0..<0 : lower..<Int(groupBlockUpper[root])
    }

    /// Applies the shifts group `root`'s list blocks owe their minors, before another rule
    /// meets them.
    mutating func settleListBlocks(_ root: Int) {
        if listRegions.root == root { materializeListRegions() }
        let range = Int(groupBlockLower[root])..<Int(groupBlockUpper[root])
        arena.settleListBlocks(range, minors: groupPositions)
    }

    /// `settleListBlocks` for every group with blocks, before the write-back.
    mutating func settleAllListBlocks() {
        materializeListRegions()
        for root in blockedGroups { settleListBlocks(Int(root)) }
    }

    /// Merges local ArrayInsert or ArrayErase `major` with the group minors at `from ..< to`
    /// (`blocks` covering them, or empty): the list loop, and the generic rules for each minor
    /// it stops at. Requires no incoming schema instruction.
    @inline(__always)
    mutating func mergeListMajor(_ major: Int, from: Int, to: Int,
                                 blocks: Range<Int>) throws(MergeError) {
        var cursor = from
        while cursor < to {
            let outcome = arena.mergeListRun(major: major, minors: groupPositions, from: cursor,
                                             to: to, ranks: changesetRank, blocks: blocks)
            if let mismatch = outcome.mismatch { throw mismatch }
            cursor = outcome.stoppedAt
            if !arena.isAlive(major) || cursor >= to { return }
            if try !mergeStoppedMinor(major, at: &cursor) { return }
        }
    }

    /// Sweeps the local list edits from `major` on (`TransformArena.sweepListMajors`), and
    /// finishes as `mergeListMajor` does an edit whose walk stopped at a minor for the
    /// generic rules (its walk stops there again at once).
    /// - Returns: the next local slot to merge, or nil when the sweep could not take `major`
    ///   (the caller dispatches it on its own).
    mutating func sweepListEdits(from major: Int) throws(MergeError) -> Int? {
        let sweep = arena.sweepListMajors(
            from: major, roots: nodeRoot, groupStart: groupStart, blockLower: groupBlockLower,
            ranks: changesetRank, minors: groupPositions)
        if let mismatch = sweep.mismatch { throw mismatch }
        if sweep.cursor < 0 { return sweep.major > major ? sweep.major : nil }
        let root = Int(nodeRoot[Int(arena.node[sweep.major])])
        try mergeListMajor(sweep.major, from: sweep.cursor, to: Int(groupStart[root + 1]),
                           blocks: 0..<0)
        return sweep.major + 1
    }

    /// The local slots from `first` on that `mergeMajorRun` can take together: consecutive
    /// alive ArrayInsert and ArrayErase slots on `first`'s list, at most
    /// `listBlockSettings.lengthMax`, cut before one that would widen their straddle zone
    /// beyond `listBlockSettings.spanMax`. Empty unless at least two, with no incoming schema
    /// instruction and blocks in the list's group.
    mutating func majorRun(from first: Int) -> Range<Int> {
        let settings = listBlockSettings
        let end = arena.localCount
        guard settings.enabled && schemaPositions.isEmpty && first + 1 < end,
            arena.isListSlot(first), arena.isListSlot(first + 1),
            arena.node[first + 1] == arena.node[first],
            arena.field[first + 1] == arena.field[first]
        else { return first..<first }
        let root = Int(nodeRoot[Int(arena.node[first])])
        // A group already known to walk every pair (edits at random positions) costs no more.
        if groupBlockLower[root] == -2 { return first..<first }
        packGroup(root)
        if listBlocks(root).isEmpty { return first..<first }
        // The history's cut runs (`ColumnListRuns`) when `first` starts one; else a cut here,
        // ending where the cached run holding `first` ends.
        let cached = cachedListRun(from: first, limit: min(end, first + settings.lengthMax))
        let (stop, zone) = cached.run
            ?? arena.listRunEnd(from: first, to: cached.limit, spanMax: settings.spanMax)
        if stop - first < 2 { return first..<first }
        cutRunSummary = (first..<stop, zone)
        return first..<stop
    }

    /// The summary of the local list slots `slots` (`TransformArena.summariseMajors`). For the
    /// run `majorRun` cut last, that is the zone it summarised while cutting (every slot of
    /// the run alive, added in order), taken once: nothing changes a local slot between the
    /// cut and the run's first summary (`passListRegions`). At K = 100 a server merge cuts
    /// and summarises its whole window, a pass each (7 % of a text-like merge).
    mutating func summariseMajorRun(_ slots: Range<Int>) -> ListRunSummary? {
        defer { cutRunSummary = nil }
        guard let cut = cutRunSummary, cut.slots == slots else {
            return arena.summariseMajors(slots)
        }
        let summary = cut.summary.chains ? cut.summary : nil
        assert(summary == arena.summariseMajors(slots), "the cut run's summary is stale")
        return summary
    }

    /// Merges the local list instructions at `slots` (a `majorRun`) with their group, in an
    /// order the grid allows: the whole run passes each block it can (`ListMajorRun.passUniform`),
    /// and meets the others one major at a time. Cell (major k, block b) depends only on
    /// (k − 1, b) and (k, b − 1), so going block by block gives the grid's result.
    mutating func mergeMajorRun(_ slots: Range<Int>) throws(MergeError) {
        let root = Int(nodeRoot[Int(arena.node[slots.lowerBound])])
        if listBlockSettings.regions.enabled, try passListRegions(slots, root: root) { return }
        let blocks = listBlocks(root)
        let groupEnd = Int(groupStart[root + 1])
        var blockIndex = blocks.lowerBound
        var run = ListMajorRun(slots: slots)
        while blockIndex < blocks.upperBound {
            guard let summary = arena.summariseMajors(slots) else {
                // The majors no longer form one run: the rest, one by one.
                let from = Int(arena.listBlocks[blockIndex].start)
                for major in slots where arena.isAlive(major) {
                    try mergeListMajor(major, from: from, to: groupEnd,
                                       blocks: blockIndex..<blocks.upperBound)
                }
                return
            }
            if summary.count == 0 { return }
            run.summary = summary
            blockIndex = arena.passMajorRun(&run, blocks: blockIndex..<blocks.upperBound,
                                            minors: groupPositions)
            arena.settleMajors(&run)
            if blockIndex == blocks.upperBound { return }
            // The run cannot pass this block whole: its majors meet it one by one.
            let block = arena.listBlocks[blockIndex]
            for major in slots where arena.isAlive(major) {
                try mergeListMajor(major, from: Int(block.start), to: Int(block.end),
                                   blocks: blockIndex..<(blockIndex + 1))
            }
            blockIndex += 1
        }
    }
}
