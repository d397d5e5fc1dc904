//! Contested lists without the product: the pairwise grid of one list's ArrayInsert and
//! ArrayErase instructions, computed from element identities.
//!
//! ## Why
//!
//! Two sides edit one list concurrently: local instructions l_1 … l_m, incoming a_1 … a_n,
//! both made on a list of S elements. The grid (`Transform.swift`) meets every a_i with
//! every l_k, so a merge costs n · m pair checks: 10^4 edits at random positions against a
//! history of 9 · 10^4 are 9 · 10^8 checks. This file gets the grid's result, bit for bit,
//! in about (S + n + m) · log(S + n + m) plus the work inside small regions (below).
//!
//! "Local" and "incoming" here are the two sides as this merge takes them: the one it links
//! first and the one it places row by row. Every rule of the grid treats a pair's two
//! instructions alike (ties go to the lower rank, whichever side it is on), so the result
//! does not depend on which is which, and `Transformer` passes the smaller side as `local`
//! (`ListSequenceSettings.LinkedSide`): the regions hold the linked side's elements.
//!
//! ## How
//!
//! ArrayInsert and ArrayErase keep identities: an erase transformed by the grid still erases
//! the same element (an insert at or below it shifts it up, an erase below it shifts it down,
//! an erase of the same element discards both), and an insert still creates its element. So
//! the grid is known once we know, for every state of the grid, the order of the elements
//! alive in it: every transformed index is "how many elements alive in my state precede my
//! element", and every prior size "how many are alive". Here is how that order is built.
//!
//! 1. *Identities.* Replaying each side on its own (an order-statistics sequence of element
//!    numbers, `PathSequence`) names the element each erase removes and the neighbours each
//!    insert lands between. A long side's replay is kept for later runs whose side starts
//!    with the same edits (`ListReplayCache`): a server's history is replayed once, each
//!    upload adding only its own edits.
//! 2. *One order of all elements* (`next`/`prev`, a linked list with the tombstones): the
//!    base, then each local insert placed right after its left neighbour. This is the local
//!    side's own order; its elements are then renumbered in it, so that walking it reads
//!    their records in sequence. Then each incoming insert, in order, is placed among the
//!    local elements by the grid's own rule (below). An element the local side never touches
//!    leaves the order at the incoming row that erases it: no later state holds it, so no
//!    later region needs to walk it.
//! 3. *Counting.* An instruction's result is its index in the grid's last column (incoming
//!    row i: "base · local · incoming′ so far") or last row (local time k: "base · incoming ·
//!    local′ so far"). Those states differ from the instruction's own state only in the
//!    elements the local side inserts or erases (*touched* elements, at most one per local
//!    instruction). They are ranked in the order once, and every element keeps how many
//!    touched ones precede it (inherited from its left neighbour when it is placed).
//!    - An incoming instruction's index in the last column is its own index plus the weights
//!      of the touched elements before it: +1 for a local insert the local side keeps, -1 for
//!      a base element the local side erases and the incoming side has not yet (prefix sums
//!      over the ranks in blocks, `BlockPrefixSums`: a read is two loads, and a weight
//!      changes only when a row erases an element the local side erased too, or moves
//!      within a reordered region). It is read row by row, as each insert is placed or each
//!      erase met.
//!    - A local instruction's index in the last row is the untouched elements alive there
//!      before its (touched) element, counted per rank as incoming inserts are placed, plus
//!      the touched ones alive in its state (a Fenwick tree over the ranks, swept in local
//!      time at the end).
//!
//!    So a row costs O(1) on top of placing it (a weight change, O(64 + touched / 64), is
//!    rare), and nothing walks the whole order: with the smaller side linked, the touched
//!    elements are a few thousand against up to 10^5 placed. (Until 2026-11-23 the last
//!    column was a second order-statistics sequence of every element, and the last row a
//!    Fenwick tree over the final order, which took a walk of the whole order to number.
//!    Until 2026-11-24 the weights were a Fenwick tree too: its read, a loop of about ten
//!    steps, was most of the time `run` spent outside `place` at list K = 100.)
//!
//! Placing incoming insert a_i (element x) needs its order against every local element y:
//! the grid decides it at the cell (i, k) where a_i meets l_k (y's insert), by comparing
//! indices in that cell's state and, at equal indices, by discriminant (the lower first).
//! Elements that stay alive in every state of row i (*anchors*: a base element the local side
//! never erases, or an incoming element not erased before a_i) bound the region where that
//! comparison can go either way. A local instruction outside the region lies wholly on one
//! side of x in every state of the row, so it shifts x's index and y's alike and changes no
//! comparison. Inside, the row is replayed on the region alone: its local inserts and live
//! local erases in time order, each compared with x as the grid would. The grid compares
//! indices, but an insert's index equals x's exactly when it lands in x's gap (between x's
//! nearest alive neighbours), so the replay follows the gap (`replayRegion`): it sorts the
//! region's inserts by time, and takes an erase only when it hits an end of the gap (each
//! end's erase time is known), widening the gap to the nearest element alive then. A region
//! holds the local elements between two consecutive anchors; the first incoming inserts have
//! few anchors, so over a group the replays cover about L · ln(D) elements. Most of a region's
//! decisions cannot change where x goes (an element on one side of the gap when it is
//! inserted stays there unless a widening passes it erased), so `followGap` decides only the
//! elements x's gap meets: the first gap's walk, then scans of an array of what was walked,
//! without the sort (since 2026-11-24; the whole region's replay remains for the cases it
//! leaves, none in the tests or benchmarks).
//!
//! The order is kept true to every state of the current row and later ones, and only to
//! those: two elements that no such state holds together may stand in either order. That is
//! not a shortcut. The orders the grid shows in different states need not fit one order of
//! all elements: x before y by a tie in row i, y before an element e in an earlier row
//! where the incoming side had not yet erased e, e before another base element f, and f
//! before x can each hold in some state, with no state holding all four. Hence the row-by-row
//! reading of the incoming results. When x's decisions put an element that must follow x
//! before one that must precede it, the region is split around x: elements move to the
//! other side only past elements no state of the row holds with them
//! (`reorderRegion`). If even that cannot meet the decisions, `run` returns false and the
//! caller walks the grid pair by pair (it never did in the tests or benchmarks). The same
//! happens for instructions whose prior sizes or indices are not those of a valid replay, and
//! the grid walk then reports them as it always does.
//!
//! `ListSequenceMergeTests` compares this with the pairwise rules over thousands of random
//! grids with many ties, and `Transformer` tests compare merges with and without it.

/// One ArrayInsert or ArrayErase of a sequence merge: read before `run`, rewritten by it.
struct ListSequenceEdit: Sendable, Equatable {
    var isInsert: Bool
    var index: UInt32
    var priorSize: UInt32
    /// The discriminant rank of the instruction's changeset (`Transformer.changesetRank`):
    /// at equal indices, the insert with the lower rank ends up first.
    var rank: UInt32
}

/// One element of a sequence merge: its neighbours in the order and the times that insert and
/// erase it.
struct ElementRecord: Sendable {
    var next: Int32
    var prev: Int32
    /// The local time (1-based) that inserted the element; 0 for base and incoming elements.
    var insertTime: UInt32
    /// The local time that erased the element, or `ListSequenceMerge.never`.
    var eraseTime: UInt32
    /// The incoming time that erased the element, or `ListSequenceMerge.never`.
    var incomingEraseTime: UInt32

    /// Whether the element is alive before incoming row `row`'s first local instruction (1 is
    /// the first row): a base or incoming element no earlier incoming instruction erased.
    @inline(__always)
    func isAliveAtRowStart(_ row: UInt32) -> Bool {
        insertTime == 0 && incomingEraseTime >= row
    }

    /// Whether the local side inserts or erases the element (false for the sentinels). Only
    /// these elements make the incoming side's own states differ from the grid's last column,
    /// and the local side's own states from the grid's last row.
    var isTouched: Bool {
        @inline(__always) get { insertTime != 0 || eraseTime != ListSequenceMerge.never }
    }

    /// A touched element's weight in the last column at incoming row `row`: how many more
    /// times it counts there than in the incoming side's state before the row. +1 for a local
    /// insert the local side keeps, -1 for a base element the local side erases while the
    /// incoming side has not yet, else 0.
    @inline(__always)
    func lastColumnWeight(_ row: UInt32) -> Int32 {
        if insertTime != 0 { return eraseTime == ListSequenceMerge.never ? 1 : 0 }
        return incomingEraseTime >= row ? -1 : 0
    }

    /// The local time from which the element is alive in incoming row `row`'s states: its
    /// local insert's, 0 if it is alive at the row's start, `never` if no state of the row
    /// holds it.
    @inline(__always)
    func bornInRow(_ row: UInt32) -> UInt32 {
        insertTime != 0 ? insertTime : (isAliveAtRowStart(row) ? 0 : ListSequenceMerge.never)
    }

    /// The local time that erases the element in incoming row `row`'s states, or `never` (not
    /// erased locally, or erased by an earlier incoming row: then in no state of the row).
    @inline(__always)
    func erasedInRow(_ row: UInt32) -> UInt32 {
        eraseTime != ListSequenceMerge.never && incomingEraseTime >= row
            ? eraseTime : ListSequenceMerge.never
    }

    /// Whether a non-sentinel element is alive in every state of incoming row `row` (an
    /// anchor): alive at the row's start and never erased locally.
    @inline(__always)
    func isAnchor(_ row: UInt32) -> Bool {
        isAliveAtRowStart(row) && eraseTime == ListSequenceMerge.never
    }
}

