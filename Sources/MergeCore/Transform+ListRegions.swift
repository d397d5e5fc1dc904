//! Regions of a typed list: a local run passes all of its group's list blocks at once.
//!
//! The block walk (`Transform+ListBlocks.swift`) lets a run of local list edits pass a block
//! in O(1), but it still visits every block, in incoming order: a merge of M local runs
//! against B blocks costs M·B. In a typed upload the blocks lie all over the list, so no
//! stretch of consecutive blocks has a summary a run can pass whole (the README's "spans of
//! list blocks", tried and not kept). Ordered by position they do.
//!
//! **Regions.** Replaying the blocks in incoming order, each block's straddle zone, widened to
//! `minIndex ... maxBelow + 1`, lies in the frame its minors see. A block at those positions
//! leaves every position below `minIndex` where it is and moves every position from
//! `maxBelow + 1` on by its net delta (exactly the block walk's "above" and "below" rules for
//! a major there). `ListRegions.build` keeps the union of the zones as disjoint intervals
//! (regions) in the current frame: a block whose zone comes within `margin` of a region
//! joins it (several regions it touches merge), each block moves its region's end and every
//! later region by its net delta. Mapped back to the frame before any block (the frame the
//! next local run's indices are in), a region is an interval `start ..< start + width`, and
//! the positions outside all regions map one to one, in order, between the two frames.
//!
//! **Passing.** A local run (`ListRunSummary`) whose widened zone lies more than `margin`
//! from every region, in that frame, sits in the same gap between regions in every frame a
//! block sees: its zone is above every zone of the regions before it and below every zone of
//! the regions after it, cell by cell, so the block walk would pass every block, "below" for
//! the first kind and "above" for the second. The outcome is then known without visiting a
//! block: the run's indices move by the net delta of the regions before it, its prior sizes
//! by the net delta of all of them; the regions after it move by the run's net delta, and
//! every block's prior sizes too (both kept pending here until something reads the blocks:
//! `Transformer.materializeListRegions`). That costs a binary search and a shift of the later
//! regions' starts, O(log R + R) for R regions, against O(B) blocks; a typed upload's blocks
//! mostly nest in its own earlier text, so R is far smaller than B (text-like at 10^6 with
//! K = 10: about 2,000 blocks per merge in 10 to 20 regions).
//!
//! **Touching.** A run within `margin` of some regions (about one run in five in the
//! text-like benchmark: another client's text sits between the upload's blocks at the same
//! place) meets only those regions' blocks as the block walk does
//! (`Transformer.walkTouchedRegions`, `TransformArena.walkTouchedBlocks`). One pass over
//! every block's region and net delta gives, before each touched block, what the untouched
//! blocks before it did to the run (those below move it); the untouched blocks owe the run's
//! delta pending on their regions. If the walk discards some of the run's majors (an erase
//! meeting an erase of the same element), the untouched blocks it passes after that owe the
//! smaller delta, and get the difference at once. Then the touched regions are replayed from
//! their blocks as the walk left them (`ListRegions.retouch`): the run's text joins a region
//! only if it now lies between that region's blocks.
//!
//! **Falling back.** A run on another list, a prior size that does not chain, or a group
//! whose blocks are not all uniform on one list with chaining prior sizes, takes the block
//! walk: the pending shifts are applied to the blocks first, and the regions are built
//! again, from the blocks as the walk left them, the next time a run of the group comes
//! (within a backoff: `ListRegionSettings`). The result is the block walk's, bit for bit,
//! and so the pairwise grid's (`ListBlockTests` compares regions with the pairwise walk on
//! every path).

/// When the list walk passes local runs over a group's regions (`Transform+ListRegions.swift`).
struct ListRegionSettings: Sendable {
    /// Off: every local run walks the blocks.
    var enabled = true
    /// Groups with fewer list blocks walk them (a build costs about what a walk does).
    var blocksMin = 32
    /// The clearance, in positions, between a run's zone and a region's interval, and below
    /// which a block joins a region.
    var margin: Int64 = 1
    /// After regions passed fewer than this many runs before they had to be dropped, the
    /// group's next runs walk the blocks for a while before the regions are built again:
    /// 1, 2, 4, … `backoffMax` runs, doubling with each such short-lived build.
    var runsPerBuildMin = 8
    var backoffMax = 64
}

/// How a local run stands to a group's regions (`ListRegions.locate`).
enum ListRegionPlace {
    /// Clear of every region: it passes every block; its indices move by `indexShift`, its
    /// prior sizes by `sizeShift`.
    /// The regions from `firstAbove` on lie above it.
    case clear(indexShift: Int64, sizeShift: Int64, firstAbove: Int)
    /// Within `margin` of the regions `touched` (and clear of the others).
    case touching(ClosedRange<Int>)
    /// On another list, or not starting at the list's size: the block walk decides.
    case other
}

/// What the untouched blocks before a touched block did to a run
/// (`ListRegions.collectTouched`): the net delta of those of regions below the touched ones,
/// and of all of them.
struct ListTouchedStep: Sendable, BitwiseCopyable {
    var below: Int64
    var untouched: Int64
}

