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
//! A run is a `ListBlock`: a stretch of a group's packed minors cut where the incoming
//! indices jump (`listBlockSpanMax`) or at `listBlockLengthMax` minors, with its summary (min
//! index, max iₖ − pₖ, net delta, first prior size) and the index and size shifts it owes its
//! minors. Those shifts are applied lazily: a block's minors are brought up to date
//! (`settle`) before anything reads them pair by pair, that is before the walk, before any
//! other rule meets the group (`Transformer.settleListBlocks`) and before the write-back.
//! A walked block's summary is recomputed the next time it is tried.

/// A stretch of one group's packed minors (`TransformArena.groupMinors`) with what the list
/// loop needs to pass it without visiting it.
struct ListBlock: Sendable {
    enum State: UInt8, Sendable {
        /// The summary must be recomputed (the minors are up to date).
        case stale
        /// Every alive minor is an ArrayInsert or ArrayErase on `node`'s list `field`, and
        /// their prior sizes chain.
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
    var node: Int32 = -1
    var field: UInt32 = 0
    /// Including the pending `indexOffset` and `sizeOffset`.
    var minIndex: UInt32 = 0
    var firstSize: UInt32 = 0
    /// max over alive minors of index − (sum of the deltas of the alive minors before it).
    var maxBelow: Int64 = 0
    var netDelta: Int32 = 0
    /// Shifts owed to every alive minor's index and prior size (`settle` applies them).
    var indexOffset: Int32 = 0
    var sizeOffset: Int32 = 0

    init(start: Int, end: Int) {
        self.start = Int32(start)
        self.end = Int32(end)
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

    /// The major's own delta: what it does to a list's size.
    var delta: Int32 { isInsert ? 1 : -1 }
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

    /// Recomputes `block`'s summary from its minors (which must be up to date).
    func summarise(_ block: inout ListBlock) {
        var count = 0
        var prefix: Int64 = 0
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
            let index = indices[slot]
            let size = sizes[slot]
            if count == 0 {
                block.node = record.node
                block.field = record.field
                block.minIndex = index
                block.firstSize = size
                block.maxBelow = Int64(index)
            } else {
                guard record.node == block.node && record.field == block.field
                    && Int64(size) == Int64(block.firstSize) + prefix
                else {
                    uniform = false
                    break
                }
                block.minIndex = min(block.minIndex, index)
                block.maxBelow = max(block.maxBelow, Int64(index) - prefix)
            }
            prefix += isInsert ? 1 : -1
            count += 1
        }
        block.netDelta = Int32(prefix)
        block.state = !uniform ? .mixed : count == 0 ? .empty : .uniform
    }

    /// Passes `major` over the whole of `block` without visiting its minors, if the summary
    /// proves the pairwise walk's outcome (see the file's documentation).
    /// - Returns: whether the block was passed.
    @inline(__always)
    func pass(_ block: inout ListBlock, _ major: inout ListMajor) -> Bool {
        switch block.state {
        case .empty:
            return true
        case .uniform:
            // Minors on another list are all no-op rules for this major.
            if block.node != major.node || block.field != major.field { return true }
            guard block.firstSize == major.size else { return false }
            let delta = major.delta
            if block.minIndex > major.index {
                block.indexOffset += delta
                block.minIndex = block.minIndex &+ UInt32(bitPattern: delta)
                block.maxBelow += Int64(delta)
            } else if block.maxBelow < Int64(major.index) {
                major.index = major.index &+ UInt32(bitPattern: block.netDelta)
            } else {
                return false
            }
            block.sizeOffset += delta
            block.firstSize = block.firstSize &+ UInt32(bitPattern: delta)
            major.size = major.size &+ UInt32(bitPattern: block.netDelta)
            return true
        case .stale, .mixed:
            return false
        }
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
                var block = blockBuffer[blockIndex]
                let end = Int(block.end)
                if cursor == Int(block.start) {
                    if block.state == .stale { buffers.summarise(&block) }
                    if buffers.pass(&block, &state) {
                        passed += 1
                        blockBuffer[blockIndex] = block
                        cursor = end
                        blockIndex += 1
                        continue
                    }
                }
                buffers.settle(&block)
                block.state = .stale
                blockBuffer[blockIndex] = block
                let (stop, mismatch) = buffers.walk(&state, from: cursor, to: end)
                if stop < end || !state.alive || mismatch != nil { return (stop, mismatch) }
                cursor = end
                blockIndex += 1
            }
            return (cursor, nil)
        }
        if state.index != index[major] || state.size != priorSize[major] {
            index[major] = state.index
            priorSize[major] = state.size
            flags[major] |= Self.dirty
        }
        if !state.alive { flags[major] &= ~Self.alive }
        listBlocksPassed &+= passed
        return (stoppedAt, mismatch)
    }

    /// Cuts the group minors at `from ..< to` into `listBlocks` (appended, stale, in order).
    /// A block ends at `settings.lengthMax` minors, or before an alive list minor that would
    /// widen its straddle zone (min index ... max index − prefix delta: the majors that cannot
    /// pass it whole) beyond `settings.spanMax`. A typing run keeps a zone one or two wide
    /// however long it is; a cursor jump starts a new block.
    /// - Returns: the blocks' range in `listBlocks`, or nil when they would average fewer than
    ///   `settings.averageLengthMin` minors (none are then appended).
    mutating func appendListBlocks(
        minors: ContiguousArray<Int32>, from: Int, to: Int, settings: ListBlockSettings
    ) -> Range<Int>? {
        let first = listBlocks.count
        var start = from
        var lowest = Int64.max
        var highestBelow = Int64.min
        var prefix: Int64 = 0
        for cursor in from..<to {
            let record = groupMinors[cursor]
            let isInsert = record.kind == Kind.arrayInsert
            let isList = record.flags & Self.alive != 0
                && (isInsert || record.kind == Kind.arrayErase)
            var cut = cursor - start == settings.lengthMax
            let listIndex = isList ? Int64(index[Int(minors[cursor])]) : 0
            if isList && lowest <= highestBelow
                && max(highestBelow, listIndex - prefix) - min(lowest, listIndex)
                    > Int64(settings.spanMax)
            {
                cut = true
            }
            if cut {
                listBlocks.append(ListBlock(start: start, end: cursor))
                start = cursor
                lowest = Int64.max
                highestBelow = Int64.min
                prefix = 0
            }
            if isList {
                lowest = min(lowest, listIndex)
                highestBelow = max(highestBelow, listIndex - prefix)
                prefix += isInsert ? 1 : -1
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