/// Computes the pairwise grid of one list's inserts and erases from element identities (see
/// the file's documentation). Holds its buffers between runs.
struct ListSequenceMerge: Sendable {
    /// The side whose replay a run keeps for later runs (`ListReplayCache`): the one a later
    /// run may start with again (a server's history), or `none` when no later run will (a
    /// client's unsynced changesets, rewritten by the merge).
    enum StoredSide: Sendable {
        case none
        case local
        case incoming
    }

    /// The local instructions in order; `run` rewrites their index and prior size.
    var local: ContiguousArray<ListSequenceEdit> = []
    /// The incoming instructions in order; `run` rewrites their index and prior size.
    var incoming: ContiguousArray<ListSequenceEdit> = []
    /// After `run`: whether each local instruction survives (an erase of an element the other
    /// side erased too is discarded on both sides).
    var localAlive: ContiguousArray<Bool> = []
    var incomingAlive: ContiguousArray<Bool> = []

    /// How many incoming inserts were placed by replaying their region (following x's gap
    /// through it, or the whole of it), and how many of those reordered it (statistics for
    /// tests; never reset).
    var regionsReplayed = 0
    var reorderedRegions = 0
    /// How many of the regions replayed were placed by following x's gap alone
    /// (`followGap`), without the walk of the whole region (a statistic for tests; never
    /// reset).
    var gapsFollowed = 0
    /// Whether `place` tries `followGap` before replaying a whole region (off: every
    /// contested placement replays its region; the results are the same).
    var followsGaps = true

    // Elements: 0 is the head, 1 the tail, then the S base elements, the local inserts'
    // elements, the incoming inserts' elements.
    private static let head: Int32 = 0
    private static let tail: Int32 = 1
    static let never = UInt32.max
    /// A region event (a local insert): local time in the high 32 bits, the region position
    /// in the low 32.
    private static let positionMask = UInt64(UInt32.max)

    /// Each element's neighbours in the order and its times, together: the region walk reads
    /// them for each element it passes, one cache line instead of five arrays.
    private var recordStore = ScratchBuffer<ElementRecord>()
    private var records: UnsafeMutableBufferPointer<ElementRecord> { recordStore.buffer }
    /// Each instruction's element: the inserted one, or the erased one.
    private var localElementStore = ScratchBuffer<Int32>()
    private var localElement: UnsafeMutableBufferPointer<Int32> { localElementStore.buffer }
    private var incomingElementStore = ScratchBuffer<Int32>()
    private var incomingElement: UnsafeMutableBufferPointer<Int32> { incomingElementStore.buffer }
    /// An insert's left neighbour in its side's state (or the head). (Its right neighbour is
    /// not kept: only local inserts and incoming tombstones stand between the two in the
    /// order, and neither is an anchor, so `replayRegion` finds the right anchor from the
    /// left one.)
    private var localLeftStore = ScratchBuffer<Int32>()
    private var localLeft: UnsafeMutableBufferPointer<Int32> { localLeftStore.buffer }
    private var incomingLeftStore = ScratchBuffer<Int32>()
    private var incomingLeft: UnsafeMutableBufferPointer<Int32> { incomingLeftStore.buffer }
    /// Each base and local element's place in the local order, counting from 2: the new
    /// numbers of `renumberInLocalOrder`.
    private var order: ContiguousArray<Int32> = []
    private var path = PathSequence()
    /// Whether each side's replay is looked up in, and long ones kept in, `replayCache` (off:
    /// every run replays both sides whole; the results are the same).
    var cachesReplays = true
    /// Long sides' replays, kept for the runs that follow (`ListReplayCache`).
    private(set) var replayCache = ListReplayCache()
    /// For each element, how many touched elements (`ElementRecord.isTouched`) precede it in
    /// the order; for a touched element, that is its rank among them.
    private var touchedBeforeStore = ScratchBuffer<Int32>()
    private var touchedBefore: UnsafeMutableBufferPointer<Int32> { touchedBeforeStore.buffer }
    /// By rank r: how many untouched elements alive in the last row ("base · incoming") have r
    /// touched elements before them (stand between the touched elements of ranks r - 1 and
    /// r). Elements the incoming side erases never count, so only an incoming insert it keeps
    /// adds to this once the touched ranks are set; a reordered region holds none.
    private var untouchedAfterStore = ScratchBuffer<Int32>()
    private var untouchedAfter: UnsafeMutableBufferPointer<Int32> { untouchedAfterStore.buffer }
    /// Each touched element's weight at the current incoming row, by rank
    /// (`ElementRecord.lastColumnWeight`). An incoming instruction's index in the last column
    /// is its own index plus the weights before its element.
    private var touchedWeights = BlockPrefixSums()
    /// The sum of all weights: the last column's size less the incoming side's.
    private var touchedTotal = 0
    /// The incoming instructions' results, copied into `incoming` once the run succeeds.
    private var incomingIndexStore = ScratchBuffer<UInt32>()
    private var incomingIndex: UnsafeMutableBufferPointer<UInt32> { incomingIndexStore.buffer }
    private var incomingPriorSizeStore = ScratchBuffer<UInt32>()
    private var incomingPriorSize: UnsafeMutableBufferPointer<UInt32> {
        incomingPriorSizeStore.buffer
    }
    /// By rank: the touched elements alive in the last row at the current local time.
    private var lastRowCounts = FenwickTree()
    // A region's buffers.
    private var regionStore = ScratchBuffer<Int32>()
    private var region: UnsafeMutableBufferPointer<Int32> { regionStore.buffer }
    private var eventStore = ScratchBuffer<UInt64>()
    private var decisionStore = ScratchBuffer<UInt8>()
    private var decision: UnsafeMutableBufferPointer<UInt8> { decisionStore.buffer }
    private var lifeStore = ScratchBuffer<UInt64>()
    private var after: ContiguousArray<Int32> = []
    private var eventScratchStore = ScratchBuffer<UInt64>()
    /// `followGap`'s stretch of the region around x, in order, grown at either end from the
    /// middle: each element, and its insert time (0 for a base element) above its index.
    private var stretchElementStore = ScratchBuffer<Int32>()
    private var stretchKeyStore = ScratchBuffer<UInt64>()
    /// The side `followGap` decided for a stretch element (2 precedes x, 1 follows, 0 free),
    /// or `undecided`.
    private var stretchSideStore = ScratchBuffer<UInt8>()
    private static let undecided: UInt8 = 0xFF
    /// The first incoming element of the current run: base and local elements, the only ones
    /// a region holds, are numbered below it.
    private var firstIncomingElement: Int32 = 2
    /// `followGap`'s record of x's gap: from each local time on, its two ends' indices in
    /// the stretch.
    private var gapSpanStore = ScratchBuffer<GapSpan>()

    init() {}

    /// Computes the grid of `local` against `incoming` (both non-empty, made on one list of
    /// `incoming[0].priorSize` elements). Returns false, leaving `local` and `incoming` as
    /// they were (the alive flags are then meaningless), when the instructions are not a valid
    /// replay on both sides or a placement fails; the caller then walks the grid pair by pair.
    /// - Complexity: O((S + n + m) · log) plus, per incoming insert, its region's size (the
    ///   walk, a radix sort of its inserts by local time, and the walks that widen x's gap
    ///   when an erase removes one of its ends).
    /// - Parameter storedSide: the side whose replay a miss keeps in `replayCache` (if long
    ///   enough): the one a later run may start with again.
    mutating func run(storing storedSide: StoredSide = .none) -> Bool {
        let localCount = local.count
        let incomingCount = incoming.count
        precondition(localCount > 0 && incomingCount > 0, "a sequence merge needs both sides")
        let baseCount = Int(incoming[0].priorSize)
        guard Int(local[0].priorSize) == baseCount else { return false }
        let localInserts = Self.insertCount(local)
        let incomingInserts = Self.insertCount(incoming)
        let elementCount = 2 + baseCount + localInserts + incomingInserts
        guard elementCount < Int(Int32.max) else { return false }
        resetElements(elementCount)
        let firstBase = Int32(2)
        let firstLocal = firstBase + Int32(baseCount)
        let firstIncoming = firstLocal + Int32(localInserts)
        guard replayBothSides(firstBase: firstBase, baseCount: baseCount,
                              firstLocal: firstLocal, firstIncoming: firstIncoming,
                              storing: storedSide)
        else { return false }
        linkLocalOrder(firstBase: firstBase, baseCount: baseCount)
        renumberInLocalOrder(firstIncoming: firstIncoming)
        resetTouched(firstIncoming: firstIncoming)
        sizeRegionBuffers(elementCount)
        firstIncomingElement = firstIncoming
        // A region holds fewer than `firstIncoming` elements: room for that many on either
        // side of the middle.
        stretchElementStore.reserve(2 * Int(firstIncoming) + 2, repeating: 0)
        stretchKeyStore.reserve(2 * Int(firstIncoming) + 2, repeating: 0)
        stretchSideStore.reserve(2 * Int(firstIncoming) + 2, repeating: 0)
        for i in 0..<incomingCount {
            let element = Int(incomingElement[i])
            let edit = incoming[i]
            if edit.isInsert {
                guard place(i) else { return false }
                let left = Int(records[element].prev)
                let before = touchedBefore[left] &+ (records[left].isTouched ? 1 : 0)
                touchedBefore[element] = before
                if records[element].incomingEraseTime == Self.never {
                    untouchedAfter[Int(before)] &+= 1
                }
            } else if records[element].eraseTime != Self.never {
                // The local side erased it too: from this row on it is in neither state.
                incomingAlive[i] = false
                touchedWeights.add(Int(touchedBefore[element]), 1)
                touchedTotal += 1
                continue
            }
            // x's index and the size in "base · local · earlier incoming" (the last column),
            // from its own state: the touched elements before x make the difference.
            incomingPriorSize[i] = UInt32(Int(edit.priorSize) + touchedTotal)
            incomingIndex[i] = UInt32(Int(edit.index)
                                      + touchedWeights.prefix(Int(touchedBefore[element])))
            if !edit.isInsert {
                // Untouched and erased here, the element is in no state of a later row, and
                // no count reads its place: out of the order, so that no later region walks
                // it. (Typing after a deleted stretch walked the whole stretch at every
                // keystroke.)
                unlink(Int32(element))
            }
        }
        sweepLocal(firstIncoming: firstIncoming)
        let (indices, priorSizes) = (incomingIndex, incomingPriorSize)
        incoming.withUnsafeMutableBufferPointer { incoming in  // one uniqueness check
            for i in incoming.indices {
                incoming[i].index = indices[i]
                incoming[i].priorSize = priorSizes[i]
            }
        }
        return true
    }