/// A region of a replay (`ListRegions.replayAdd`), in the frame of the block being replayed:
/// its first and last position, its net delta so far and its identity.
private struct ReplayRegion: Sendable, BitwiseCopyable {
    var start: Int64 = 0
    var end: Int64 = 0
    var delta: Int64 = 0
    var identity: Int32 = 0
}

/// The regions of one list group (see the file's documentation), with the shifts owed to its
/// blocks.
struct ListRegions: Sendable {
    /// The group root they describe; -1 when none is built (the blocks owe nothing).
    var root = -1
    /// The group's blocks in `TransformArena.listBlocks`.
    var blocks: Range<Int> = 0..<0
    /// The list: every block with an alive minor is uniform on it.
    var node: Int32 = -1
    var field: UInt32 = 0
    /// Per region, in list order: its first position in the frame of the next local run
    /// (before any block), and its width there.
    var start: ContiguousArray<Int64> = []
    var width: ContiguousArray<Int64> = []
    /// The region's net delta (its blocks'), and the net delta of the regions before each one
    /// (one more entry: all of them).
    var delta: ContiguousArray<Int64> = []
    var deltaBefore: ContiguousArray<Int64> = []
    /// What the region's blocks owe: their indices `start - startSettled`, their prior sizes
    /// `sizeOwed - sizeSettled`.
    var startSettled: ContiguousArray<Int64> = []
    var sizeSettled: ContiguousArray<Int64> = []
    /// Per block (from `blocks.lowerBound` on): its region, or -1 when it has no alive minor,
    /// and its net delta.
    var blockRegion: ContiguousArray<Int32> = []
    var blockDelta: ContiguousArray<Int32> = []
    /// The list's size before the next local run: the prior size a run must start from.
    var size: Int64 = 0
    /// The net delta of the runs passed since the build (see `sizeSettled`).
    var sizeOwed: Int64 = 0
    /// Runs passed since the build.
    var runsSinceBuild = 0
    /// Statistics for tests (never reset): runs passed clear of every region, runs that
    /// walked only the blocks of the regions they touched, and builds.
    var runsClear = 0
    var runsTouching = 0
    /// Of those, the runs whose slots all moved by one shift, deferred
    /// (`Transformer.deferListShift`) as a clear run's is.
    var runsTouchingDeferred = 0
    var builds = 0
    /// Touching runs whose walk discarded majors (the blocks after owed a smaller delta), and
    /// those whose majors stopped chaining (the rest walked one by one).
    var runsWithDiscards = 0
    var runsSplit = 0
    /// Per group with blocks, this merge: the runs still to walk before the next build, and
    /// the current backoff (`ListRegionSettings`).
    var usage: ContiguousArray<(root: Int32, wait: Int32, backoff: Int32)> = []

    // A replay's scratch, raw storage written with plain stores (`replayBegin` makes room for
    // every zone to come): the regions in the frame of the block being replayed,
    // `replayCount` of them, in list order; the identities, which merge (`replayParents`,
    // `parentCount` of them); and what `replayFinish` gives per identity.
    private var replayRegions = ScratchBuffer<ReplayRegion>()
    private var replayCount = 0
    private var replayParents = ScratchBuffer<Int32>()
    private var parentCount = 0
    private var regionOfIdentity = ScratchBuffer<Int32>()
    // What a replay gives (`replayFinish`).
    private var replayStart: ContiguousArray<Int64> = []
    private var replayWidth: ContiguousArray<Int64> = []
    private var replayDelta: ContiguousArray<Int64> = []
    /// `Transformer.walkTouchedRegions`' scratch: the offsets of the touched regions' blocks
    /// (`touchedOffsets`, `touchedCount` of them), and per such block the net delta of the
    /// blocks of regions below them before it, and of all the untouched blocks before it
    /// (`touchedSteps`); and the offsets of the touched blocks after which the run's net delta
    /// changed, with the new delta.
    private var touchedOffsetSpace = ScratchBuffer<Int32>()
    private var touchedStepSpace = ScratchBuffer<ListTouchedStep>()
    private(set) var touchedCount = 0
    var deltaChanges: ContiguousArray<(offset: Int32, delta: Int64)> = []
    /// `retouch`'s scratch: the replay identity of each touched block (-1: empty).
    private var touchedIdentity = ScratchBuffer<Int32>()
    /// The regions the last `retouch` left in place of the touched ones, while nothing else
    /// has changed a block's region or net delta since (only `build` and `retouch` do) and no
    /// other collect has replaced `touchedOffsets`: a run that touches exactly these regions
    /// has the touched blocks and the sums of the last collect (`collectedTotals`). Typing
    /// next to another client's text touches the same regions run after run (about two
    /// touching runs in three in the text-like benchmark at K = 10).
    private var retouched: ClosedRange<Int>?
    /// Statistics for tests (never reset): `collectTouched` calls answered from `retouched`.
    var collectsReused = 0
    /// The totals the last full `collectTouched` returned (and every reuse returns again).
    private var collectedTotals: (below: Int64, untouched: Int64) = (0, 0)

    /// Forgets every region and the usage (a new merge).
    mutating func reset() {
        root = -1
        usage.removeAll(keepingCapacity: true)
    }

    /// The offsets of the blocks the last `collectTouched` found. Valid until the next
    /// collect.
    var touchedOffsets: UnsafeBufferPointer<Int32> {
        UnsafeBufferPointer(rebasing: touchedOffsetSpace.buffer[0..<touchedCount])
    }

    /// Per block of `touchedOffsets`, what the untouched blocks before it did. Valid until the
    /// next collect.
    var touchedSteps: UnsafeBufferPointer<ListTouchedStep> {
        UnsafeBufferPointer(rebasing: touchedStepSpace.buffer[0..<touchedCount])
    }

    /// Index of `root` in `usage`, added if missing.
    mutating func usageIndex(_ root: Int) -> Int {
        if let index = usage.firstIndex(where: { $0.root == Int32(root) }) { return index }
        usage.append((Int32(root), 0, 0))
        return usage.count - 1
    }

    /// Builds the regions of `blocks` (each summarised, in the frame its minors see; see the
    /// file's documentation).
    /// - Returns: false, with nothing built, when a block is neither uniform nor empty, the
    ///   uniform ones are not all on one list with chaining prior sizes, none has an alive
    ///   minor, or a region's interval would invert (not expected of valid zones; checked).
    /// - Complexity: O(B·R) for B blocks and R regions (each block shifts the later regions).
    mutating func build(_ blocks: UnsafeBufferPointer<ListBlock>, margin: Int64) -> Bool {
        replayBegin(zones: blocks.count)
        blockRegion.removeAll(keepingCapacity: true)
        blockRegion.reserveCapacity(blocks.count)
        blockDelta.removeAll(keepingCapacity: true)
        blockDelta.reserveCapacity(blocks.count)
        var found = false
        var nextSize: Int64 = 0
        for block in blocks {
            if block.state == .empty {
                blockRegion.append(-1)
                blockDelta.append(0)
                continue
            }
            guard block.state == .uniform else { return false }
            let summary = block.summary
            if !found {
                (node, field, size, found) = (summary.node, summary.field,
                                               Int64(summary.firstSize), true)
            } else {
                guard summary.node == node && summary.field == field
                    && Int64(summary.firstSize) == nextSize
                else { return false }
            }
            nextSize = Int64(summary.firstSize) + summary.netDelta
            guard let id = replayAdd(low: Int64(summary.minIndex), high: summary.maxBelow + 1,
                                     delta: summary.netDelta, margin: margin)
            else { return false }
            blockRegion.append(id)
            blockDelta.append(Int32(truncatingIfNeeded: summary.netDelta))
        }
        guard found, replayFinish() else { return false }
        start = replayStart
        width = replayWidth
        delta = replayDelta
        sumDeltas()
        startSettled = start
        sizeSettled.removeAll(keepingCapacity: true)
        sizeSettled.append(contentsOf: repeatElement(0, count: start.count))
        let (parents, regionOf) = replayIdentities
        blockRegion.withUnsafeMutableBufferPointer { regions in
            for offset in regions.indices where regions[offset] >= 0 {
                regions[offset] = Self.replayRegion(of: regions[offset], parents: parents,
                                                    regionOf: regionOf)
            }
        }
        sizeOwed = 0
        runsSinceBuild = 0
        retouched = nil
        builds += 1
        return true
    }

    /// Starts a replay of at most `zones` zones (`replayAdd`).
    private mutating func replayBegin(zones: Int) {
        // Each zone adds at most one region and one identity (36 bytes per block of the group
        // at most, kept from merge to merge).
        replayRegions.reserve(zones + 1, repeating: ReplayRegion())
        replayParents.reserve(zones + 1, repeating: 0)
        replayCount = 0
        parentCount = 0
    }

    /// Replays one block: its widened zone `low ... high` in the current frame joins the
    /// regions within `margin` of it (or starts one), and its net delta `delta` moves that
    /// region's end and every later region.
    /// - Returns: the identity of its region, or nil when the region's interval would invert.
    @inline(__always)
    private mutating func replayAdd(low: Int64, high: Int64, delta: Int64,
                                    margin: Int64) -> Int32? {
        precondition(parentCount < replayParents.count, "more zones than replayBegin allowed")
        let regions = replayRegions.buffer.baseAddress!
        let count = replayCount
        // Regions first ..< end come within `margin` of the zone (ends and starts ascend).
        var first = 0
        var last = count
        while first < last {
            let middle = (first + last) / 2
            if regions[middle].end >= low - margin { last = middle } else { first = middle + 1 }
        }
        var end = first
        while end < count && regions[end].start <= high + margin { end += 1 }
        if first == end {
            var later = count
            while later > first {
                regions[later] = regions[later - 1]
                later -= 1
            }
            regions[first] = ReplayRegion(start: low, end: high, delta: 0,
                                          identity: Int32(parentCount))
            replayParents.buffer[parentCount] = Int32(parentCount)
            parentCount += 1
            replayCount += 1
        } else if end - first > 1 {
            regions[first].end = max(regions[end - 1].end, high)
            let parents = replayParents.buffer
            for merged in (first + 1)..<end {
                regions[first].delta += regions[merged].delta
                parents[Int(regions[merged].identity)] = regions[first].identity
            }
            let removed = end - first - 1
            for later in end..<count { regions[later - removed] = regions[later] }
            replayCount -= removed
        }
        regions[first].start = min(regions[first].start, low)
        regions[first].end = max(regions[first].end, high) + delta
        if delta != 0 {
            for later in (first + 1)..<replayCount {
                regions[later].start += delta
                regions[later].end += delta
            }
        }
        if regions[first].end < regions[first].start { return nil }
        regions[first].delta += delta
        return regions[first].identity
    }