    /// How many of `edits` are inserts, without a branch: a Bool's byte is 0 or 1, so it is
    /// added as it is (a branch on each edit, taken in random order, and the overflow check
    /// of `+=` made this count a tenth of run's own time at 10^6).
    private static func insertCount(_ edits: ContiguousArray<ListSequenceEdit>) -> Int {
        edits.reduce(0) { $0 &+ Int(unsafeBitCast($1.isInsert, to: UInt8.self)) }
    }

    /// Ranks the touched elements (`ElementRecord.isTouched`) in the local order, with their
    /// weights at the first row, and counts for every linked element the touched ones before
    /// it and for every rank the untouched elements after it (`untouchedAfter`). Runs once
    /// the base and local elements are renumbered in the local order (`2 ..< firstIncoming`,
    /// consecutive).
    private mutating func resetTouched(firstIncoming: Int32) {
        let elementCount = records.count
        touchedBeforeStore.reset(count: elementCount, repeating: 0)
        touchedTotal = 0
        var touched: Int32 = 0
        for element in 2..<Int(firstIncoming) where records[element].isTouched {
            touched += 1
        }
        touchedWeights.reset(count: Int(touched))
        untouchedAfterStore.reset(count: Int(touched) + 1, repeating: 0)
        touched = 0
        for element in 2..<Int(firstIncoming) {
            touchedBefore[element] = touched
            let record = records[element]
            if record.isTouched {
                let weight = record.lastColumnWeight(1)
                touchedWeights.setInitial(Int(touched), weight)
                touchedTotal += Int(weight)
                touched += 1
            } else if record.incomingEraseTime == Self.never {
                untouchedAfter[Int(touched)] += 1
            }
        }
        touchedWeights.buildFromInitial()
        incomingIndexStore.reset(count: incoming.count, repeating: 0)
        incomingPriorSizeStore.reset(count: incoming.count, repeating: 0)
    }

    private mutating func resetElements(_ count: Int) {
        recordStore.reset(
            count: count,
            repeating: ElementRecord(next: -1, prev: -1, insertTime: 0, eraseTime: Self.never,
                                     incomingEraseTime: Self.never))
        localElementStore.reset(count: local.count, repeating: -1)
        localLeftStore.reset(count: local.count, repeating: -1)
        incomingElementStore.reset(count: incoming.count, repeating: -1)
        incomingLeftStore.reset(count: incoming.count, repeating: -1)
        localAlive.removeAll(keepingCapacity: true)
        localAlive.append(contentsOf: repeatElement(true, count: local.count))
        incomingAlive.removeAll(keepingCapacity: true)
        incomingAlive.append(contentsOf: repeatElement(true, count: incoming.count))
    }

    /// Replays `edits` alone on the base (elements `firstBase ..< firstBase + S`), numbering
    /// inserted elements from `firstNew`: names each instruction's element (inserted or
    /// erased) and each insert's left neighbour in its state (or the head). False if an
    /// instruction's prior size or index does not fit its state. `edits` holds `inserts`
    /// inserts.
    static func replay(
        _ edits: ContiguousArray<ListSequenceEdit>, inserts: Int, path: inout PathSequence,
        firstBase: Int32, baseCount: Int, firstNew: Int32,
        elements: UnsafeMutableBufferPointer<Int32>, lefts: UnsafeMutableBufferPointer<Int32>
    ) -> Bool {
        path.reset(firstBase..<(firstBase + Int32(baseCount)), inserts: inserts)
        return replay(edits, from: 0, on: &path, firstNew: firstNew, elements: elements,
                      lefts: lefts)
    }

    /// Replays `edits[start...]` on `path` as it stands (its state after the edits before
    /// `start`), naming elements as `replay` does, the first of these edits' inserts getting
    /// `firstNew`. (`ListReplayCache` continues a kept sequence through this.)
    static func replay(
        _ edits: ContiguousArray<ListSequenceEdit>, from start: Int, on path: inout PathSequence,
        firstNew: Int32,
        elements: UnsafeMutableBufferPointer<Int32>, lefts: UnsafeMutableBufferPointer<Int32>
    ) -> Bool {
        var nextElement = firstNew
        for k in start..<edits.count {
            let edit = edits[k]
            guard Int(edit.priorSize) == path.count else { return false }
            let index = Int(edit.index)
            if edit.isInsert {
                guard index <= path.count else { return false }
                if index == 0 {
                    lefts[k] = head
                    path.insert(nextElement, at: 0)
                } else {
                    lefts[k] = path.insert(nextElement, returningLeftAt: index)
                }
                elements[k] = nextElement
                nextElement += 1
            } else {
                guard index < path.count else { return false }
                elements[k] = path.remove(at: index)
            }
        }
        return true
    }

    /// Replays both sides (`replay`) and stamps the local insert and erase times and the
    /// incoming erase times.
    private mutating func replayBothSides(firstBase: Int32, baseCount: Int, firstLocal: Int32,
                                          firstIncoming: Int32,
                                          storing storedSide: StoredSide) -> Bool {
        let (localInserts, incomingInserts) = (Int(firstIncoming - firstLocal),
                                               records.count - Int(firstIncoming))
        if cachesReplays {
            precondition(firstBase == 2, "the replay cache numbers the base from 2")
            guard replayCache.replay(local, inserts: localInserts, baseCount: baseCount,
                                     firstNew: firstLocal, store: storedSide == .local,
                                     scratch: &path,
                                     elements: localElement, lefts: localLeft),
                replayCache.replay(incoming, inserts: incomingInserts, baseCount: baseCount,
                                   firstNew: firstIncoming, store: storedSide == .incoming,
                                   scratch: &path, elements: incomingElement,
                                   lefts: incomingLeft)
            else { return false }
        } else {
            guard Self.replay(local, inserts: localInserts, path: &path, firstBase: firstBase,
                              baseCount: baseCount, firstNew: firstLocal,
                              elements: localElement, lefts: localLeft),
                Self.replay(incoming, inserts: incomingInserts, path: &path,
                            firstBase: firstBase, baseCount: baseCount,
                            firstNew: firstIncoming, elements: incomingElement,
                            lefts: incomingLeft)
            else { return false }
        }
        for k in local.indices {
            let element = Int(localElement[k])
            if local[k].isInsert {
                records[element].insertTime = UInt32(k + 1)
            } else {
                records[element].eraseTime = UInt32(k + 1)
            }
        }
        for i in incoming.indices where !incoming[i].isInsert {
            records[Int(incomingElement[i])].incomingEraseTime = UInt32(i + 1)
        }
        return true
    }

    /// The base in order, then each local element right after its left neighbour: the local
    /// side's order, with each insert ahead of the tombstones of its gap.
    private mutating func linkLocalOrder(firstBase: Int32, baseCount: Int) {
        var last = Self.head
        for element in firstBase..<(firstBase + Int32(baseCount)) {
            records[Int(last)].next = element
            records[Int(element)].prev = last
            last = element
        }
        records[Int(last)].next = Self.tail
        records[Int(Self.tail)].prev = last
        for k in local.indices where local[k].isInsert {
            link(localElement[k], after: localLeft[k])
        }
    }

    /// Renumbers the base and local elements (all of `2 ..< firstIncoming`) in the local
    /// order, so that walking the order reads their records one after another. They were
    /// numbered by local time, which puts neighbours in the order anywhere in `records`: the
    /// region walks, which follow `next` over about L · ln(D) elements, then waited on a cache
    /// miss per element (half of `replayRegion`'s time). Incoming elements keep their numbers;
    /// they are linked in later, by `place`. Costs one walk of the order; the records are
    /// permuted in place, with `order` as the map.
    private mutating func renumberInLocalOrder(firstIncoming: Int32) {
        let count = Int(firstIncoming)
        let numbered = numberInOrder(count, from: 2)
        precondition(numbered == firstIncoming, "the local order misses an element")
        order.withUnsafeBufferPointer { map in
            Self.renumber(localElement, map: map, below: firstIncoming)
            Self.renumber(localLeft, map: map, below: firstIncoming)
            Self.renumber(incomingElement, map: map, below: firstIncoming)
            Self.renumber(incomingLeft, map: map, below: firstIncoming)
        }
        let records = self.records
        order.withUnsafeMutableBufferPointer { newNumber in
            // Each cycle of the permutation once; a visited element's entry becomes -1.
            for start in 2..<count where newNumber[start] >= 0 {
                var carried = records[start]
                var at = start
                while true {
                    let target = Int(newNumber[at])
                    newNumber[at] = -1
                    let displaced = records[target]
                    records[target] = carried
                    if target == start { break }
                    carried = displaced
                    at = target
                }
            }
            // Consecutive in the order now: each one's neighbours are the numbers beside it.
            for element in 2..<count {
                records[element].prev = Int32(element - 1)
                records[element].next = Int32(element + 1)
            }
            let first: Int32 = count > 2 ? 2 : Self.tail
            let last: Int32 = count > 2 ? Int32(count - 1) : Self.head
            records[Int(Self.head)].next = first
            records[Int(Self.tail)].prev = last
            if count > 2 {
                records[2].prev = Self.head
                records[count - 1].next = Self.tail
            }
        }
    }