    /// The replayed regions, back in the frame before the first zone: `replayStart`,
    /// `replayWidth`, `replayDelta`, and `replayRegion(of:)` for each identity.
    /// - Returns: false when a width is negative (not expected; checked).
    private mutating func replayFinish() -> Bool {
        replayStart.removeAll(keepingCapacity: true)
        replayWidth.removeAll(keepingCapacity: true)
        replayDelta.removeAll(keepingCapacity: true)
        let regions = replayRegions.buffer
        var before: Int64 = 0
        for region in regions[0..<replayCount] {
            let regionWidth = region.end - region.start - region.delta
            guard regionWidth >= 0 else { return false }
            replayStart.append(region.start - before)
            replayWidth.append(regionWidth)
            replayDelta.append(region.delta)
            before += region.delta
        }
        regionOfIdentity.reserve(max(parentCount, 1), repeating: -1)
        let regionOf = regionOfIdentity.buffer
        for index in 0..<parentCount { regionOf[index] = -1 }
        for index in 0..<replayCount { regionOf[Int(regions[index].identity)] = Int32(index) }
        return true
    }

    /// The union-find parents and the region of each root identity, after `replayFinish`.
    private var replayIdentities: (UnsafeMutablePointer<Int32>, UnsafePointer<Int32>) {
        (replayParents.buffer.baseAddress!, UnsafePointer(regionOfIdentity.buffer.baseAddress!))
    }

    /// The replayed region (`replayFinish`) of a zone's identity (`replayAdd`).
    @inline(__always)
    private static func replayRegion(of id: Int32, parents: UnsafeMutablePointer<Int32>,
                                     regionOf: UnsafePointer<Int32>) -> Int32 {
        var root = Int(id)
        while parents[root] != Int32(root) { root = Int(parents[root]) }
        parents[Int(id)] = Int32(root)
        return regionOf[root]
    }

    /// Recomputes `deltaBefore` from `delta`.
    private mutating func sumDeltas() {
        deltaBefore.removeAll(keepingCapacity: true)
        var before: Int64 = 0
        for regionDelta in delta {
            deltaBefore.append(before)
            before += regionDelta
        }
        deltaBefore.append(before)
    }

    /// Where a local run (`summary`: alive, chaining, on one list) stands.
    /// - Complexity: O(log R).
    func locate(_ summary: ListRunSummary, margin: Int64) -> ListRegionPlace {
        guard summary.node == node && summary.field == field && summary.chains
            && Int64(summary.firstSize) == size
        else { return .other }
        let low = Int64(summary.minIndex) - margin
        let high = summary.maxBelow + 1 + margin
        // The first region starting above the zone; the ones before it that end at or above
        // `low` touch it.
        var first = 0
        var last = start.count
        while first < last {
            let middle = (first + last) / 2
            if start[middle] > high { last = middle } else { first = middle + 1 }
        }
        var touched = first
        while touched > 0 && start[touched - 1] + width[touched - 1] >= low { touched -= 1 }
        if touched == first {
            return .clear(indexShift: deltaBefore[first], sizeShift: deltaBefore[start.count],
                          firstAbove: first)
        }
        return .touching(touched...(first - 1))
    }

    /// Records that a run with net delta `runDelta` was applied at the regions' frame, below
    /// the regions from `firstAbove` on: they move, and every block owes the run's delta to
    /// its prior sizes.
    mutating func applyRun(runDelta: Int64, firstAbove: Int) {
        if runDelta != 0 && firstAbove < start.count {
            start.withUnsafeMutableBufferPointer { starts in
                for later in firstAbove..<starts.count { starts[later] += runDelta }
            }
        }
        size += runDelta
        sizeOwed += runDelta
        runsSinceBuild += 1
    }