    /// Replaces each element number in `2 ..< bound` in `elements` by `map[number]` (the
    /// sentinels and incoming elements keep theirs).
    private static func renumber(_ elements: UnsafeMutableBufferPointer<Int32>,
                                 map: UnsafeBufferPointer<Int32>, below bound: Int32) {
        for k in elements.indices where elements[k] > tail && elements[k] < bound {
            elements[k] = map[Int(elements[k])]
        }
    }

    @inline(__always)
    private mutating func unlink(_ element: Int32) {
        let (prev, next) = (records[Int(element)].prev, records[Int(element)].next)
        records[Int(prev)].next = next
        records[Int(next)].prev = prev
    }

    @inline(__always)
    private mutating func link(_ element: Int32, after left: Int32) {
        let right = records[Int(left)].next
        records[Int(left)].next = element
        records[Int(element)].prev = left
        records[Int(element)].next = right
        records[Int(right)].prev = element
    }

    /// Whether `element` is alive in every state of incoming row `time` (1-based): a
    /// sentinel, or an anchor (`ElementRecord.isAnchor`).
    @inline(__always)
    private func isAnchor(_ element: Int32, time: UInt32) -> Bool {
        Self.isAnchor(element, time: time, in: UnsafeBufferPointer(records))
    }

    /// `isAnchor(_:time:)` on records passed in (for loops that hold them in a local).
    @inline(__always)
    private static func isAnchor(_ element: Int32, time: UInt32,
                                 in records: UnsafeBufferPointer<ElementRecord>) -> Bool {
        element <= tail || records[Int(element)].isAnchor(time)
    }

    /// Places incoming insert `i`'s element in the order (see the file's documentation).
    private mutating func place(_ i: Int) -> Bool {
        let time = UInt32(i + 1)
        let element = incomingElement[i]
        let left = incomingLeft[i]
        var anchorLeft = left
        while !isAnchor(anchorLeft, time: time) { anchorLeft = records[Int(anchorLeft)].prev }
        if isAnchor(records[Int(anchorLeft)].next, time: time) {
            // An empty region (then `left` is `anchorLeft`): x goes after it, as when no local
            // instruction touches the region. The usual case when the local side is the
            // smaller one, linked among the other side's anchors.
            link(element, after: left)
            return true
        }
        let rank = incoming[i].rank
        if followsGaps {
            switch followGap(after: anchorLeft, left: left, time: time, rank: rank) {
            case .after(let target):
                regionsReplayed += 1
                gapsFollowed += 1
                link(element, after: target)
                return true
            case .reorders(let span):
                regionsReplayed += 1
                gapsFollowed += 1
                return reorderSpan(span, placing: element, time: time)
            case .replays:
                break
            }
        }
        let replayed = withRegionBuffers { buffers in
            Self.replayRegion(buffers, after: anchorLeft, left: left, time: time, rank: rank)
        }
        guard let (anchorRight, regionCount, firstAfter, lastBefore) = replayed else {
            link(element, after: left)  // No local instruction in the region: x goes after left.
            return true
        }
        regionsReplayed += 1
        if lastBefore < firstAfter {
            link(element, after: lastBefore >= 0 ? region[lastBefore] : anchorLeft)
            return true
        }
        return reorderRegion(placing: element, between: anchorLeft, and: anchorRight,
                             regionCount: regionCount, firstAfter: firstAfter,
                             lastBefore: lastBefore, time: time)
    }

    /// Sizes the region's buffers, once per run, for any region of `elementCount` elements.
    private mutating func sizeRegionBuffers(_ elementCount: Int) {
        regionStore.reserve(elementCount, repeating: 0)
        lifeStore.reserve(elementCount, repeating: 0)
        decisionStore.reserve(elementCount, repeating: 0)
        // Each local instruction is at most one event of a region.
        eventStore.reserve(local.count, repeating: 0)
        eventScratchStore.reserve(local.count + Self.sortCounterSlots, repeating: 0)
    }

    /// The region's buffers (`sizeRegionBuffers` first), with the records and local
    /// instructions to read (`replayRegion`).
    private mutating func withRegionBuffers<Result>(_ body: (RegionBuffers) -> Result)
        -> Result
    {
        let records = UnsafeBufferPointer(self.records)
        let (region, decision) = (region, decision)
        let (life, events) = (lifeStore.buffer, eventStore.buffer)
        let scratch = eventScratchStore.buffer
        return local.withUnsafeBufferPointer { local in
            body(RegionBuffers(records: records, local: local, region: region, life: life,
                               decision: decision, events: events, scratch: scratch))
        }
    }

    /// Cuts the region from `anchorLeft` to the next anchor and replays row `time` on it (see
    /// the file's documentation), leaving each region element's side of x in `decision` (1
    /// follows, 2 precedes, 0 free).
    /// - Returns: nil if no local instruction touches the region, else the right anchor, the
    ///   region's size, the first region position that must follow x and the last that must
    ///   precede it.
    private static func replayRegion(
        _ b: RegionBuffers, after anchorLeft: Int32, left: Int32, time: UInt32, rank: UInt32
    ) -> (anchorRight: Int32, regionCount: Int, firstAfter: Int, lastBefore: Int)? {
        // The region, with the row's inserts on it (each local insert of a region element, by
        // time), each element's lifetime in the row (`life`: the local time that inserts it,
        // 0 if alive at the row's start, `never` if never alive in the row; and the local time
        // that erases it, if no earlier incoming instruction did, else `never`), and x's gap
        // before the row's first local instruction: the nearest elements alive then on either
        // side of x (region positions; -1 and the region's size when there is none).
        // The buffers in locals: read through `b`, each of the loops below reloaded them after
        // every store (the stores could alias the parameter's memory).
        let (records, local, region) = (b.records, b.local, b.region)
        let (life, decision, regionEvents) = (b.life, b.decision, b.events)
        var regionCount = 0
        var eventCount = 0
        var anyErase = false
        var leftPosition = -1
        var gapLeft = -1
        var gapRight = -1
        let leftIsAnchor = left == anchorLeft
        var cursor = records[Int(anchorLeft)].next
        while true {
            let record = records[Int(cursor)]
            // An anchor ends the region (none stands between `anchorLeft` and `left`).
            if cursor <= tail || record.isAnchor(time) { break }
            let q = regionCount
            if record.insertTime != 0 {
                regionEvents[eventCount] = UInt64(record.insertTime) << 32 | UInt64(q)
                eventCount += 1
            }
            let (born, erased) = (record.bornInRow(time), record.erasedInRow(time))
            if erased != never { anyErase = true }
            if cursor == left { leftPosition = q }
            if born == 0 {
                if (!leftIsAnchor && leftPosition < 0) || q == leftPosition {
                    gapLeft = q
                } else if gapRight < 0 {
                    gapRight = q
                }
            }
            region[q] = cursor
            life[q] = UInt64(born) << 32 | UInt64(erased)
            decision[q] = 0
            regionCount += 1
            cursor = record.next
        }
        if eventCount == 0 && !anyErase { return nil }
        let anchorRight = cursor
        if gapRight < 0 { gapRight = regionCount }
        // Row i on the region alone, following x's gap: an insert inside the gap ties with x
        // (the lower rank first) and becomes the gap's new end on its side; one outside lies
        // on its side of the gap. An erase of a gap end widens the gap to the next element
        // alive on that side. (The grid compares indices: an element's index equals x's
        // exactly when it lands in x's gap, and an erase moves x only when below it.) Only
        // the inserts are sorted by time: an erase matters only when it hits a gap end, and
        // each end's erase time is known, so the ends' erases are taken in time order between
        // the inserts, each widening the gap by a walk to the nearest element alive then.
        @inline(__always) func erasedAt(_ q: Int) -> UInt32 {
            q >= 0 && q < regionCount ? UInt32(truncatingIfNeeded: life[q]) : never
        }
        @inline(__always) func isAlive(_ q: Int, at moment: UInt32) -> Bool {
            UInt32(truncatingIfNeeded: life[q] >> 32) < moment
                && UInt32(truncatingIfNeeded: life[q]) > moment
        }
        let events = UnsafeMutableBufferPointer(rebasing: regionEvents[0..<eventCount])
        sortByTime(events, scratch: b.scratch, timeBound: UInt32(local.count) + 1)
        var leftErase = erasedAt(gapLeft)
        var rightErase = erasedAt(gapRight)
        for event in events {
            let eventTime = UInt32(truncatingIfNeeded: event >> 32)
            // The gap ends' erases before this insert, in time order.
            while leftErase < eventTime || rightErase < eventTime {
                if leftErase < rightErase {
                    var p = gapLeft - 1
                    while p >= 0 && !isAlive(p, at: leftErase) { p -= 1 }
                    gapLeft = p
                    leftErase = erasedAt(p)
                } else {
                    var p = gapRight + 1
                    while p < regionCount && !isAlive(p, at: rightErase) { p += 1 }
                    gapRight = p
                    rightErase = erasedAt(p)
                }
            }
            let q = Int(truncatingIfNeeded: event & positionMask)
            if q > gapLeft && q < gapRight {
                if local[Int(eventTime) - 1].rank > rank {
                    decision[q] = 1  // x before y
                    gapRight = q
                    rightErase = erasedAt(q)
                } else {
                    decision[q] = 2  // x after y
                    gapLeft = q
                    leftErase = erasedAt(q)
                }
            } else {
                decision[q] = q < gapLeft ? 2 : 1
            }
        }
        // Each region element's side of x: forced by the incoming order (alive elements up to
        // x's left neighbour precede it, the others follow) or by the row's decisions.
        var lastBefore = -1
        var firstAfter = regionCount
        for q in 0..<regionCount {
            if decision[q] == 0 && life[q] >> 32 == 0 {
                decision[q] = q <= leftPosition ? 2 : 1
            }
            if decision[q] == 2 { lastBefore = q }
            if decision[q] == 1 && firstAfter == regionCount { firstAfter = q }
        }
        return (anchorRight, regionCount, firstAfter, lastBefore)
    }

    /// Decides where x goes as `replayRegion` would, by following x's gap alone: no walk of
    /// the whole region, no sort of its inserts.
    ///
    /// `replayRegion` decides every region element's side of x, and x goes after the last
    /// element that must precede it when that stands before the first that must follow it.
    /// Most of those decisions cannot matter. An element decided by the side of the gap it
    /// is inserted on, or one alive at the row's start, stays on that side of the gap for the
    /// rest of the row: the gap shrinks only by inserts inside it, and widens only over
    /// elements not alive then. So only these elements can stand on the wrong side of the
    /// final gap: the inserts that landed in the gap (decided by rank), the elements a widening
    /// passed after they were erased, and the gap's ends. Those are the ones decided here, by
    /// the same rules; every other element that must precede x stands at or before the final
    /// gap's left end, every other that must follow at or after its right end.
    ///
    /// The walk: the gap's interior is scanned for its earliest insert still to come (the
    /// interior holds no element alive then); an end erased before that widens the gap, as in
    /// `replayRegion`, and the walk over what it passes yields its inserts still to come.
    /// Elements are compared by their indices in a stretch of the region kept around x
    /// (grown at either end as the walks reach further), which is in the order.
    /// - Returns: the element x goes after; or, when the decisions cross, the span of the
    ///   stretch from the first element that must follow x to the last that must precede it,
    ///   every span element's side in `stretchSideStore` (`reorderSpan` reorders it as
    ///   `reorderRegion` would the region); or `replays` when an end of the final gap is not
    ///   decided on its own side (never in the tests or the benchmarks), and the caller then
    ///   replays the whole region.
    /// - Complexity: the walk over x's first gap, then scans of the stretch (an array, each
    ///   shorter than the last) and the widenings' walks; no sort. A list server merge at
    ///   K = 10 and 10^6 instructions walks 10.9 million elements and scans 6.3 million
    ///   entries here, where the region replays walked, sorted and decided 14.9 million.
    private mutating func followGap(after anchorLeft: Int32, left: Int32, time: UInt32,
                                    rank: UInt32) -> FollowedGap {
        let records = UnsafeBufferPointer(self.records)
        let (elements, keys) = (stretchElementStore.buffer, stretchKeyStore.buffer)
        let sides = stretchSideStore.buffer
        let bound = firstIncomingElement
        let never = Self.never
        if gapSpanStore.count < 32 {
            gapSpanStore.reserve(32, repeating: GapSpan(from: 0, left: 0, right: 0))
        }
        var spans = gapSpanStore.buffer
        var spanCount = 0
        @inline(__always) func isRegionAnchor(_ e: Int32) -> Bool {
            Self.isAnchor(e, time: time, in: records)
        }
        // The stretch: `lo ..< hi` around the middle, each element with its insert time
        // above its index (a key: the earliest insert is the smallest, and names its index).
        var (lo, hi) = (elements.count / 2, elements.count / 2)
        @inline(__always) func store(_ e: Int32, at k: Int) {
            elements[k] = e
            keys[k] = UInt64(records[Int(e)].insertTime) << 32 | UInt64(k)
            sides[k] = Self.undecided
        }
        // The gap's ends (indices, -1 and Int.max for the region's anchors) and their sides.
        var (leftEnd, rightEnd) = (-1, Int.max)
        var (leftSide, rightSide): (UInt8, UInt8) = (2, 1)
        var leftIndex = -1  // x's left neighbour's, if it stands in the region
        // The side `replayRegion` gives the element at `k`, already inserted (or alive at the
        // row's start): 2 precedes x, 1 follows, 0 free.
        func side(_ k: Int, _ r: ElementRecord) -> UInt8 {
            if r.insertTime != 0 {
                // The gap when it was inserted: the last span begun before.
                var s = spanCount - 1
                while spans[s].from >= r.insertTime { s -= 1 }
                if k < spans[s].left { return 2 }
                if k > spans[s].right { return 1 }
                return local[Int(r.insertTime) - 1].rank > rank ? 1 : 2
            }
            if r.isAliveAtRowStart(time) { return k <= leftIndex ? 2 : 1 }
            return 0
        }
        var (lastBefore, firstAfter) = (-1, Int.max)
        @inline(__always) func note(_ k: Int, _ decision: UInt8) {
            sides[k] = decision
            if decision == 2 && k > lastBefore {
                lastBefore = k
            } else if decision == 1 && k < firstAfter {
                firstAfter = k
            }
        }
        if left != anchorLeft {
            // x's left neighbour in its own side's state is alive at the row's start.
            guard left < bound, records[Int(left)].isAliveAtRowStart(time) else { return .replays }
            store(left, at: hi)
            (leftEnd, leftIndex) = (hi, hi)
            hi += 1
            note(leftEnd, 2)
        }
        // The gap before the row's first local instruction: up to the nearest element alive
        // then, or the right anchor. Its interior's earliest insert is the next event.
        var next = UInt64.max
        var e = records[Int(left)].next
        while !isRegionAnchor(e) {
            guard e < bound else { return .replays }
            store(e, at: hi)
            hi += 1
            if records[Int(e)].isAliveAtRowStart(time) {
                rightEnd = hi - 1
                note(rightEnd, 1)
                break
            }
            next = min(next, keys[hi - 1] > UInt64(UInt32.max) ? keys[hi - 1] : .max)
            e = records[Int(e)].next
        }
        spans[0] = GapSpan(from: 0, left: leftEnd, right: rightEnd)
        spanCount = 1
        var now: UInt32 = 0
        var scans = false
        while true {
            if scans {
                // The interior's earliest insert after now (its other elements were inserted
                // and erased, or are base elements).
                scans = false
                next = .max
                let after = UInt64(now) << 32 | UInt64(UInt32.max)
                for k in max(leftEnd + 1, lo)..<min(rightEnd, hi) {
                    next = min(next, keys[k] > after ? keys[k] : .max)
                }
            }
            let nextTime = next == .max ? never : UInt32(truncatingIfNeeded: next >> 32)
            let leftErase = leftEnd < 0 ? never
                : records[Int(elements[leftEnd])].erasedInRow(time)
            let rightErase = rightEnd == Int.max ? never
                : records[Int(elements[rightEnd])].erasedInRow(time)
            if leftErase < nextTime || rightErase < nextTime {
                // An end erased before the next insert: widen to the nearest element alive
                // then, deciding the erased elements passed, noting the inserts still to come.
                let widensLeft = leftErase < rightErase
                now = widensLeft ? leftErase : rightErase
                var k = widensLeft ? leftEnd - 1 : rightEnd + 1
                while true {
                    if k < lo || k >= hi {
                        let e = k < lo ? records[Int(elements[lo])].prev
                            : records[Int(elements[hi - 1])].next
                        if isRegionAnchor(e) {
                            if widensLeft {
                                (leftEnd, leftSide) = (-1, 2)
                            } else {
                                (rightEnd, rightSide) = (Int.max, 1)
                            }
                            break
                        }
                        guard e < bound else { return .replays }
                        if k < lo { lo -= 1 } else { hi += 1 }
                        store(e, at: k)
                    }
                    let r = records[Int(elements[k])]
                    let b = r.bornInRow(time)
                    if b != never && b > now {
                        next = min(next, keys[k])  // inside the gap from here on
                    } else if b != never && r.erasedInRow(time) > now {
                        // Alive now: the gap's new end.
                        let decision = side(k, r)
                        note(k, decision)
                        if widensLeft {
                            (leftEnd, leftSide) = (k, decision)
                        } else {
                            (rightEnd, rightSide) = (k, decision)
                        }
                        break
                    } else if b != never {
                        note(k, side(k, r))  // erased: inside the gap, decided before
                    }
                    k += widensLeft ? -1 : 1
                }
            } else if next != .max {
                // An insert inside the gap ties with x: the lower rank first.
                now = nextTime
                let k = Int(truncatingIfNeeded: next & UInt64(UInt32.max))
                if local[Int(nextTime) - 1].rank > rank {
                    (rightEnd, rightSide) = (k, 1)
                    note(k, 1)
                } else {
                    (leftEnd, leftSide) = (k, 2)
                    note(k, 2)
                }
                scans = true
            } else {
                break
            }
            if spanCount == spans.count {
                gapSpanStore.grow(to: 2 * spanCount, keeping: spanCount,
                                  repeating: GapSpan(from: 0, left: 0, right: 0))
                spans = gapSpanStore.buffer
            }
            spans[spanCount] = GapSpan(from: now, left: leftEnd, right: rightEnd)
            spanCount += 1
        }
        guard leftSide == 2 && rightSide == 1 else { return .replays }
        if lastBefore < firstAfter {
            return .after(lastBefore < 0 ? anchorLeft : elements[lastBefore])
        }
        // The decisions cross: `reorderRegion` on the span between them, every element's side
        // as `replayRegion` gives it. One not decided here was decided on its side of the
        // final gap (or is never alive in the row: free).
        for k in firstAfter...lastBefore where sides[k] == Self.undecided {
            let born = records[Int(elements[k])].bornInRow(time)
            sides[k] = born == never ? 0 : k < leftEnd ? 2 : 1
        }
        return .reorders(firstAfter...lastBefore)
    }