    /// Applies what the blocks of the regions `regions` owe to them (`blocks`: the group's
    /// blocks), and marks it settled.
    mutating func settle(_ regions: ClosedRange<Int>, _ blocks: UnsafeMutableBufferPointer<ListBlock>) {
        let (lower, upper) = (Int32(regions.lowerBound), Int32(regions.upperBound))
        for offset in 0..<blockRegion.count {
            let region = blockRegion[offset]
            guard region >= lower && region <= upper else { continue }
            let shift = start[Int(region)] - startSettled[Int(region)]
            if shift != 0 { blocks[offset].shiftAbove(by: shift) }
            let sizeShift = sizeOwed - sizeSettled[Int(region)]
            if sizeShift != 0 { blocks[offset].shiftSizes(by: sizeShift) }
        }
        for region in regions {
            startSettled[region] = start[region]
            sizeSettled[region] = sizeOwed
        }
    }

    /// `settle` for the blocks at `touchedOffsets` (the regions `regions`' blocks).
    mutating func settleTouched(_ regions: ClosedRange<Int>,
                                _ blocks: UnsafeMutableBufferPointer<ListBlock>) {
        let offsets = touchedOffsets
        let owed = sizeOwed
        blockRegion.withUnsafeBufferPointer { blockRegions in
            start.withUnsafeBufferPointer { starts in
                startSettled.withUnsafeBufferPointer { startsSettled in
                    sizeSettled.withUnsafeBufferPointer { sizesSettled in
                        for offset in offsets {
                            let region = Int(blockRegions[Int(offset)])
                            let shift = starts[region] - startsSettled[region]
                            if shift != 0 { blocks[Int(offset)].shiftAbove(by: shift) }
                            let sizeShift = owed - sizesSettled[region]
                            if sizeShift != 0 { blocks[Int(offset)].shiftSizes(by: sizeShift) }
                        }
                    }
                }
            }
        }
        for region in regions {
            startSettled[region] = start[region]
            sizeSettled[region] = sizeOwed
        }
    }

    /// Collects the blocks of the regions `touched` into `touchedOffsets` and
    /// `touchedSteps`, with the net deltas of the untouched blocks before each (one pass
    /// over every block's region and delta, eight blocks at a time: a chunk with no touched
    /// block adds its deltas at once; that cut the pass to a third of its time).
    ///
    /// When `touched` are the regions the last `retouch` made (`retouched`), the blocks are
    /// those the last collect found, less those left empty (region -1, net delta 0): the
    /// other blocks' regions and deltas are as they were, so are the sums before each block
    /// and the totals, and the pass is skipped.
    /// - Returns: the net deltas of all blocks of regions below `touched`, and of all
    ///   untouched blocks.
    mutating func collectTouched(_ touched: ClosedRange<Int>) -> (below: Int64, untouched: Int64) {
        if retouched == touched {
            collectsReused += 1
            let offsets = touchedOffsetSpace.buffer
            let steps = touchedStepSpace.buffer
            var kept = 0
            blockRegion.withUnsafeBufferPointer { regions in
                for index in 0..<touchedCount where regions[Int(offsets[index])] >= 0 {
                    offsets[kept] = offsets[index]
                    steps[kept] = steps[index]
                    kept += 1
                }
            }
            touchedCount = kept
            return collectedTotals
        }
        retouched = nil  // the blocks below are another collect's
        // Room for every block (20 bytes each, kept from merge to merge).
        let blockCount = blockRegion.count
        touchedOffsetSpace.reserve(blockCount, repeating: 0)
        touchedStepSpace.reserve(blockCount, repeating: ListTouchedStep(below: 0, untouched: 0))
        let offsets = touchedOffsetSpace.buffer
        let steps = touchedStepSpace.buffer
        let (lower, upper) = (Int32(touched.lowerBound), Int32(touched.upperBound))
        var below: Int64 = 0
        var untouched: Int64 = 0
        var found = 0
        blockRegion.withUnsafeBufferPointer { regions in
            blockDelta.withUnsafeBufferPointer { deltas in
                precondition(deltas.count == regions.count, "a block without its net delta")
                let (lowerLanes, upperLanes) = (Lanes(repeating: lower), Lanes(repeating: upper))
                var offset = 0
                while offset < regions.count {
                    // A chunk without a touched block (most of them) adds its deltas at once.
                    let chunkEnd = offset + Lanes.scalarCount
                    if chunkEnd <= regions.count {
                        let chunkRegions = Self.lanes(regions, at: offset)
                        let touchedLanes = (chunkRegions .>= lowerLanes)
                            .& (chunkRegions .<= upperLanes)
                        if !any(touchedLanes) {
                            // Untouched, a lane at or above `lower` lies above `upper`.
                            let chunkDeltas = Self.lanes(deltas, at: offset)
                            let belowDeltas = chunkDeltas.replacing(
                                with: 0, where: chunkRegions .>= lowerLanes)
                            below &+= WideLanes(truncatingIfNeeded: belowDeltas).wrappedSum()
                            untouched &+= WideLanes(truncatingIfNeeded: chunkDeltas).wrappedSum()
                            offset = chunkEnd
                            continue
                        }
                    }
                    for block in offset..<min(chunkEnd, regions.count) {
                        let region = regions[block]
                        let blockDelta = Int64(deltas[block])
                        if region >= lower && region <= upper {
                            offsets[found] = Int32(truncatingIfNeeded: block)
                            steps[found] = ListTouchedStep(below: below, untouched: untouched)
                            found += 1
                        } else {
                            below &+= region < lower ? blockDelta : 0
                            untouched &+= blockDelta
                        }
                    }
                    offset = chunkEnd
                }
            }
        }
        touchedCount = found
        collectedTotals = (below, untouched)
        return (below, untouched)
    }