    /// What `followGap` found: the element x goes after, a span of the stretch to reorder
    /// around x (its elements' sides decided), or that the whole region must be replayed.
    private enum FollowedGap {
        case after(Int32)
        case reorders(ClosedRange<Int>)
        case replays
    }

    /// Places x by reordering `span` of `followGap`'s stretch (the elements from the first
    /// that must follow x to the last that must precede it), as `reorderRegion` would with the
    /// whole region: only the span's elements change places.
    private mutating func reorderSpan(_ span: ClosedRange<Int>, placing element: Int32,
                                      time: UInt32) -> Bool {
        let (elements, sides) = (stretchElementStore.buffer, stretchSideStore.buffer)
        let (region, decision) = (region, decision)
        for k in span {
            region[k - span.lowerBound] = elements[k]
            decision[k - span.lowerBound] = sides[k]
        }
        return reorderRegion(placing: element,
                             between: records[Int(elements[span.lowerBound])].prev,
                             and: records[Int(elements[span.upperBound])].next,
                             regionCount: span.count, firstAfter: 0,
                             lastBefore: span.count - 1, time: time)
    }

    /// Whether elements `u` and `v` are both alive in some state of incoming row `time`
    /// (before its instruction, at any local time). Only their order in those states still
    /// matters: every later row's states hold a subset of the same elements plus later
    /// incoming inserts, the incoming side's results are taken row by row, and the local
    /// side's in the last row. Orders seen only in earlier rows may now change; they can even
    /// form a cycle with the current row's (x before y by a tie, y before an element in a
    /// state where the incoming side had not yet erased it, that element before another in
    /// the base, and that one before x), so no single order serves every row.
    @inline(__always)
    private func orderMatters(_ u: Int32, _ v: Int32, time: UInt32) -> Bool {
        let (a, b) = (Int(u), Int(v))
        return records[a].incomingEraseTime >= time && records[b].incomingEraseTime >= time
            && records[a].insertTime < records[b].eraseTime
            && records[b].insertTime < records[a].eraseTime
    }

    /// Places x where some elements that must follow it stand before some that must precede
    /// it (`decision`: 1 follows, 2 precedes, 0 free). Elements of the region move to x's
    /// far side only past elements they never coexist with: everything from the first
    /// element that must follow x on goes after x if it must, or if it coexists with an
    /// earlier element that goes after x; the rest goes before x, each side in its order.
    /// False if an element that must precede x would have to go after it.
    private mutating func reorderRegion(placing element: Int32, between anchorLeft: Int32,
                                        and anchorRight: Int32, regionCount: Int,
                                        firstAfter: Int, lastBefore: Int,
                                        time: UInt32) -> Bool {
        after.removeAll(keepingCapacity: true)
        for q in firstAfter...lastBefore {
            let e = region[q]
            var goesAfter = decision[q] == 1
            if !goesAfter {
                for u in after where orderMatters(u, e, time: time) {
                    goesAfter = true
                    break
                }
            }
            if goesAfter {
                if decision[q] == 2 {
                    return false
                }
                after.append(e)
                decision[q] = 1
            } else {
                decision[q] = 2
            }
        }
        reorderedRegions += 1
        var last = anchorLeft
        // The region's touched elements keep their ranks' range, but may change places within
        // it: each moved one takes its weight along. (`anchorLeft` is an anchor, untouched, or
        // for `reorderSpan` the element before the span.)
        var touched = touchedBefore[Int(anchorLeft)]
            &+ (records[Int(anchorLeft)].isTouched ? 1 : 0)
        func append(_ e: Int32) {
            records[Int(last)].next = e
            records[Int(e)].prev = last
            last = e
            let record = records[Int(e)]
            let old = touchedBefore[Int(e)]
            touchedBefore[Int(e)] = touched
            guard record.isTouched else { return }
            if old != touched {
                touchedWeights.move(record.lastColumnWeight(time), from: Int(old),
                                    to: Int(touched))
            }
            touched += 1
        }
        for q in 0..<regionCount where q < firstAfter || (q <= lastBefore && decision[q] == 2) {
            append(region[q])
        }
        append(element)
        for q in 0..<regionCount where q > lastBefore || (q >= firstAfter && decision[q] == 1) {
            append(region[q])
        }
        records[Int(last)].next = anchorRight
        records[Int(anchorRight)].prev = last
        return true
    }

    /// Sorts region events (local time in the high 32 bits, all times distinct and below
    /// `timeBound`) by time: insertion sort when few, else a radix sort on the time (Swift's
    /// `sort` took a third of a list merge here). `scratch` holds at least as many events plus
    /// `sortCounterSlots`, where the digit counters go (a temporary allocation of that size is
    /// not on the stack: it was a malloc per sort).
    ///
    /// The radix sort counts every digit's values in one pass over the events, then moves them
    /// once per digit. The digit width is the one that costs least for this many events
    /// (`radixPasses`): a client merging 10^5 edits per list sorts regions of thousands of
    /// events with 17-bit times, which take two passes of 9 bits, not three of 6.
    static func sortByTime(_ events: UnsafeMutableBufferPointer<UInt64>,
                           scratch: UnsafeMutableBufferPointer<UInt64>, timeBound: UInt32) {
        let count = events.count
        if count <= 48 {
            for i in 1..<max(count, 1) {
                let value = events[i]
                var j = i
                while j > 0 && events[j - 1] > value {
                    events[j] = events[j - 1]
                    j -= 1
                }
                events[j] = value
            }
            return
        }
        precondition(scratch.count >= count + sortCounterSlots, "the scratch buffer is too small")
        let timeBits = max(1, UInt32.bitWidth - timeBound.leadingZeroBitCount)
        let (passes, bits) = radixPasses(count: count, timeBits: timeBits)
        let digits = 1 << bits
        let mask = UInt64(digits - 1)
        let counters = UnsafeMutableBufferPointer(
            rebasing: scratch[count..<(count + passes * digits)])
        counters.update(repeating: 0)
        let shiftBits = UInt64(bits)
        switch passes {  // the usual counts of passes unrolled: the loop cost more than its work
        case 2:
            for value in events {
                let time = value >> 32
                counters[Int(time & mask)] &+= 1
                counters[digits &+ Int((time >> shiftBits) & mask)] &+= 1
            }
        case 3:
            for value in events {
                let time = value >> 32
                counters[Int(time & mask)] &+= 1
                counters[digits &+ Int((time >> shiftBits) & mask)] &+= 1
                counters[2 &* digits &+ Int((time >> (2 &* shiftBits)) & mask)] &+= 1
            }
        default:
            for value in events {
                var time = value >> 32
                for pass in 0..<passes {
                    counters[pass &* digits &+ Int(time & mask)] &+= 1
                    time >>= shiftBits
                }
            }
        }
        var source = events
        var target = UnsafeMutableBufferPointer(rebasing: scratch[0..<count])
        var shift = UInt64(32)
        for pass in 0..<passes {
            let offsets = UnsafeMutableBufferPointer(
                rebasing: counters[(pass * digits)..<((pass + 1) * digits)])
            var total: UInt64 = 0
            for digit in 0..<digits {
                let digitCount = offsets[digit]
                offsets[digit] = total
                total &+= digitCount
            }
            for value in source {
                let digit = Int((value >> shift) & mask)
                target[Int(offsets[digit])] = value
                offsets[digit] &+= 1
            }
            swap(&source, &target)
            shift += shiftBits
        }
        if source.baseAddress != events.baseAddress {
            _ = events.update(fromContentsOf: source)
        }
    }

    /// The passes and digit width of `sortByTime`'s radix sort for `count` events with times
    /// of `timeBits` bits: the fewest passes × (events moved + counters summed), weighing an
    /// event about four counters, with every pass's counters in `sortCounterSlots`.
    static func radixPasses(count: Int, timeBits: Int) -> (passes: Int, bits: Int) {
        var best = (passes: 0, bits: 0)
        var bestCost = Int.max
        for passes in 1...8 {
            let bits = (timeBits + passes - 1) / passes
            if passes << bits > sortCounterSlots { continue }
            let cost = passes * (4 * count + (1 << bits))
            if cost < bestCost {
                best = (passes, bits)
                bestCost = cost
            }
        }
        return best
    }

    /// The scratch `sortByTime` needs beyond the events: the counters of every pass.
    static let sortCounterSlots = 1 << 12

    /// `sortByTime` on arrays (for tests).
    static func sortByTime(_ events: inout ContiguousArray<UInt64>,
                           scratch: inout ContiguousArray<UInt64>, timeBound: UInt32) {
        if scratch.count < events.count + sortCounterSlots {
            scratch = ContiguousArray(repeating: 0, count: events.count + sortCounterSlots)
        }
        events.withUnsafeMutableBufferPointer { events in
            scratch.withUnsafeMutableBufferPointer { scratch in
                sortByTime(events, scratch: scratch, timeBound: timeBound)
            }
        }
    }

    /// Sets `order` to `count` entries, each linked element's number in the order counting
    /// from `first` (-1 for the sentinels and unlinked elements); returns the next number.
    private mutating func numberInOrder(_ count: Int, from first: Int32) -> Int32 {
        order.removeAll(keepingCapacity: true)
        order.append(contentsOf: repeatElement(-1, count: count))
        var number = first
        var cursor = records[Int(Self.head)].next
        while cursor != Self.tail {
            order[Int(cursor)] = number
            number += 1
            cursor = records[Int(cursor)].next
        }
        return number
    }

    /// The local instructions over "base · incoming": each one's index counts the elements
    /// alive in its state that precede its element. Every local instruction's element is
    /// touched, so that count is the untouched elements alive in the last row before it
    /// (`untouchedAfter` up to its rank) plus the touched ones alive in its state before it
    /// (`lastRowCounts`, kept in local time): O(touched · log), with no walk of the order.
    private mutating func sweepLocal(firstIncoming: Int32) {
        let touched = untouchedAfter.count - 1
        lastRowCounts.reset(count: touched)
        // Untouched elements up to each rank, inclusive.
        var untouched: Int32 = 0
        for r in 0...touched {
            untouched &+= untouchedAfter[r]
            untouchedAfter[r] = untouched
        }
        var alive = Int(untouched)
        for element in 2..<Int(firstIncoming) {  // incoming elements are never touched
            let record = records[element]
            // A base element the local side erases and the incoming side keeps.
            if record.isTouched && record.insertTime == 0
                && record.incomingEraseTime == Self.never
            {
                lastRowCounts.setInitial(Int(touchedBefore[element]), 1)
                alive += 1
            }
        }
        lastRowCounts.buildFromInitial()
        // Through raw buffers: `local` and `localAlive` are arrays, and a write through `self`
        // checks uniqueness each time.
        let (records, elements, ranks) = (records, localElement, touchedBefore)
        let untouchedAfter = untouchedAfter
        local.withUnsafeMutableBufferPointer { local in
            localAlive.withUnsafeMutableBufferPointer { localAlive in
                for k in local.indices {
                    let element = Int(elements[k])
                    let rank = Int(ranks[element])
                    if local[k].isInsert {
                        local[k].index = UInt32(Int(untouchedAfter[rank])
                                                + lastRowCounts.prefix(rank))
                        local[k].priorSize = UInt32(alive)
                        lastRowCounts.add(rank, 1)
                        alive += 1
                    } else if records[element].incomingEraseTime != Self.never {
                        localAlive[k] = false
                    } else {
                        local[k].index = UInt32(Int(untouchedAfter[rank])
                                                + lastRowCounts.prefix(rank))
                        local[k].priorSize = UInt32(alive)
                        lastRowCounts.add(rank, -1)
                        alive -= 1
                    }
                }
            }
        }
    }

}

/// x's gap from local time `from` on (`ListSequenceMerge.followGap`): its ends' indices in
/// the stretch, -1 and `Int.max` for the region's anchors.
struct GapSpan: Sendable {
    var from: UInt32
    var left: Int
    var right: Int
}

/// The buffers `ListSequenceMerge.replayRegion` reads and writes, valid inside
/// `withRegionBuffers`.
private struct RegionBuffers {
    let records: UnsafeBufferPointer<ElementRecord>
    let local: UnsafeBufferPointer<ListSequenceEdit>
    let region: UnsafeMutableBufferPointer<Int32>
    let life: UnsafeMutableBufferPointer<UInt64>
    let decision: UnsafeMutableBufferPointer<UInt8>
    let events: UnsafeMutableBufferPointer<UInt64>
    let scratch: UnsafeMutableBufferPointer<UInt64>
}

/// Counts over positions `0 ..< count` with a prefix sum in two loads and no loop: each
/// position keeps the sum of its block (64 positions) before it, and each block the sum of
/// the blocks before it. A change costs up to 63 + count / 64 writes; a move of a value
/// between two positions d apart, up to 126 + d / 64.
///
/// For the touched weights of `ListSequenceMerge`, which are read once per placed row and
/// change only when that row erases an element the linked side erased too (once every few
/// hundred rows at list K = 100) or move within a reordered region: a Fenwick read was a
/// loop of about ten steps whose exit mispredicted, most of the time `run` spent outside
/// `place`.
struct BlockPrefixSums: Sendable {
    private static let blockShift = 6
    private static let blockMask = (1 << blockShift) - 1
    /// `within[p]` for p in `0 ... count`: the sum of the positions from p's block's first up
    /// to p, excluded (`setInitial` parks position p's value at p + 1 until the build).
    private var withinStore = ScratchBuffer<Int32>()
    /// `blocks[b]`: the sum of the positions below b · 64.
    private var blockStore = ScratchBuffer<Int32>()
    private(set) var count = 0

    /// Zeroes `count` positions; `setInitial` then `buildFromInitial` fill them in O(count).
    mutating func reset(count: Int) {
        self.count = count
        withinStore.reset(count: count + 1, repeating: 0)
        blockStore.reset(count: (count >> Self.blockShift) + 1, repeating: 0)
    }

    /// Sets position `position` before `buildFromInitial`.
    @inline(__always)
    mutating func setInitial(_ position: Int, _ value: Int32) {
        withinStore.buffer[position + 1] = value
    }

    /// Turns the values set by `setInitial` into the sums, in O(count).
    mutating func buildFromInitial() {
        let (within, blocks) = (withinStore.buffer, blockStore.buffer)
        var total: Int32 = 0
        var running: Int32 = 0
        for p in 0...count {
            let before = within[p]  // position p - 1's value (0 at p = 0)
            total &+= before
            if p & Self.blockMask == 0 {
                blocks[p >> Self.blockShift] = total
                running = 0
            } else {
                running &+= before
            }
            within[p] = running
        }
    }

    /// The sum of positions `0 ..< position` (`position` at most `count`).
    @inline(__always)
    func prefix(_ position: Int) -> Int {
        Int(blockStore.buffer[position >> Self.blockShift] &+ withinStore.buffer[position])
    }

    /// Adds `delta` to position `position`: up to 63 + count / 64 writes.
    @inline(__always)
    mutating func add(_ position: Int, _ delta: Int32) {
        addToPrefixes(after: position, through: count, delta)
    }

    /// Moves `value` from position `from` to position `to`: up to 126 + |to − from| / 64
    /// writes, so a move between near positions stays cheap however many positions there are
    /// (a reordered region moves its touched elements' weights among its own ranks).
    @inline(__always)
    mutating func move(_ value: Int32, from: Int, to: Int) {
        if from < to {
            addToPrefixes(after: from, through: to, 0 &- value)
        } else if to < from {
            addToPrefixes(after: to, through: from, value)
        }
    }

    /// Adds `delta` to `prefix(p)` for every p in `low + 1 ... high` (`high` at most `count`).
    private mutating func addToPrefixes(after low: Int, through high: Int, _ delta: Int32) {
        let (within, blocks) = (withinStore.buffer, blockStore.buffer)
        let highBlock = high >> Self.blockShift
        var p = low + 1
        if p > high { return }
        if p >> Self.blockShift == highBlock {
            while p <= high {
                within[p] &+= delta
                p += 1
            }
            return
        }
        while p & Self.blockMask != 0 {  // the rest of `low + 1`'s block
            within[p] &+= delta
            p += 1
        }
        for b in (p >> Self.blockShift)...highBlock { blocks[b] &+= delta }
        var q = high + 1  // the positions of `high`'s block past `high` take it back
        while q <= count && q & Self.blockMask != 0 {
            within[q] &-= delta
            q += 1
        }
    }
}

/// A Fenwick tree of counts over positions `0 ..< count`.
struct FenwickTree: Sendable {
    private var store = ScratchBuffer<Int32>()
    private var tree: UnsafeMutableBufferPointer<Int32> { store.buffer }

    /// Zeroes `count` positions; `setInitial` then `buildFromInitial` fill them in O(count).
    mutating func reset(count: Int) {
        store.reset(count: count + 1, repeating: 0)
    }

    /// Sets position `position` before `buildFromInitial`.
    @inline(__always)
    mutating func setInitial(_ position: Int, _ value: Int32) { tree[position + 1] = value }

    /// Turns the values set by `setInitial` into the tree, in O(count).
    mutating func buildFromInitial() {
        let t = tree
        let size = t.count
        var j = 1
        while j < size {
            let parent = j + (j & -j)
            if parent < size { t[parent] &+= t[j] }
            j += 1
        }
    }

    /// The sum of positions `0 ..< position`.
    @inline(__always)
    func prefix(_ position: Int) -> Int {
        let t = tree
        var sum: Int32 = 0
        var j = position
        while j > 0 {
            sum &+= t[j]
            j &= j - 1
        }
        return Int(sum)
    }