    /// `collectTouched`'s chunk of blocks' regions or net deltas, and its sums.
    private typealias Lanes = SIMD8<Int32>
    private typealias WideLanes = SIMD8<Int64>

    /// The chunk of `buffer` from `offset` on (`offset + Lanes.scalarCount <= buffer.count`).
    @inline(__always)
    private static func lanes(_ buffer: UnsafeBufferPointer<Int32>, at offset: Int) -> Lanes {
        UnsafeRawPointer(buffer.baseAddress! + offset).loadUnaligned(as: Lanes.self)
    }

    /// After a run walked the blocks of the regions `touched` (`touchedOffsets`, summarised in
    /// `blocks`, the group's blocks): those regions are replayed again from their blocks as
    /// the walk left them (each zone taken back by the net delta of the untouched blocks
    /// below them before it), and replace the touched ones. The caller has moved the regions
    /// above (`applyRun`).
    /// - Returns: false when a touched block is no longer uniform on the list or empty, or
    ///   the new regions do not fit between their neighbours (the caller drops the regions).
    mutating func retouch(_ touched: ClosedRange<Int>, _ blocks: UnsafeBufferPointer<ListBlock>,
                          margin: Int64) -> Bool {
        retouched = nil
        let count = touchedCount
        replayBegin(zones: count)
        touchedIdentity.reserve(count, repeating: -1)
        let identities = touchedIdentity.buffer
        let offsets = touchedOffsets
        let steps = touchedSteps
        let (listNode, listField) = (node, field)
        for index in 0..<count {
            let offset = Int(offsets[index])
            let block = blocks.baseAddress! + offset
            if block.pointee.state == .empty {
                identities[index] = -1
                continue
            }
            guard block.pointee.state == .uniform && block.pointee.summary.node == listNode
                && block.pointee.summary.field == listField
            else { return false }
            let below = steps[index].below
            let netDelta = block.pointee.summary.netDelta
            guard let id = replayAdd(low: Int64(block.pointee.summary.minIndex) - below,
                                     high: block.pointee.summary.maxBelow + 1 - below,
                                     delta: netDelta, margin: margin)
            else { return false }
            identities[index] = id
        }
        guard replayFinish() else { return false }
        let (first, last) = (touched.lowerBound, touched.upperBound)
        let regionCount = replayStart.count
        // The new regions lie between the untouched neighbours, apart from them.
        if regionCount > 0 {
            if first > 0 && start[first - 1] + width[first - 1] >= replayStart[0] { return false }
            if last + 1 < start.count
                && replayStart[regionCount - 1] + replayWidth[regionCount - 1] >= start[last + 1]
            {
                return false
            }
        }
        let (parents, regionOf) = replayIdentities
        let moved = Int32(regionCount - (last - first + 1))
        blockRegion.withUnsafeMutableBufferPointer { regions in
            // The regions above move first: the touched blocks still hold touched regions.
            if moved != 0 {
                for offset in regions.indices where regions[offset] > Int32(last) {
                    regions[offset] += moved
                }
            }
            for index in 0..<count {
                let id = identities[index]
                regions[Int(offsets[index])] = id < 0
                    ? -1
                    : Int32(first) + Self.replayRegion(of: id, parents: parents,
                                                       regionOf: regionOf)
            }
        }
        blockDelta.withUnsafeMutableBufferPointer { deltas in
            for index in 0..<count {
                let offset = Int(offsets[index])
                // An empty block has no alive minor: its net delta is 0.
                deltas[offset] = identities[index] < 0
                    ? 0 : Int32(truncatingIfNeeded: blocks[offset].summary.netDelta)
            }
        }
        if regionCount == last - first + 1 {
            for region in 0..<regionCount {
                start[first + region] = replayStart[region]
                width[first + region] = replayWidth[region]
                delta[first + region] = replayDelta[region]
                startSettled[first + region] = replayStart[region]
                sizeSettled[first + region] = sizeOwed
            }
        } else {
            start.replaceSubrange(first...last, with: replayStart)
            width.replaceSubrange(first...last, with: replayWidth)
            delta.replaceSubrange(first...last, with: replayDelta)
            startSettled.replaceSubrange(first...last, with: replayStart)
            sizeSettled.replaceSubrange(first...last,
                                        with: repeatElement(sizeOwed, count: regionCount))
        }
        sumDeltas()
        if regionCount > 0 {
            retouched = first...(first + regionCount - 1)
        }
        return true
    }
}

extension Transformer {
    /// Merges the local list edits `slots` (alive or dead, on group `root`, which has list
    /// blocks) with the group's regions (see the file's documentation): clear of every
    /// region, the run passes every block at once; touching some, it walks only their blocks.
    /// Builds the regions first when needed.
    /// - Returns: whether the slots were merged; when not, nothing is pending on the blocks
    ///   and the caller walks them.
    mutating func passListRegions(_ slots: Range<Int>, root: Int) throws(MergeError) -> Bool {
        let settings = listBlockSettings.regions
        if listRegions.root != root {
            materializeListRegions()
            guard buildListRegions(root, settings: settings) else { return false }
        }
        guard let summary = summariseMajorRun(slots) else {
            materializeListRegions()
            return false
        }
        if summary.count == 0 { return true }
        switch listRegions.locate(summary, margin: settings.margin) {
        case let .clear(indexShift, sizeShift, firstAbove):
            if defersListShifts {
                deferListShift(slots, index: indexShift, size: sizeShift)
            } else {
                arena.shiftMajors(slots, index: Int32(truncatingIfNeeded: indexShift),
                                  size: Int32(truncatingIfNeeded: sizeShift))
            }
            listRegions.applyRun(runDelta: summary.netDelta, firstAbove: firstAbove)
            listRegions.runsClear += 1
            arena.listBlocksPassed &+= listRegions.blocks.count * Int(summary.count)
            return true
        case let .touching(touched):
            try walkTouchedRegions(slots, summary: summary, touched: touched)
            return true
        case .other:
            materializeListRegions()
            return false
        }
    }

    /// Merges run `slots` (`summary`), which touches the regions `touched`, as the block walk
    /// would: it passes the other regions' blocks in their order, below it (it moves by their
    /// deltas) or above it (they move by its delta, pending on their regions), and meets the
    /// touched regions' blocks as `mergeMajorRun` does. If the walk discards some of its
    /// majors, the blocks it passes after that owe it the smaller delta: each gets the
    /// difference at once. Then the touched regions are replayed from their blocks.
    /// - Complexity: O(B) for one pass over every block's region and delta, plus the block
    ///   walk of the touched regions' blocks.
    private mutating func walkTouchedRegions(_ slots: Range<Int>, summary: ListRunSummary,
                                             touched: ClosedRange<Int>) throws(MergeError) {
        let blocks = listRegions.blocks
        let runDelta = summary.netDelta
        // The touched regions' blocks get what they owe now and meet the run as they are;
        // the others owe it its delta (as it starts) on their regions.
        let (belowTotal, untouchedTotal) = listRegions.collectTouched(touched)
        arena.listBlocks.withUnsafeMutableBufferPointer { all in
            listRegions.settleTouched(touched, UnsafeMutableBufferPointer(rebasing: all[blocks]))
        }
        listRegions.applyRun(runDelta: runDelta, firstAbove: touched.upperBound + 1)
        for region in touched { listRegions.sizeSettled[region] = listRegions.sizeOwed }
        listRegions.deltaChanges.removeAll(keepingCapacity: true)
        var run = ListMajorRun(slots: slots)
        run.summary = summary
        if defersListShifts { arena.saveListSlots(slots, into: &touchingRunSlots) }
        let walked = arena.walkTouchedBlocks(
            &run, blocks: blocks, offsets: listRegions.touchedOffsets,
            steps: listRegions.touchedSteps, deltaChanges: &listRegions.deltaChanges,
            ranks: changesetRank, minors: groupPositions,
            chunkLength: listBlockSettings.cellChunkLength,
            chunkSpan: listBlockSettings.cellChunkSpan)
        if let mismatch = walked.mismatch { throw mismatch }
        if let stopped = walked.stoppedAfter {
            // The majors no longer form one run: the rest, one by one.
            listRegions.runsSplit += 1
            let offset = Int(listRegions.touchedOffsets[stopped]) + 1
            correctUntouched(upTo: offset, runDelta: runDelta, touched: touched)
            try walkRestOneByOne(slots, from: offset, touched: touched, runDelta: runDelta)
            return
        }
        let last = listRegions.touchedSteps.last ?? ListTouchedStep(below: 0, untouched: 0)
        let (movedBelow, movedUntouched) = (last.below, last.untouched)
        let (stepBelow, stepSize) = (belowTotal - movedBelow, untouchedTotal - movedUntouched)
        run.indexOffset &+= Int32(truncatingIfNeeded: stepBelow)
        run.sizeOffset &+= Int32(truncatingIfNeeded: stepSize)
        // Nearly always (97 % of the touching runs at text-like K = 100) the walk moved every
        // slot alike: then they owe one shift, as a clear run's slots do, reported as a range
        // and never put back by the next merge (`restoreHistoryPrefix`), not slot by slot.
        if defersListShifts,
            let shift = arena.unwriteUniformShift(&run, saved: touchingRunSlots)
        {
            deferListShift(slots, index: Int64(shift.index), size: Int64(shift.size))
            listRegions.runsTouchingDeferred += 1
        } else {
            arena.settleMajors(&run)
        }
        correctUntouched(upTo: blocks.count, runDelta: runDelta, touched: touched)
        arena.summariseListBlocks(blocks, offsets: listRegions.touchedOffsets,
                                  minors: groupPositions)
        let margin = listBlockSettings.regions.margin
        let replayed = arena.listBlocks.withUnsafeBufferPointer { all in
            listRegions.retouch(touched, UnsafeBufferPointer(rebasing: all[blocks]),
                                margin: margin)
        }
        listRegions.runsTouching += 1
        if !listRegions.deltaChanges.isEmpty { listRegions.runsWithDiscards += 1 }
        if !replayed { materializeListRegions() }
    }