    @inline(__always)
    mutating func add(_ position: Int, _ delta: Int32) {
        let t = tree
        let size = t.count
        var j = position + 1
        while j < size {
            t[j] &+= delta
            j += j & -j
        }
    }
}

/// A sequence of element numbers with insert, remove and lookup by position in
/// O(chunks / 32 + 32 + chunk size): chunks of at most `chunkMax`, with a running count per 32
/// chunks. Each side's replay (`ListSequenceMerge.replay`) names elements through it.
///
/// The chunks live in one buffer (`slab`), `stride` slots per chunk ID, so a reset reuses the
/// memory of the last one: with an array per chunk, every reset allocated each chunk again
/// (a list merge resets its sequences once per row; most of its allocations came from here).
/// A reset sizes every buffer for the inserts to come (`reset(_:inserts:)`: a split needs 64
/// inserts into its chunk since the chunk was made), so an insert or remove writes them
/// through raw pointers (`ScratchBuffer`), without an array's uniqueness check per write. A
/// sequence kept across runs (`ListReplayCache`) outgrows that estimate: a split then makes
/// room for more chunks first.
///
/// It could also find an element's position (a map from elements to chunks), for the grid's
/// last column; `ListSequenceMerge` reads that column from the touched elements' weights
/// instead, so the map is gone.
struct PathSequence: Sendable {
    static let chunkMax = 128
    /// Slots per chunk: room for the insert that makes a chunk split.
    private static let stride = chunkMax + 1
    private static let groupWidth = 32

    private(set) var count = 0
    /// Chunk ID `id` holds its elements at `slab[id * stride ..< id * stride + size]`, where
    /// size is its `chunkCounts` entry; `order` lists the IDs in sequence order. Slots past a
    /// chunk's size are never read.
    private var slabStore = ScratchBuffer<Int32>()
    private var orderStore = ScratchBuffer<Int32>()
    /// `chunkCounts[c]`: the size of the chunk at sequence position c.
    private var chunkCountStore = ScratchBuffer<Int32>()
    /// `groupCounts[g]`: the sum of `chunkCounts[32 g ..< 32 g + 32]`.
    private var groupCountStore = ScratchBuffer<Int32>()
    /// Chunks made so far (IDs `0 ..< chunkCount`), and the room for them.
    private var chunkCount = 0
    private var chunkCapacity = 0

    private var slab: UnsafeMutableBufferPointer<Int32> { slabStore.buffer }
    private var order: UnsafeMutableBufferPointer<Int32> { orderStore.buffer }
    private var chunkCounts: UnsafeMutableBufferPointer<Int32> { chunkCountStore.buffer }
    private var groupCounts: UnsafeMutableBufferPointer<Int32> { groupCountStore.buffer }

    /// Holds `elements` in order, with room for up to `inserts` inserts.
    mutating func reset(_ elements: Range<Int32>, inserts: Int) {
        // Chunks start half full, so inserts split them rarely. A split takes a chunk of
        // `chunkMax + 1` to two of at least `half`, and only inserts fill a chunk: at most
        // one split per `half` inserts.
        let half = Self.chunkMax / 2
        let initialChunks = Swift.max(1, (elements.count + half - 1) / half)
        chunkCapacity = initialChunks + inserts / half + 1
        slabStore.reset(count: chunkCapacity * Self.stride, repeating: 0)
        orderStore.reset(count: chunkCapacity, repeating: 0)
        chunkCountStore.reset(count: chunkCapacity, repeating: 0)
        groupCountStore.reset(count: chunkCapacity / Self.groupWidth + 1, repeating: 0)
        let (slab, order, chunkCounts) = (slab, order, chunkCounts)
        chunkCount = initialChunks
        var element = elements.lowerBound
        for chunk in 0..<initialChunks {
            let filled = Swift.min(half, Int(elements.upperBound - element))
            for offset in 0..<filled {
                slab[chunk * Self.stride + offset] = element
                element += 1
            }
            order[chunk] = Int32(chunk)
            chunkCounts[chunk] = Int32(filled)
        }
        count = elements.count
        rebuildCounts()
    }

    private func rebuildCounts() {
        let (chunkCounts, groupCounts) = (chunkCounts, groupCounts)
        var group = 0
        var start = 0
        while start < chunkCount {
            var sum: Int32 = 0
            for c in start..<min(start + Self.groupWidth, chunkCount) {
                sum += chunkCounts[c]
            }
            groupCounts[group] = sum
            group += 1
            start += Self.groupWidth
        }
    }

    /// The sequence position of the chunk holding position `index` (`0 ... count`; `count`
    /// is the end of the last chunk), and the offset within it.
    @inline(__always)
    private func locate(_ index: Int) -> (position: Int, offset: Int) {
        let (groups, chunks) = (groupCounts, chunkCounts)
        var remaining = Int32(truncatingIfNeeded: index)
        var group = 0
        let lastGroup = (chunkCount - 1) / Self.groupWidth
        while group < lastGroup && remaining >= groups[group] {
            remaining &-= groups[group]
            group &+= 1
        }
        var position = group &* Self.groupWidth
        let lastPosition = min(position &+ Self.groupWidth, chunkCount) &- 1
        while position < lastPosition && remaining >= chunks[position] {
            remaining &-= chunks[position]
            position &+= 1
        }
        return (position, Int(remaining))
    }

    func element(at index: Int) -> Int32 {
        precondition(index >= 0 && index < count, "index out of range")
        let (position, offset) = locate(index)
        return slab[Int(order[position]) * Self.stride + offset]
    }

    mutating func insert(_ element: Int32, at index: Int) {
        precondition(index >= 0 && index <= count, "index out of range")
        let (position, offset) = locate(index)
        insert(element, position: position, offset: offset)
    }

    /// Inserts `element` at `index` (above 0) and returns the element it follows: one lookup
    /// instead of `element(at: index - 1)` and then `insert(_:at:)`.
    mutating func insert(_ element: Int32, returningLeftAt index: Int) -> Int32 {
        precondition(index > 0 && index <= count, "index out of range")
        let (position, offset) = locate(index)
        // At a chunk's start the left neighbour ends an earlier chunk (perhaps not the one
        // just before: removes can empty a chunk).
        let left = offset > 0 ? slab[Int(order[position]) * Self.stride + offset - 1]
            : self.element(at: index - 1)
        insert(element, position: position, offset: offset)
        return left
    }

    /// Inserts `element` at `offset` of the chunk at sequence position `position`.
    private mutating func insert(_ element: Int32, position: Int, offset: Int) {
        let (slab, order, chunkCounts) = (slab, order, chunkCounts)
        let id = Int(order[position])
        let size = Int(chunkCounts[position])
        let first = id * Self.stride
        let chunk = slab.baseAddress! + first
        (chunk + offset + 1).update(from: chunk + offset, count: size - offset)
        chunk[offset] = element
        chunkCounts[position] = Int32(size + 1)
        groupCounts[position / Self.groupWidth] += 1
        count += 1
        if size + 1 > Self.chunkMax { split(position) }
    }

    /// Splits the full chunk at sequence position `position`: its upper half moves to a new
    /// chunk, placed right after it. Makes room for more chunks first if the reset's estimate
    /// ran out (only a sequence kept across resets, `ListReplayCache`, outgrows it).
    private mutating func split(_ position: Int) {
        if chunkCount == chunkCapacity { growChunks() }
        let (slab, order, chunkCounts) = (slab, order, chunkCounts)
        let full = Int(chunkCounts[position])
        let chunk = slab.baseAddress! + Int(order[position]) * Self.stride
        let half = full / 2
        let tailCount = full - half
        let newID = chunkCount
        (slab.baseAddress! + newID * Self.stride).update(from: chunk + half, count: tailCount)
        let moved = chunkCount - position - 1
        (order.baseAddress! + position + 2).update(
            from: order.baseAddress! + position + 1, count: moved)
        (chunkCounts.baseAddress! + position + 2).update(
            from: chunkCounts.baseAddress! + position + 1, count: moved)
        order[position + 1] = Int32(newID)
        chunkCounts[position] = Int32(half)
        chunkCounts[position + 1] = Int32(tailCount)
        chunkCount += 1
        rebuildCounts()
    }

    /// Makes room for a quarter more chunks, keeping the sequence (a kept sequence grows by an
    /// upload's edits at a time: doubling left up to half of its memory unused).
    private mutating func growChunks() {
        let capacity = chunkCapacity + Swift.max(chunkCapacity / 4, 8)
        slabStore.grow(to: capacity * Self.stride, keeping: chunkCount * Self.stride,
                       repeating: 0)
        orderStore.grow(to: capacity, keeping: chunkCount, repeating: 0)
        chunkCountStore.grow(to: capacity, keeping: chunkCount, repeating: 0)
        groupCountStore.grow(to: capacity / Self.groupWidth + 1,
                             keeping: groupCountStore.count, repeating: 0)
        chunkCapacity = capacity
    }

    mutating func remove(at index: Int) -> Int32 {
        precondition(index >= 0 && index < count, "index out of range")
        let (position, offset) = locate(index)
        let chunkCounts = chunkCounts
        let size = Int(chunkCounts[position])
        let chunk = slab.baseAddress! + Int(order[position]) * Self.stride
        let removed = chunk[offset]
        (chunk + offset).update(from: chunk + offset + 1, count: size - offset - 1)
        chunkCounts[position] = Int32(size - 1)
        groupCounts[position / Self.groupWidth] -= 1
        count -= 1
        return removed
    }
}