    /// The untouched blocks before `end` (offsets) that the run passed after its net delta
    /// changed (`deltaChanges`) get the difference from `runDelta` (pending on their
    /// regions): to their prior sizes, and to their indices above the `touched` regions.
    private mutating func correctUntouched(upTo end: Int, runDelta: Int64,
                                           touched: ClosedRange<Int>) {
        let changes = listRegions.deltaChanges
        if changes.isEmpty { return }
        let blocks = listRegions.blocks
        for (index, change) in changes.enumerated() {
            let from = Int(change.offset) + 1
            let to = index + 1 < changes.count ? Int(changes[index + 1].offset) + 1 : end
            let correction = change.delta - runDelta
            if correction == 0 || from >= to { continue }
            for offset in from..<min(to, end) {
                let region = Int(listRegions.blockRegion[offset])
                if region < 0 || touched.contains(region) { continue }
                if region > touched.upperBound {
                    arena.listBlocks[blocks.lowerBound + offset].shiftAbove(by: correction)
                }
                arena.listBlocks[blocks.lowerBound + offset].shiftSizes(by: correction)
            }
        }
    }

    /// The end of `walkTouchedRegions` when the run's majors stop chaining (as
    /// `mergeMajorRun` does then): the blocks from `offset` on outside the `touched` regions
    /// give back the delta `runDelta` pending on their regions, every region is settled and
    /// dropped, and each major walks those blocks on its own.
    private mutating func walkRestOneByOne(_ slots: Range<Int>, from offset: Int,
                                           touched: ClosedRange<Int>,
                                           runDelta: Int64) throws(MergeError) {
        let blocks = listRegions.blocks
        for rest in offset..<blocks.count where listRegions.blockRegion[rest] >= 0 {
            let region = Int(listRegions.blockRegion[rest])
            if touched.contains(region) { continue }
            arena.listBlocks[blocks.lowerBound + rest].shiftSizes(by: -runDelta)
            if region > touched.upperBound {
                arena.listBlocks[blocks.lowerBound + rest].shiftAbove(by: -runDelta)
            }
        }
        materializeListRegions()
        if offset >= blocks.count { return }
        let from = Int(arena.listBlocks[blocks.lowerBound + offset].start)
        let groupEnd = Int(arena.listBlocks[blocks.upperBound - 1].end)
        for major in slots where arena.isAlive(major) {
            try mergeListMajor(major, from: from, to: groupEnd,
                               blocks: (blocks.lowerBound + offset)..<blocks.upperBound)
        }
    }

    /// Builds group `root`'s regions from its blocks as they are, within the budget.
    private mutating func buildListRegions(_ root: Int, settings: ListRegionSettings) -> Bool {
        let blocks = listBlocks(root)
        guard settings.enabled && blocks.count >= settings.blocksMin else { return false }
        let usage = listRegions.usageIndex(root)
        if listRegions.usage[usage].wait > 0 {
            listRegions.usage[usage].wait -= 1
            return false
        }
        arena.summariseListBlocks(blocks, minors: groupPositions)
        let built = arena.listBlocks.withUnsafeBufferPointer { all in
            listRegions.build(UnsafeBufferPointer(rebasing: all[blocks]), margin: settings.margin)
        }
        if !built { return false }
        listRegions.root = root
        listRegions.blocks = blocks
        return true
    }

    /// Applies what the blocks of the group with regions owe, and forgets the regions: before
    /// anything else reads or writes those blocks.
    mutating func materializeListRegions() {
        guard listRegions.root >= 0 else { return }
        let settings = listBlockSettings.regions
        let usage = listRegions.usageIndex(listRegions.root)
        if listRegions.runsSinceBuild < settings.runsPerBuildMin {
            let backoff = min(max(1, 2 * Int(listRegions.usage[usage].backoff)),
                              settings.backoffMax)
            listRegions.usage[usage].backoff = Int32(backoff)
            listRegions.usage[usage].wait = Int32(backoff)
        } else {
            listRegions.usage[usage].backoff = 0
        }
        let blocks = listRegions.blocks
        if !listRegions.start.isEmpty {
            let all = 0...(listRegions.start.count - 1)
            arena.listBlocks.withUnsafeMutableBufferPointer { buffer in
                listRegions.settle(all, UnsafeMutableBufferPointer(rebasing: buffer[blocks]))
            }
        }
        listRegions.root = -1
    }
}
