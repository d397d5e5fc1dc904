//! The operational transform: merging concurrent changesets (REALM-SEMANTICS §2).
//!
//! ## Model
//!
//! Two sequences of changesets were made concurrently on the same state S: `local` (this
//! peer's, in their current reciprocal form) and `incoming` (a remote peer's). The merge
//! rewrites both so that `S · local · incoming′` equals `S · incoming · local′`. It walks the
//! usual OT grid, as the reference's `merge_changesets` does: each local instruction, in order,
//! meets each incoming instruction of its conflict group, in order, and the pairwise rule
//! (`Transformer.mergePair`) may discard either side or shift list indices on both. Because an
//! instruction is rewritten by every instruction it passes, each pair is compared in the state
//! both were rebased to, and TP1 for every pair gives convergence for the whole grid.
//!
//! ## Discriminant
//!
//! `(originTimestamp, originFileIdent)` of the changeset, with file ident 0 replaced by the
//! local file ident; the larger pair wins. Equal discriminants on the two sides cannot occur in
//! a well-formed system (file idents differ); if they do, the incoming side wins (documented
//! difference: the reference's outcome is then unspecified).
//!
//! ## Conflict groups (§2.4)
//!
//! Every distinct object of the merge window gets a dense node number (a hand-written
//! open-addressing table keyed by the fixed `stableHash(ObjectRef)`, no `Dictionary`). A link
//! payload (Update, ArrayInsert, ArrayUpdate or SetInsert of a link) unions the source and the
//! target object (union-find with path halving, by size). The incoming side is then bucketed by
//! group root (a counting sort, so positions stay in order). A local object instruction meets
//! only its group's incoming instructions plus the incoming schema instructions; a local schema
//! instruction meets everything. An `EraseColumn` anywhere in the window turns the merge into
//! all pairs, as in the reference. Cost: O((D + L) · α) to scan and index, plus Σ over groups of
//! D_g · L_g pairwise checks, each a few integer compares on a struct-of-arrays arena.
//!
//! One departure in *how*, not *what*: the incoming side is scanned first, and a local
//! instruction whose object (and link target) the incoming side never touches is skipped
//! without entering the arena, unless the incoming side erases a column. Such an instruction
//! could only meet incoming instructions on other objects, where every rule is a no-op, so the
//! result is identical; a server merging a short upload against a long history then pays one
//! hash and one probe of a small, cache-resident table per history instruction. The same
//! filter works at field granularity (`TouchedFields`): a local field instruction on a field
//! the incoming side does not touch, of an object it does not erase, can only meet no-op rules
//! and is skipped too. With 100 clients each uploading 10^4 map updates, three quarters of the
//! history no longer enters the arena. The filter costs a bit set per incoming instruction in
//! an 8-byte mask per object (a hash insert for a field ID of 61 or more), so it is built only
//! when the local side is at least twice the incoming one.
//!
//! ## A server's history
//!
//! A server merges each upload against the history entries the client had not seen: a long
//! local side that every upload reads again. Two things keep that read cheap.
//! `merge(incoming:local:localEdits:localFileIdent:)` leaves the history as it is and reports
//! its reciprocal form as `LocalEdits` (one entry per discarded or rewritten instruction, and
//! one range per changeset for a typed run that passed the upload clear:
//! `Transform+ListShifts.swift`), so a merge that makes a history instruction lose costs that
//! entry, not a copy of its changeset; the server applies the edits only if the client uploads
//! again before it has downloaded. And that merge gives each incoming changeset a scan column
//! (`ScanEntry`, 24 bytes per instruction: table, integer key, field, kind, default flag),
//! which travels with the changeset into the history: a later scan decides each of the
//! changeset's instructions from the column in one branch-free pass (`scanHistory`, in
//! `Transform+HistoryScan.swift`) and fills the arena slot of a relevant Update, AddInteger,
//! CreateObject, EraseObject, Clear or set instruction from it without reading the 72-byte
//! instruction. Instructions with a link payload or a non-integer key, and list instructions'
//! indices the column does not cache, are still read from the instruction itself. The columns
//! of consecutive changesets sit one after another in 64 KiB chunks, and a changeset holds its
//! column's address and count (`ScanColumn`), so the scan streams the history without touching
//! any other memory per changeset. The column is a cache: `Changeset` equality ignores it and
//! any change to `instructions` drops it.
//!
//! The incoming side is read once: each instruction's `ScanEntry` gives its node, its
//! relevance-filter bits and (for kinds without list indices) its arena slot, and a server
//! merge cuts the scan columns it hands back from those entries. And the tight loops
//! (`mergeUpdateRun`, `mergeListRun`) filter a group's minors from 16-byte records laid out in
//! group order (`TransformArena.groupMinors`: node, field, rank, kind, flags), not from five
//! arena columns at scattered slots. Groups below the field-run threshold are packed while
//! they are bucketed (unless the local side is small); others the first time a tight loop
//! walks them. `discard` keeps a packed record's alive bit equal to the arena's.
//!
//! Dense integer keys skip the hash table: once the incoming side is scanned, the table of
//! the first incoming object gets a direct map over its integer keys near that object's key
//! (`ObjectNodeTable.dense`, exact for every key in its window, updated by every insert),
//! and its keys beyond the window a bitmap whose clear bit proves "no node"
//! (`denseOutside`). A history instruction on such a key is classified with one 4-byte load.
//! A merge holds its two sides as they are (`MergeSides`): the history array is shared, not
//! copied changeset by changeset.
//!
//! ## Cost in practice
//!
//! The grid is exact, so its cost is the reference's: Σ D_g · L_g pair checks. Map workloads
//! have small groups and cost about (D + L) scan work. A contested list (every client editing
//! the same few lists) would cost the product of the edits per list, as in the reference. Three
//! paths keep the result the grid's, bit for bit, and avoid most of it:
//! - A list group of inserts and erases alone, with enough pairs per element
//!   (`ListSequenceSettings`) and no blocks, is merged from element identities before the
//!   walk (`ListSequenceMerge`, `Transform+ListSequence.swift`): about (S + D_g + L_g) · log
//!   plus small regions, instead of D_g · L_g (a list edited at random positions by 10
//!   clients, 10^6 edits: 285.8 s of merge by the grid, about 1 s this way). The smaller side is
//!   the one linked first, the other placed among it row by row: the grid is symmetric.
//! - Edits that come in runs (a typing cursor): a list group of at least 64 incoming
//!   instructions is cut into blocks, and a local list instruction passes a whole block in
//!   O(1) when the block's summary proves that every minor in it lies above it or below it
//!   (`Transform+ListBlocks.swift`); a run of local edits passes all of a group's blocks at
//!   once when it lies clear of the regions they edit (`Transform+ListRegions.swift`), and
//!   the majors of a run that meets a block at the same place meet a copy of it one by one
//!   (`Transform+ListCells.swift`).
//! - Otherwise a tight loop over raw buffers (`TransformArena.mergeListRun`) keeps
//!   ArrayInsert/ArrayErase pairs at a few nanoseconds each, and consecutive local edits on
//!   such lists are swept in one pass (`TransformArena.sweepListMajors`), so a merge of many
//!   small uploads does not pay a dispatch per edit.
//! A server integrating uploads that all start from one old base scans the whole window for
//! each upload, so its cost grows with the window, not with the upload (24 bytes and one probe
//! or one dense-map load per history instruction with scan columns).
//!
//! Hot objects of field updates do not pay the product. In a group with at least
//! `fieldRunsGroupCountMin` incoming instructions (and no incoming schema instruction), a
//! local Update, AddInteger or CreateObject walks only per-(object, field) chains of the
//! incoming instructions it can interact with (Updates and AddIntegers on its field,
//! EraseObjects of its object), in incoming order, with the same rules; every instruction it
//! skips is one the grid finds a no-op (`Transform+FieldRuns.swift`). Dead incoming
//! instructions are unlinked when met, so a field of Updates costs O(D_g + L_g): an incoming
//! Update dies at the first local Update that beats it and a local Update stops at the first
//! incoming one that beats it. Lists, sets, Clear and EraseObject majors keep the grid walk.
//!
//! Small groups do not pay a dispatch per local instruction either: consecutive local
//! Updates, CreateObjects and EraseObjects whose groups are packed and below the field-run
//! threshold are merged in one sweep over raw views, with the same checks and rules as the
//! walk (`Transform+UpdateSweep.swift`): the common case of a server merging map edits
//! against its history.
//!
//! ## Rules (same object and field unless noted)
//!
//! - AddTable vs AddTable, AddColumn vs AddColumn: identical → both discarded; different →
//!   `MergeError.schemaMismatch`. EraseColumn vs AddColumn: AddColumn discarded. EraseColumn vs
//!   EraseColumn: both discarded. EraseColumn vs any field instruction on that column: the field
//!   instruction is discarded.
//! - CreateObject vs CreateObject: both kept. EraseObject vs CreateObject: Create discarded.
//!   EraseObject vs EraseObject: the lower discarded. EraseObject vs any field instruction on the
//!   object: the field instruction is discarded, whatever the timestamps.
//! - Update vs Update: equal `isDefault` → the lower discarded; otherwise the default write is
//!   discarded. AddInteger vs Update: if the Update is later and not a default write, AddInteger
//!   is discarded; otherwise an Int update absorbs the increment (wrapping) and both are kept, a
//!   Null update keeps both, any other value discards the AddInteger. AddInteger vs AddInteger:
//!   both kept.
//! - Clear vs any element instruction of that list or set: the element instruction is
//!   discarded. Clear vs Clear: the lower discarded.
//! - Lists: `priorSize` must be equal on both sides (else `MergeError.priorSizeMismatch`).
//!   Insert/Insert shift, equal index → the lower discriminant ends up first. Erase/Erase at one
//!   index: both discarded. Erase vs Insert: insert at or below the erase index shifts the erase
//!   up, else the insert shifts down. Erase vs ArrayUpdate at the same index: the update is
//!   discarded. Insert or Erase vs ArrayUpdate: the update's index shifts. ArrayUpdate vs
//!   ArrayUpdate at one index: the lower discarded. ArrayMove vs ArrayUpdate: the update follows
//!   the element. ArrayMove vs ArrayErase of the moved element: the move is discarded and the
//!   erase redirected to the destination. ArrayMove vs Insert/Erase: both shift; an insert that
//!   lands exactly at the move's destination is ordered by discriminant (the lower first).
//!   ArrayMove vs ArrayMove of the same element: the higher wins and is rebased to start where
//!   the lower put the element. A move that ends with from == to is discarded.
//! - Sets: SetInsert/SetInsert, SetErase/SetInsert, SetErase/SetErase of the same value: the
//!   lower discarded; different values: both kept.
//!
//! ## Deliberate differences from the reference
//!
//! - ArrayMove vs ArrayMove of *different* elements: instead of the reference's case analysis,
//!   both moved elements are placed by their destination "gap" among the elements neither move
//!   touches; equal gaps are ordered by discriminant (the lower first). This satisfies TP1 for
//!   every pair of moves (checked exhaustively by the tests); the reference's corner cases may
//!   pick a different, equally convergent, order.
//! - Links to an erased object stay stored (list indices count them), and read as null or are
//!   hidden, as in the reference; list indices therefore address the stored list including such
//!   links, where the reference uses the virtual (tombstone-free) index.
//! - Embedded objects, dictionaries, Mixed collections and EraseTable are not modelled, so their
//!   rules (nested Update, ObjectValue, EraseTable) are absent.
//! - Index-based list OT, like the reference's, is first-order convergent (TP1) but not
//!   second-order (TP2): three clients racing inserts and erases at adjacent list positions can
//!   give different server states for different upload orders (the classic "TP2 puzzle"). The
//!   client–server protocol only needs TP1 (every client converges to the server's state).
//!   On base [10, 20], client A inserts 1 before 20, B erases 20, C inserts 2 after 20, C's
//!   changeset the lower: with B's erase integrated first, 1 and 2 meet at one index and the
//!   lower goes first ([10, 2, 1]); with it last, they met a position apart ([10, 1, 2]).
//!   `PermutationTests` checks that this is all the upload order changes: list order alone,
//!   the same with every fast path off, and with only inserts and erases, only the order of
//!   two clients' concurrent inserts.

internal import CPrefetch

/// The two sides of one merge, addressed as one sequence of changesets, local first (the
/// arena's changeset numbers). Accessors project into the side arrays, so reading a field of a
/// changeset does not copy (or retain) the rest of it.
struct MergeSides: Sendable {
    var local: ContiguousArray<Changeset> = []
    var incoming: ContiguousArray<Changeset> = []

    var count: Int { local.count + incoming.count }

    // Plain functions, not a `_read`/`_modify` subscript: a yield-once accessor the optimiser
    // does not inline allocates its coroutine frame on the heap, and this one was called per
    // changeset and per instruction read back: 8 of the 11 allocations a 100-instruction
    // upload cost (`syncsim bench merge`, allocations per instruction 0.109 → 0.021).

    /// The instructions of changeset `index` (local first, then incoming).
    @inline(__always)
    func instructions(_ index: Int) -> ContiguousArray<Instruction> {
        index < local.count ? local[index].instructions : incoming[index - local.count].instructions
    }

    /// The scan column of changeset `index`, if it has one.
    @inline(__always)
    func scanColumn(_ index: Int) -> ScanColumn? {
        index < local.count ? local[index].scanColumn : incoming[index - local.count].scanColumn
    }

    /// Instruction `position` of changeset `index`.
    @inline(__always)
    func instruction(_ index: Int, at position: Int) -> Instruction {
        index < local.count
            ? local[index].instructions[position]
            : incoming[index - local.count].instructions[position]
    }

    /// Runs `body` on changeset `index` in place (a non-escaping closure: no allocation).
    @inline(__always)
    mutating func modify<Result>(_ index: Int, _ body: (inout Changeset) -> Result) -> Result {
        index < local.count
            ? body(&local[index])
            : body(&incoming[index - local.count])
    }

    /// Empties both sides (the arrays are the callers' again).
    mutating func removeAll() {
        local = []
        incoming = []
    }
}

/// Where a transformer's merges spent their time, by the host's `Transformer.phaseClock`.
public struct MergePhaseTimes: Sendable, Hashable {
    /// Reading both sides: object nodes, the relevance filter and the arena.
    public var scanNs: UInt64 = 0
    /// Discriminant ranks and the incoming side's group buckets.
    public var indexNs: UInt64 = 0
    /// The pairwise rules (grid walk, field runs, list and update runs).
    public var walkNs: UInt64 = 0
    /// Rewriting the changesets that changed.
    public var writeBackNs: UInt64 = 0

    public init() {}
}

/// Merges concurrent changesets. Holds reusable buffers: keep one per peer and reuse it, so
/// that a merge allocates little once the buffers have grown to the workload's size (a client
/// merge of more than `incomingEntriesKeptMax` incoming instructions gives their scan entries
/// back, and the write-back allocates the changesets it rewrites).
public struct Transformer: Sendable {
    /// The struct-of-arrays arena: local instructions at `0 ..< localCount`, incoming ones after.
    var arena = TransformArena()
    var nodes = ObjectNodeTable()
    /// Whether group root r's packed records are filled (`packGroup`).
    var groupPacked: ContiguousArray<Bool> = []
    /// Whether `arena.groupMinors` and `arena.groupCursor` are sized for this merge.
    var groupMinorsReady = false
    /// Incoming positions bucketed by group root (counting sort; positions ascending).
    var groupStart: ContiguousArray<Int32> = []
    var groupPositions: ContiguousArray<Int32> = []
    /// The node of each incoming instruction, computed before the local scan.
    var incomingNodes: ContiguousArray<Int32> = []
    /// The scan entry of each incoming instruction (all incoming changesets in order): the
    /// arena slots are filled from it, and the server merge's scan columns are cut from it.
    var incomingEntries: ContiguousArray<ScanEntry> = []
    /// Above this many incoming entries, the rewriting merge frees them after the scan (24
    /// bytes per instruction it no longer needs), at the price of one allocation next time.
    static let incomingEntriesKeptMax = 1 << 16
    /// Per incoming changeset, how its arena slots are filled: `fillsFromEntries` (from the
    /// entries alone), `fillsFromEntriesAndIndices` (the entries, then the list slots' indices
    /// from the instructions), or `fillsOneByOne` (a general entry: from each instruction).
    var incomingFill: ContiguousArray<UInt8> = []
    static let fillsFromEntries: UInt8 = 0
    static let fillsFromEntriesAndIndices: UInt8 = 1
    static let fillsOneByOne: UInt8 = 2
    /// The first arena slot of each changeset's instructions.
    var changesetFirstSlot: ContiguousArray<Int> = []
    /// Whether each local changeset's slots hold all its instructions, in order: the slot
    /// `changesetFirstSlot + p` at position `p` (a uniform column appended whole, or kept
    /// with the history prefix). False where the scan may have left some out, and for
    /// incoming changesets. Lets `cutListShifts` place a piece without reading the slots'
    /// positions.
    var changesetSlotsWhole: ContiguousArray<Bool> = []
    var changesetModified: ContiguousArray<Bool> = []
    /// The discriminant rank of each changeset (see `rankChangesets`), and its scratch order.
    var changesetRank: ContiguousArray<UInt32> = []
    var rankOrder: ContiguousArray<Int32> = []
    /// The group root of each node, fixed once the scan is done.
    var nodeRoot: ContiguousArray<Int32> = []
    /// Incoming positions of schema instructions, ascending.
    var schemaPositions: ContiguousArray<Int32> = []
    /// Discriminants per changeset: local changesets first, then incoming ones.
    var discriminantTime: ContiguousArray<UInt64> = []
    var discriminantIdent: ContiguousArray<UInt64> = []
    /// The changesets being merged, held for the duration of a merge (local first).
    var changesets = MergeSides()
    var localChangesetCount = 0
    /// The fields and erased objects of the incoming side (local relevance filter).
    var touched = TouchedFields()
    /// Scratch of the local scan (`scanLocalBatch`).
    var localBatch = LocalScanBatch()
    /// The history changesets whose selections wait in `historySelected` (`scanHistory`).
    var historyRuns = ScratchBuffer<SelectedRun>()
    /// `scanHistory`'s choice in one changeset: `node << 32 | position` per kept instruction.
    var historySelected = ScratchBuffer<UInt64>()
    /// Per offset of the node table's dense map: the mask of that key's node, with
    /// `TouchedFields.knownBit`, or 0 (`scanHistory`).
    var historyKeyMasks = ScratchBuffer<UInt64>()
    /// Where the server merge's scan columns are made (`buildScanColumns`).
    var columnSlab = ScanColumnSlab()
    /// Off: local field instructions on touched objects enter the arena whatever their field
    /// (the differential tests' reference).
    var touchedFieldsFilterEnabled = true
    /// The filter is built only when the local side has at least this many times the incoming
    /// side's instructions: it costs a mask update per incoming instruction and saves work per
    /// local one (a server merging a short upload against a long history, not a client
    /// integrating a large download). The fast-path tests set 0.
    var touchedFieldsLocalRatioMin = 2
    /// Per-(object, field) chains for large conflict groups (`Transform+FieldRuns.swift`).
    var fieldRuns = FieldRunIndex()
    /// Off: every local instruction takes the pairwise walk (the differential tests' reference).
    var fieldRunsEnabled = true
    /// Off: every local list edit is dispatched on its own (`mergeWithGroup`), never swept
    /// (`TransformArena.sweepListMajors`); the differential tests' reference.
    var listSweepEnabled = true
    /// Off: every local Update, CreateObject and EraseObject is dispatched on its own
    /// (`mergeWithGroup`), never swept (`Transform+UpdateSweep.swift`); the differential
    /// tests' reference.
    var updateSweepEnabled = true
    /// Groups with fewer incoming instructions take the pairwise walk (cheaper when small).
    var fieldRunsGroupCountMin = 32
    /// Field runs are numbered per object (`FieldRunIndex.direct`) when no object's chained
    /// fields spread over more than this many field IDs; else through a hash table. Tests
    /// set 0 to take the hash table.
    var fieldRunsDirectSpanMax: UInt32 = 64
    /// How list groups are cut into blocks that the list loop can pass whole
    /// (`Transform+ListBlocks.swift`).
    var listBlockSettings = ListBlockSettings()
    /// Per group root: its blocks in `arena.listBlocks` as `lower ..< upper`; lower is -1
    /// before the group is cut, -2 when it walks every pair.
    var groupBlockLower: ContiguousArray<Int32> = []
    var groupBlockUpper: ContiguousArray<Int32> = []
    /// The regions of the list group whose local runs last passed all of its blocks at once
    /// (`Transform+ListRegions.swift`).
    var listRegions = ListRegions()
    /// The run `majorRun` cut last and its summary, until its first summary is taken
    /// (`summariseMajorRun`).
    var cutRunSummary: (slots: Range<Int>, summary: ListRunSummary)?
    /// The cut runs of the history changesets the scan appended whole, in slot order
    /// (`ColumnListRuns`), and the first one `cachedListRun` may still read.
    var historyListRuns: ContiguousArray<HistoryListRun> = []
    var historyListRunCursor = 0
    /// The history changesets whose arena slots and listed runs the next merge may keep
    /// (`HistoryPrefix.swift`).
    var historyPrefix = HistoryPrefix()
    /// Off: every merge enters its whole history into the arena afresh, never keeping the
    /// last merge's slots (`HistoryPrefix`); the differential tests' reference.
    var historyPrefixEnabled = true
    /// Arena slots kept from the merge before, over this transformer's merges (read by the
    /// tests, to know the path ran; never reset).
    var historyPrefixSlotsKept = 0
    /// Off: every run of local list edits is cut slot by slot (`listRunEnd`), never read from
    /// the history's cut runs (`ColumnListRuns`); the differential tests' reference.
    var historyListRunsEnabled = true
    /// How many runs `majorRun` took from the history's cut runs, over this transformer's
    /// merges (read by the tests, to know the path ran).
    var historyListRunsTaken = 0
    /// Scratch of `buildScanColumns`: an incoming changeset's runs, before its column copies
    /// them.
    var columnRunScratch: ContiguousArray<ColumnListRuns.Run> = []
    /// Whether a run that passes every region clear leaves its shift pending
    /// (`pendingListShifts`) instead of writing it to each slot: set per merge, for a merge
    /// that reports the local side as `LocalEdits`.
    var defersListShifts = false
    /// Local runs that passed every region clear, in slot order, with the shift each slot
    /// owes (`recordLocalEdits` reports them as `ListShift` ranges); consecutive runs with
    /// the same shifts are one entry.
    var pendingListShifts: ContiguousArray<PendingListShift> = []
    /// `walkTouchedRegions`' scratch: the run's slots as the walk found them.
    var touchingRunSlots: ContiguousArray<ListSlotValues> = []
    /// `recordLocalEdits`' scratch: the pending shifts cut at changeset boundaries.
    var listShiftPieces: ContiguousArray<ListShiftPiece> = []
    /// Statistics for tests (never reset): ranges reported, and pending shifts written to
    /// their slots after all (`cutListShifts`).
    var listShiftRangesReported = 0
    var listShiftsSettled = 0
    /// The roots that have blocks (settled before the write-back).
    var blockedGroups: ContiguousArray<Int32> = []
    /// Which list groups are merged from element identities (`Transform+ListSequence.swift`).
    var listSequenceSettings = ListSequenceSettings()
    var listSequence = ListSequenceMerge()
    /// Per group root: `sequenceNone`, `…Candidate`, `…Rejected` or `…Merged`.
    var sequencedGroup: ContiguousArray<UInt8> = []
    /// Per group root: its local slots in `sequenceLocalSlots[start[root] ..< start[root + 1]]`.
    var sequenceLocalStart: ContiguousArray<Int32> = []
    var sequenceCursor: ContiguousArray<Int32> = []
    var sequenceLocalSlots: ContiguousArray<Int32> = []
    /// How many list groups `mergeListSequences` merged (a statistic for tests; never reset).
    var listSequencesMerged = 0
    /// How many of those linked the incoming side first (`ListSequenceSettings.LinkedSide`).
    var listSequencesSwapped = 0

    /// A clock for `phaseTimes` (nanoseconds from any fixed origin, e.g. process CPU time);
    /// nil, the default, reads no clock. MergeCore itself never reads one: the host decides.
    public var phaseClock: (@Sendable () -> UInt64)?
    /// Time spent in each phase of the merges so far, by `phaseClock` (zero without one).
    public private(set) var phaseTimes = MergePhaseTimes()

    /// Creates a transformer with empty buffers.
    public init() {}

    /// Merges `incoming` (remote changesets, in order) with `local` (changesets made
    /// concurrently on the same state, in order, in their current reciprocal form).
    ///
    /// On return, applying `incoming` on top of state · local, and applying `local` on top of
    /// state · incoming, give the same state. Discarded instructions are removed; changesets
    /// are never removed (an emptied changeset keeps its metadata).
    ///
    /// - Parameters:
    ///   - incoming: the remote changesets; rewritten to apply after `local`.
    ///   - local: the local changesets; rewritten to their reciprocal forms, to apply after
    ///     `incoming`.
    ///   - localFileIdent: replaces `originFileIdent == 0` in discriminants; must not be 0
    ///     when any changeset has `originFileIdent == 0` (precondition).
    /// - Throws: `MergeError` when the two sides cannot be merged (schema mismatch, priorSize
    ///   disagreement). Both arguments are then left in an unspecified but valid state.
    /// - Complexity: O((D + L) · α(D + L)) plus Σ over conflict groups of D_g · L_g, for D
    ///   incoming and L local instructions; O(D · L) when an EraseColumn is in the window.
    ///   Field updates in large groups cost O(D_g + L_g) instead (Updates only) or the
    ///   instructions on their own field (with AddIntegers); lists stay D_g · L_g.
    public mutating func merge(
        incoming: inout ContiguousArray<Changeset>,
        local: inout ContiguousArray<Changeset>,
        localFileIdent: UInt64
    ) throws(MergeError) {
        // Move both sides in (no copy), and back out when done.
        swap(&changesets.local, &local)
        swap(&changesets.incoming, &incoming)
        localChangesetCount = changesets.local.count
        defer {
            swap(&changesets.local, &local)
            swap(&changesets.incoming, &incoming)
            changesets.removeAll()
        }
        var noEdits: LocalEdits?
        try mergeLoaded(localFileIdent: localFileIdent, localEdits: &noEdits)
    }

    /// Merges like `merge(incoming:local:localFileIdent:)`, but leaves `local` as it is and
    /// reports its reciprocal form as sparse edits (`LocalEdits`): for a peer whose local side
    /// is a long history shared with other readers (a server), where rewriting every changeset
    /// that lost an instruction would copy most of the history. `localEdits.apply(to:)` on
    /// `local` gives exactly the local changesets the other `merge` returns; `incoming` is
    /// rewritten the same way.
    ///
    /// - Parameters:
    ///   - incoming: the remote changesets; rewritten to apply after `local`.
    ///   - local: the local changesets, in their current reciprocal form; not modified.
    ///   - localEdits: replaced by the edits that turn `local` into its reciprocal form.
    ///   - localFileIdent: as for `merge(incoming:local:localFileIdent:)`.
    /// - Throws: `MergeError`, as the other `merge`; `incoming` and `localEdits` are then in an
    ///   unspecified but valid state.
    /// - Complexity: that of the other `merge`, with the local write-back O(edited
    ///   instructions) instead of O(instructions of the edited changesets).
    public mutating func merge(
        incoming: inout ContiguousArray<Changeset>,
        local: ContiguousArray<Changeset>,
        localEdits: inout LocalEdits,
        localFileIdent: UInt64
    ) throws(MergeError) {
        // Share the local side (one reference, no per-changeset copy: a history's changeset
        // buffers are cold); move the incoming side in and back out.
        changesets.local = local
        swap(&changesets.incoming, &incoming)
        localChangesetCount = local.count
        defer {
            swap(&changesets.incoming, &incoming)
            changesets.removeAll()
        }
        var edits: LocalEdits? = LocalEdits()
        swap(&edits!, &localEdits)
        defer { swap(&edits!, &localEdits) }
        edits!.removeAll()
        try mergeLoaded(localFileIdent: localFileIdent, localEdits: &edits)
    }

    /// Merges the loaded `changesets`; with `localEdits` non-nil the local side is reported
    /// there instead of being rewritten.
    private mutating func mergeLoaded(
        localFileIdent: UInt64, localEdits: inout LocalEdits?
    ) throws(MergeError) {
        let clock = phaseClock
        let scanStart = clock?() ?? 0
        let fallbackAllPairs = try scan(localFileIdent: localFileIdent)
        if localEdits == nil && incomingEntries.count > Self.incomingEntriesKeptMax {
            // Only the server merge cuts scan columns from the entries; a client integrating a
            // large download gives their memory back before the walk and the write-back, and
            // the nodes too (only the scan reads them).
            incomingEntries = []
            incomingNodes = []
        }
        let scanEnd = clock?() ?? 0
        phaseTimes.scanNs &+= scanEnd &- scanStart
        let localCount = arena.localCount
        let totalCount = arena.count
        if localCount == 0 || totalCount == localCount {
            if localEdits != nil {
                localEdits!.removeAll()
                buildScanColumns()
            }
            return
        }
        rankChangesets()
        buildIndex()
        let indexEnd = clock?() ?? 0
        phaseTimes.indexNs &+= indexEnd &- scanEnd
        fieldRuns.built = false
        // Runs of local list edits (typing) can pass list blocks together.
        let majorRunsPossible = listBlockSettings.enabled && schemaPositions.isEmpty
            && !fallbackAllPairs
        // Local list edits on groups that walk every pair go through one sweep
        // (`TransformArena.sweepListMajors`) until one needs anything else.
        let listSweepPossible = listSweepEnabled && schemaPositions.isEmpty && !fallbackAllPairs
        defersListShifts = localEdits != nil
        // Contested lists of inserts and erases, merged whole before the walk.
        let anySequenced = listSequenceSettings.enabled && schemaPositions.isEmpty
            && !fallbackAllPairs && mergeListSequences(keepsLocalReplays: localEdits != nil)
        // Local Updates, creates and erases of small groups, and Updates of large groups
        // that meet only their field's Updates, go through one sweep (`sweepUpdates`) until
        // one needs anything else.
        let updateSweepPossible = updateSweepEnabled && schemaPositions.isEmpty
            && !fallbackAllPairs && !anySequenced
        var major = 0
        while major < localCount {
            if arena.flags[major] & (TransformArena.alive | TransformArena.sequenced)
                != TransformArena.alive
            {
                major += 1
            } else if fallbackAllPairs || arena.node[major] < 0 {
                // A local schema instruction meets list minors only in no-op rules (an
                // EraseColumn makes the whole merge all-pairs, and then no group has list
                // blocks), so the shifts the blocks owe can stay pending.
                var minor = localCount
                while minor < totalCount {
                    if arena.isAlive(minor) { try mergePair(major, minor) }
                    if !arena.isAlive(major) { break }
                    minor += 1
                }
                major += 1
            } else {
                let kind = arena.kind[major]
                let isListEdit = kind == Kind.arrayInsert || kind == Kind.arrayErase
                let run = majorRunsPossible && isListEdit ? majorRun(from: major) : major..<major
                if !run.isEmpty {
                    try mergeMajorRun(run)
                    major = run.upperBound
                } else if listSweepPossible && isListEdit,
                    let next = try sweepListEdits(from: major)
                {
                    major = next
                } else if updateSweepPossible && sweepStarts(at: major, kind: kind),
                    let next = try sweepUpdates(from: major)
                {
                    major = next
                } else {
                    prefetchGroup(of: major + Self.prefetchDistance)
                    try mergeWithGroup(major)
                    major += 1
                }
            }
        }
        let walkEnd = clock?() ?? 0
        phaseTimes.walkNs &+= walkEnd &- indexEnd
        settleAllListBlocks()
        if localEdits != nil {
            cutListShifts()
            recordLocalEdits(&localEdits!)
            writeBack(changesetsFrom: localChangesetCount)
            buildScanColumns()
        } else {
            writeBack(changesetsFrom: 0)
        }
        phaseTimes.writeBackNs &+= (clock?() ?? 0) &- walkEnd
    }

    /// How many incoming instructions ahead the scan prefetches their node-table slots.
    static let probePrefetchDistance = 8

    /// How many majors ahead the walk prefetches a group's packed records.
    static let prefetchDistance = 3

    /// Asks for the first packed record of local `slot`'s group (`mergeWithGroup` reads it,
    /// or `packGroup` writes it), so the walk does not wait on that cache miss.
    @inline(__always)
    private func prefetchGroup(of slot: Int) {
        guard slot < arena.localCount, groupMinorsReady else { return }
        let node = arena.node[slot]
        if node < 0 { return }
        let start = Int(groupStart[Int(nodeRoot[Int(node)])])
        arena.groupMinors.withUnsafeBufferPointer { records in
            if start < records.count { syncsim_prefetch(records.baseAddress! + start) }
        }
    }

    /// Merges local object instruction `major` with its group's incoming instructions and the
    /// incoming schema instructions, in incoming order.
    @inline(__always)
    private mutating func mergeWithGroup(_ major: Int) throws(MergeError) {
        let root = Int(nodeRoot[Int(arena.node[major])])
        var groupIndex = Int(groupStart[root])
        let groupEnd = Int(groupStart[root + 1])
        var schemaIndex = 0
        let schemaEnd = schemaPositions.count
        let majorKind = arena.kind[major]
        let listFastPath = schemaEnd == 0
            && (majorKind == Kind.arrayInsert || majorKind == Kind.arrayErase)
        // Any other rule reads the minors as they are: settle the shifts the list loop owes.
        if !listFastPath && groupBlockLower[root] >= 0 { settleListBlocks(root) }
        if fieldRunsApply(kind: majorKind, groupCount: groupEnd - groupIndex) {
            try mergeWithFieldRuns(major)
            return
        }
        if schemaEnd == 0 && majorKind == Kind.update {
            // Runs of field instructions go through a tight loop (Update vs Update LWW).
            packGroup(root)
            try mergeUpdateMajor(major, from: groupIndex, to: groupEnd)
            return
        }
        if listFastPath {
            // ArrayInsert/ArrayErase minors on the major's list go through a tight loop, the
            // others through the generic rules.
            packGroup(root)
            let blocks = listBlocks(root)
            if !blocks.isEmpty && listBlockSettings.regions.enabled,
                try passListRegions(major..<(major + 1), root: root)
            {
                return
            }
            try mergeListMajor(major, from: groupIndex, to: groupEnd, blocks: blocks)
            return
        }
        while groupIndex < groupEnd || schemaIndex < schemaEnd {
            let minor: Int
            if schemaIndex < schemaEnd
                && (groupIndex >= groupEnd
                    || schemaPositions[schemaIndex] < groupPositions[groupIndex])
            {
                minor = Int(schemaPositions[schemaIndex])
                schemaIndex += 1
            } else {
                minor = Int(groupPositions[groupIndex])
                groupIndex += 1
            }
            if arena.isAlive(minor) {
                try mergePair(major, minor)
                if !arena.isAlive(major) { return }
            }
        }
    }

    // MARK: - Scan

    /// Fills the node table and the arena; returns whether an EraseColumn forces all pairs.
    ///
    /// Incoming instructions are scanned first, so that the node table holds exactly the
    /// objects the incoming side touches (and their link targets). Local instructions on
    /// other objects cannot meet any incoming instruction in a rule that does something, so
    /// unless the incoming side erases a column they are skipped without entering the arena:
    /// the scan of a long local history then costs one dense-map load, or one hash and one
    /// probe of a small table, per instruction.
    private mutating func scan(localFileIdent: UInt64) throws(MergeError) -> Bool {
        var instructionCount = 0
        var incomingCount = 0
        for index in changesets.incoming.indices {
            incomingCount += changesets.incoming[index].instructions.count
        }
        instructionCount = incomingCount
        // A history changeset's column count is in the changeset; its instruction buffer is
        // cold, and so is the header of any array it holds, which a copy of the changeset
        // would retain (one cache miss each): read in place, never copied.
        instructionCount += changesets.local.withUnsafeBufferPointer { locals in
            var count = 0
            for index in locals.indices {
                if let column = locals[index].scanColumn {
                    count += column.count
                } else {
                    count += locals[index].instructions.count
                }
            }
            return count
        }
        guard instructionCount <= 2 * MergeLimits.mergeInstructionsMax else {
            throw .tooManyInstructions(count: instructionCount)
        }
        discriminantTime.removeAll(keepingCapacity: true)
        discriminantIdent.removeAll(keepingCapacity: true)
        changesetFirstSlot.removeAll(keepingCapacity: true)
        changesetSlotsWhole.removeAll(keepingCapacity: true)
        historyListRunCursor = 0
        for side in [changesets.local, changesets.incoming] {
            for index in side.indices {
                let timestamp = side[index].originTimestamp
                let fileIdent = side[index].originFileIdent
                precondition(fileIdent != 0 || localFileIdent != 0,
                             "a local-origin changeset (originFileIdent 0) needs a localFileIdent")
                discriminantTime.append(timestamp)
                discriminantIdent.append(fileIdent == 0 ? localFileIdent : fileIdent)
                changesetFirstSlot.append(0)
            }
        }
        changesetSlotsWhole.append(
            contentsOf: repeatElement(false, count: changesetFirstSlot.count))
        // Incoming first: nodes, unions, and whether a column is erased.
        nodes.reset(capacity: incomingCount)
        incomingNodes.removeAll(keepingCapacity: true)
        incomingNodes.reserveCapacity(incomingCount)
        var incomingErasesColumn = false
        let filterFields = touchedFieldsFilterEnabled
            && instructionCount - incomingCount >= touchedFieldsLocalRatioMin * incomingCount
        // The incoming side creates at most two nodes per instruction (object, link target).
        if filterFields { touched.reset(nodesMax: 2 * incomingCount) }
        // Each incoming instruction is read once, into its scan entry (or taken from the
        // changeset's column); the node, the filter and the arena slot come from the entry.
        incomingEntries.removeAll(keepingCapacity: true)
        incomingEntries.reserveCapacity(incomingCount)
        incomingFill.removeAll(keepingCapacity: true)
        // The nodes are written in place into a local array (an append per instruction costs
        // a uniqueness check), out of `self` while the loop calls its methods.
        var nodesOut = ContiguousArray<Int32>()
        swap(&nodesOut, &incomingNodes)
        for changesetIndex in localChangesetCount..<changesets.count {
            let instructions = changesets.instructions(changesetIndex)
            let firstEntry = incomingEntries.count
            if let column = changesets.scanColumn(changesetIndex) {
                precondition(column.count == instructions.count, "scan column out of date")
                incomingEntries.append(contentsOf: column.entries)
            } else {
                incomingEntries.append(contentsOf: repeatElement(.general,
                                                                 count: instructions.count))
                incomingEntries.withUnsafeMutableBufferPointer { entries in
                    for position in instructions.indices {
                        entries[firstEntry + position] = ScanEntry(instructions, at: position)
                    }
                }
            }
            nodesOut.append(contentsOf: repeatElement(-1, count: instructions.count))
            var fill = Self.fillsFromEntries
            let entries = incomingEntries
            for position in instructions.indices {
                let entry = entries[firstEntry + position]
                // The table is too large for the cache when a download is long: ask for the
                // slot of the entry a few positions on while this one is probed.
                if position + Self.probePrefetchDistance < instructions.count {
                    let ahead = entries[firstEntry + position + Self.probePrefetchDistance]
                    if !ahead.isGeneral { nodes.prefetch(intKey: ahead.key, table: ahead.table) }
                }
                let node: Int32
                if !entry.isGeneral {
                    if !entry.fillsSlot { fill = max(fill, Self.fillsFromEntriesAndIndices) }
                    node = nodes.node(intKey: entry.key, table: entry.table)
                    if filterFields {
                        touched.record(node: node, field: entry.field,
                                       erases: entry.kind == Kind.eraseObject)
                    }
                } else {
                    fill = Self.fillsOneByOne
                    node = nodes.scanNode(in: instructions, at: position)
                    if node < 0 {
                        if case .eraseColumn = instructions[position] {
                            incomingErasesColumn = true
                        }
                    } else if filterFields {
                        var erases = false
                        if case .eraseObject = instructions[position] { erases = true }
                        touched.record(node: node, field: fieldOf(instructions, at: position),
                                       erases: erases)
                    }
                }
                nodesOut[firstEntry + position] = node
            }
            incomingFill.append(fill)
        }
        swap(&nodesOut, &incomingNodes)
        nodes.buildDenseIndex(lookups: instructionCount - incomingCount)
        var fallback = incomingErasesColumn
        if !incomingErasesColumn {
            try scanHistory(filterFields: filterFields, capacity: 2 * incomingCount,
                            fallback: &fallback)
        } else {
            arena.reset(capacity: 2 * incomingCount)
            historyListRuns.removeAll(keepingCapacity: true)
            historyPrefix.truncate(0)
            for changesetIndex in 0..<localChangesetCount {
                changesetFirstSlot[changesetIndex] = arena.count
                let instructions = changesets.instructions(changesetIndex)
                // An incoming EraseColumn makes every pair meet: every local instruction
                // enters.
                for position in instructions.indices {
                    try arena.append(instructions, changeset: changesetIndex,
                                     position: position,
                                     node: nodes.scanNode(in: instructions, at: position))
                }
            }
        }
        arena.localCount = arena.count
        var incomingIndex = 0
        for changesetIndex in localChangesetCount..<changesets.count {
            changesetFirstSlot[changesetIndex] = arena.count
            let instructions = changesets.instructions(changesetIndex)
            let fill = incomingFill[changesetIndex - localChangesetCount]
            if fill != Self.fillsOneByOne {
                let start = arena.count
                let indicesMissing = arena.appendEntries(
                    incomingEntries, nodes: incomingNodes, base: incomingIndex,
                    count: instructions.count, changeset: changesetIndex,
                    listIndicesFollow: fill == Self.fillsFromEntriesAndIndices)
                if indicesMissing {
                    try arena.fillListIndices(from: instructions, slots: start..<arena.count)
                }
                incomingIndex += instructions.count
                continue
            }
            for position in instructions.indices {
                let entry = incomingEntries[incomingIndex]
                if !entry.isGeneral && entry.fillsSlot {
                    arena.append(entry, changeset: changesetIndex, position: position,
                                 node: incomingNodes[incomingIndex])
                } else {
                    try arena.append(instructions, changeset: changesetIndex, position: position,
                                     node: incomingNodes[incomingIndex])
                }
                incomingIndex += 1
            }
        }
        precondition(incomingIndex == incomingCount, "scan lost incoming instructions")
        precondition(arena.count - arena.localCount == incomingCount, "arena lost instructions")
        return fallback
    }

    /// Scans one local changeset when the incoming side erases no column and the changeset
    /// has an entry the history scan does not decide (`ScanEntry.isGeneral`): integer-keyed
    /// instructions without links are classified in a batch (`ObjectNodeTable.classify`), the
    /// rest one by one through `relevantNode`. If that gives an object its first node (a
    /// local link into a touched object), the batch's later answers may be stale, so the rest
    /// of the changeset is classified one by one. The changeset's `count` scan entries are in
    /// `localBatch.entries` (`scanHistory` puts them there); its instruction buffer is touched
    /// only for the instructions an entry cannot fill a slot from.
    mutating func scanLocalBatch(
        changeset changesetIndex: Int, count: Int, filterFields: Bool, fallback: inout Bool
    ) throws(MergeError) {
        nodes.classify(localBatch.entries, count: count, into: &localBatch.node)
        let entries = localBatch.entries
        var batchValid = true
        for position in 0..<count {
            let batchNode = batchValid ? localBatch.node[position] : LocalScanBatch.general
            let node: Int32
            if batchNode >= 0 {
                let entry = entries[position]
                if filterFields && !touched.interacts(node: batchNode, field: entry.field) {
                    continue
                }
                if entry.fillsSlot {
                    arena.append(entry, changeset: changesetIndex, position: position,
                                 node: batchNode)
                    continue
                }
                node = batchNode
            } else if batchNode == LocalScanBatch.untouched {
                continue
            } else {
                let instructions = changesets.local[changesetIndex].instructions
                let knownNodes = nodes.count
                let relevant = nodes.relevantNode(in: instructions, at: position)
                if nodes.count != knownNodes { batchValid = false }
                guard let relevant, relevant < 0 || !filterFields
                        || touched.interacts(node: relevant,
                                             field: fieldOf(instructions, at: position))
                else {
                    continue
                }
                node = relevant
                if case .eraseColumn = instructions[position] { fallback = true }
            }
            try arena.append(changesets.local[changesetIndex].instructions,
                             changeset: changesetIndex, position: position, node: node)
        }
    }

    /// Buckets incoming object instructions by group root (stable counting sort).
    private mutating func buildIndex() {
        let nodeCount = nodes.count
        // The per-node arrays are sized first and written through raw views (an append per
        // node checked the array's uniqueness: a third of this function's instructions).
        var rootsOut = ContiguousArray<Int32>()  // out of `self` while `find` runs
        swap(&rootsOut, &nodeRoot)
        rootsOut.removeAll(keepingCapacity: true)
        rootsOut.append(contentsOf: repeatElement(-1, count: nodeCount))
        rootsOut.withUnsafeMutableBufferPointer { roots in
            for node in 0..<nodeCount { roots[node] = self.nodes.find(Int32(node)) }
        }
        swap(&rootsOut, &nodeRoot)
        groupStart.removeAll(keepingCapacity: true)
        groupStart.append(contentsOf: repeatElement(0, count: nodeCount + 1))
        schemaPositions.removeAll(keepingCapacity: true)
        let localCount = arena.localCount
        // Counted through raw views: element by element through `self`, each increment
        // checked the array's uniqueness (a call per incoming instruction).
        let (slotNodes, nodeRoots) = (arena.node, nodeRoot)
        var anySchema = false
        groupStart.withUnsafeMutableBufferPointer { starts in
            slotNodes.withUnsafeBufferPointer { nodes in
                nodeRoots.withUnsafeBufferPointer { roots in
                    for position in localCount..<nodes.count {
                        let node = nodes[position]
                        if node < 0 {
                            anySchema = true
                        } else {
                            starts[Int(roots[Int(node)]) + 1] += 1
                        }
                    }
                }
            }
            for root in 0..<nodeCount { starts[root + 1] += starts[root] }
        }
        if anySchema {
            for position in localCount..<arena.count where arena.node[position] < 0 {
                schemaPositions.append(Int32(position))
            }
        }
        let objectCount = Int(groupStart[nodeCount])
        groupPositions.removeAll(keepingCapacity: true)
        groupPositions.append(contentsOf: repeatElement(0, count: objectCount))
        // Unless the local side is small (under an eighth of the incoming one: few majors
        // will walk), groups below the field-run threshold are packed now, in this pass over
        // the incoming slots (their Update majors take `mergeUpdateRun`). Otherwise, and for
        // larger groups, a group is packed when a tight loop first walks it (`packGroup`).
        // No tight loop runs when incoming schema instructions exist.
        groupMinorsReady = false
        let packNow = schemaPositions.isEmpty && 8 * localCount >= arena.count - localCount
        groupPacked.removeAll(keepingCapacity: true)
        groupPacked.append(contentsOf: repeatElement(false, count: nodeCount))
        var anyPackedNow = false
        if packNow {
            let (starts, runsEnabled, runMin) = (groupStart, fieldRunsEnabled,
                                                 fieldRunsGroupCountMin)
            groupPacked.withUnsafeMutableBufferPointer { packedByRoot in
                starts.withUnsafeBufferPointer { starts in
                    for root in 0..<nodeCount {
                        let count = Int(starts[root + 1] - starts[root])
                        let packed = !runsEnabled || count < runMin
                        packedByRoot[root] = packed
                        anyPackedNow = anyPackedNow || packed
                    }
                }
            }
        }
        groupBlockLower.removeAll(keepingCapacity: true)
        groupBlockLower.append(contentsOf: repeatElement(-1, count: nodeCount))
        groupBlockUpper.removeAll(keepingCapacity: true)
        groupBlockUpper.append(contentsOf: repeatElement(-1, count: nodeCount))
        blockedGroups.removeAll(keepingCapacity: true)
        arena.listBlocks.removeAll(keepingCapacity: true)
        listRegions.reset()
        cutRunSummary = nil
        pendingListShifts.removeAll(keepingCapacity: true)
        if anyPackedNow { prepareGroupMinors() }
        // Fill using a cursor per root; groupStart[root] is advanced and restored afterwards.
        // Raw buffers: this pass touches every incoming slot, five writes each when packed.
        let (nodes, fields, kinds, owners) = (arena.node, arena.field, arena.kind, arena.changeset)
        let (roots, packNowByRoot, ranks) = (nodeRoot, groupPacked, changesetRank)
        let totalCount = arena.count
        arena.flags.withUnsafeMutableBufferPointer { flags in
            arena.groupMinors.withUnsafeMutableBufferPointer { minors in
                arena.groupCursor.withUnsafeMutableBufferPointer { cursors in
                    groupPositions.withUnsafeMutableBufferPointer { positions in
                        groupStart.withUnsafeMutableBufferPointer { starts in
                            for position in localCount..<totalCount {
                                let node = nodes[position]
                                if node < 0 { continue }
                                let root = Int(roots[Int(node)])
                                let cursor = Int(starts[root])
                                positions[cursor] = Int32(position)
                                starts[root] += 1
                                if !packNowByRoot[root] { continue }
                                // `packSlot`, inline.
                                flags[position] |= TransformArena.packed
                                cursors[position - localCount] = Int32(cursor)
                                minors[cursor] = GroupMinor(
                                    node: node, field: fields[position],
                                    rank: ranks[Int(owners[position])], kind: kinds[position],
                                    flags: flags[position])
                            }
                        }
                    }
                }
            }
        }
        // Shift back: groupStart[root] now holds the end of root's bucket.
        var root = nodeCount
        while root > 0 {
            groupStart[root] = groupStart[root - 1]
            root -= 1
        }
        groupStart[0] = 0
    }

    /// Fills the packed records (`TransformArena.groupMinors`) of group `root`'s incoming
    /// instructions, once per merge, before a tight loop first walks the group (if
    /// `buildIndex` has not). Ranks are final (`rankChangesets` runs before `buildIndex`).
    /// - Complexity: O(the group's incoming instructions), the first time.
    @inline(__always)
    mutating func packGroup(_ root: Int) {
        if groupPacked[root] { return }
        groupPacked[root] = true
        if !groupMinorsReady { prepareGroupMinors() }
        for cursor in Int(groupStart[root])..<Int(groupStart[root + 1]) {
            packSlot(Int(groupPositions[cursor]), at: cursor)
        }
    }

    /// Sizes `groupMinors` (one record per incoming object instruction) and `groupCursor` for
    /// this merge, the first time a group is packed: a merge whose tight loops never run
    /// (large groups of field updates, or schema instructions) allocates neither.
    private mutating func prepareGroupMinors() {
        let incomingCount = arena.count - arena.localCount
        arena.groupMinors.removeAll(keepingCapacity: true)
        arena.groupMinors.append(contentsOf: repeatElement(
            GroupMinor(node: -1, field: 0, rank: 0, kind: 0, flags: 0),
            count: groupPositions.count))
        arena.groupCursor.removeAll(keepingCapacity: true)
        arena.groupCursor.append(contentsOf: repeatElement(-1, count: incomingCount))
        groupMinorsReady = true
    }

    /// Packs incoming `slot` at `cursor` of `groupMinors` and flags it, so `discard` mirrors it.
    @inline(__always)
    private mutating func packSlot(_ slot: Int, at cursor: Int) {
        arena.flags[slot] |= TransformArena.packed
        arena.groupCursor[slot - arena.localCount] = Int32(cursor)
        arena.groupMinors[cursor] = GroupMinor(
            node: arena.node[slot], field: arena.field[slot],
            rank: changesetRank[Int(arena.changeset[slot])], kind: arena.kind[slot],
            flags: arena.flags[slot])
    }

    // MARK: - Write back

    /// Rewrites the changesets from `first` on that changed: drops discarded instructions and
    /// re-encodes shifted list indices. Untouched changesets (and skipped local instructions)
    /// stay as they are, without a copy.
    private mutating func writeBack(changesetsFrom first: Int) {
        changesetModified.removeAll(keepingCapacity: true)
        changesetModified.append(contentsOf: repeatElement(false, count: changesets.count))
        let clean = TransformArena.alive
        let firstSlot = first == 0 ? 0 : arena.localCount
        for slot in firstSlot..<arena.count
        where arena.flags[slot] & (TransformArena.alive | TransformArena.dirty) != clean {
            changesetModified[Int(arena.changeset[slot])] = true
        }
        for changesetIndex in first..<changesets.count where changesetModified[changesetIndex] {
            let slotStart = changesetFirstSlot[changesetIndex]
            let slotEnd: Int
            if changesetIndex + 1 == localChangesetCount {
                slotEnd = arena.localCount
            } else if changesetIndex + 1 < changesets.count {
                slotEnd = changesetFirstSlot[changesetIndex + 1]
            } else {
                slotEnd = arena.count
            }
            compact(changesetIndex, slots: slotStart..<slotEnd)
        }
    }

    /// Gives each incoming changeset its scan column (`Changeset.scanColumn`), so that a server
    /// appending them to its history scans them cheaply in later merges.
    /// The columns are cut from the scan's `incomingEntries` (the entries of the slots still
    /// alive), not read again from the instructions; a list entry caches the indices the
    /// merge left in its slot, which its rewritten instruction carries (`compact`).
    /// - Complexity: O(incoming instructions).
    private mutating func buildScanColumns() {
        let localCount = arena.localCount
        for index in localChangesetCount..<changesets.count
        where changesets.scanColumn(index) == nil {
            let firstSlot = changesetFirstSlot[index]
            let endSlot = index + 1 < changesets.count ? changesetFirstSlot[index + 1] : arena.count
            let count = changesets.instructions(index).count
            // Its list runs, cut over the slots still alive (the column's entries).
            let limits = listBlockSettings.runLimits
            let cut = listBlockSettings.enabled && limits != nil
                && arena.cutColumnListRuns(firstSlot..<endSlot, settings: listBlockSettings,
                                           into: &columnRunScratch)
            if !cut { columnRunScratch.removeAll(keepingCapacity: true) }
            assert(columnRunScratch.isEmpty || Int(columnRunScratch.last!.end) == count,
                   "the column's list runs do not cover its entries")
            var written = 0
            let runs = columnRunScratch
            let column = runs.withUnsafeBufferPointer { runs in
                columnSlab.makeColumn(count: count, runs: runs, limits: limits ?? 0) { column in
                    for slot in firstSlot..<endSlot where arena.isAlive(slot) {
                        var entry = incomingEntries[slot - localCount]
                        if entry.kind == Kind.arrayInsert || entry.kind == Kind.arrayErase {
                            entry.cacheListIndices(index: arena.index[slot],
                                                   priorSize: arena.priorSize[slot])
                        }
                        precondition(written < count,
                                     "scan column does not match the written-back changeset")
                        (column + written).initialize(to: entry)
                        written += 1
                    }
                    precondition(written == count,
                                 "scan column does not match the written-back changeset")
                }
            }
            changesets.modify(index) { $0.scanColumn = column }
        }
    }

    /// Reports the local slots that were discarded, shifted or folded as edits (in slot order,
    /// which is changeset and position order), and the pending shifts `cutListShifts` cut as
    /// ranges. The local changesets are not rewritten.
    private func recordLocalEdits(_ edits: inout LocalEdits) {
        let alive = TransformArena.alive
        let dirty = TransformArena.dirty
        let replaced = TransformArena.replaced
        let localCount = arena.localCount
        let flags = arena.flags
        // Count first, so every stream is sized once (`LocalEdits.reserveCapacity`).
        var discardCount = 0
        var reindexCount = 0
        var replacementCount = 0
        flags.withUnsafeBufferPointer { flags in
            // Eight slots at a time: each count is the population of one bit per byte (the
            // alive bit is bit 0 of each).
            assert(alive == 1, "the alive flag is bit 0")
            let ones: UInt64 = 0x0101_0101_0101_0101
            let raw = UnsafeRawPointer(flags.baseAddress)
            var slot = 0
            while slot + 8 <= localCount {
                let word = raw!.loadUnaligned(fromByteOffset: slot, as: UInt64.self)
                let live = word & ones
                discardCount &+= 8 &- live.nonzeroBitCount
                reindexCount &+= (word >> dirty.trailingZeroBitCount & live).nonzeroBitCount
                replacementCount &+= (word >> replaced.trailingZeroBitCount & live)
                    .nonzeroBitCount
                slot += 8
            }
            while slot < localCount {
                let slotFlags = flags[slot]
                let live = slotFlags & alive != 0 ? 1 : 0
                discardCount &+= 1 &- live
                reindexCount &+= slotFlags & dirty != 0 ? live : 0
                replacementCount &+= slotFlags & replaced != 0 ? live : 0
                slot += 1
            }
        }
        let pieces = listShiftPieces
        if discardCount + reindexCount + replacementCount + pieces.count == 0 { return }
        edits.reserveCapacity(
            changesets: min(localChangesetCount,
                            discardCount + reindexCount + replacementCount + pieces.count),
            discards: discardCount, reindexes: reindexCount, replacements: replacementCount,
            shifts: pieces.count)
        // Discards and re-indexes are written through pointers into streams sized up front
        // (a re-index per history instruction is the common case of a text document); they
        // are moved out of `edits` meanwhile, so that replacements and changeset ends can
        // still be appended to it.
        var discards = ContiguousArray<UInt32>()
        var reindexPositions = ContiguousArray<UInt32>()
        var reindexed = ContiguousArray<ListIndices>()
        swap(&discards, &edits.discards)
        swap(&reindexPositions, &edits.reindexPositions)
        swap(&reindexed, &edits.reindexed)
        defer {
            swap(&discards, &edits.discards)
            swap(&reindexPositions, &edits.reindexPositions)
            swap(&reindexed, &edits.reindexed)
        }
        var discard = discards.count
        var reindex = reindexPositions.count
        var piece = 0
        discards.append(contentsOf: repeatElement(0, count: discardCount))
        reindexPositions.append(contentsOf: repeatElement(0, count: reindexCount))
        reindexed.append(contentsOf: repeatElement(
            ListIndices(index: 0, index2: 0, priorSize: 0), count: reindexCount))
        // The arena's columns through raw views as well (subscripts of the arrays checked
        // bounds and reloaded bases: about 38 instructions per re-indexed slot at K = 100).
        precondition(localCount <= min(arena.count, arena.position.count), "slots beyond the arena")
        arena.withColumns { columns in
            arena.position.withUnsafeBufferPointer { positions in
                discards.withUnsafeMutableBufferPointer { discards in
                    reindexPositions.withUnsafeMutableBufferPointer { reindexPositions in
                        reindexed.withUnsafeMutableBufferPointer { reindexed in
                            for changesetIndex in 0..<localChangesetCount {
                                let slotEnd = changesetIndex + 1 == localChangesetCount
                                    ? localCount : changesetFirstSlot[changesetIndex + 1]
                                var slot = changesetFirstSlot[changesetIndex]
                                if slot == slotEnd { continue }
                                let (discardFrom, reindexFrom) = (discard, reindex)
                                let replacementsFrom = edits.replacementPositions.count
                                let shiftsFrom = edits.shifts.count
                                while slot < slotEnd {
                                    // Slot by slot up to the next range, then the range at
                                    // once (a range lies within one changeset).
                                    let rangeStart = piece < pieces.count
                                        ? min(Int(pieces[piece].start), slotEnd) : slotEnd
                                    while slot < rangeStart {
                                        let slotFlags = columns.flags[slot]
                                        if slotFlags & alive == 0 {
                                            discards[discard] = positions[slot]
                                            discard += 1
                                        } else if slotFlags & replaced != 0 {
                                            // A folded increment (replaced in the merge's
                                            // copy of the changeset); a replaced instruction
                                            // is never a list one, so it is never dirty.
                                            precondition(slotFlags & dirty == 0,
                                                         "replaced list instruction")
                                            let position = Int(positions[slot])
                                            edits.appendReplacement(
                                                position: position,
                                                changesets.local[changesetIndex]
                                                    .instructions[position])
                                        } else if slotFlags & dirty != 0 {
                                            reindexPositions[reindex] = positions[slot]
                                            reindexed[reindex] = arena.listIndices(
                                                slot, in: columns)
                                            reindex += 1
                                        }
                                        slot += 1
                                    }
                                    if slot == slotEnd { break }
                                    let range = pieces[piece]
                                    edits.shifts.append(ListShift(
                                        first: range.position,
                                        count: UInt32(range.end - range.start),
                                        indexDelta: range.index, sizeDelta: range.size))
                                    slot = Int(range.end)
                                    piece += 1
                                }
                                // A changeset without edits adds no entry (`endChangeset` would
                                // find its ends equal to the last ones).
                                if discard != discardFrom || reindex != reindexFrom
                                    || edits.replacementPositions.count != replacementsFrom
                                    || edits.shifts.count != shiftsFrom
                                {
                                    edits.endChangeset(changesetIndex, discardEnd: discard,
                                                       reindexEnd: reindex)
                                }
                            }
                        }
                    }
                }
            }
        }
        precondition(discard == discards.count && reindex == reindexed.count
                         && piece == pieces.count,
                     "local edits miscounted")
    }

    /// Rewrites one changeset in place: the instructions it keeps move forward by swaps
    /// (shifted list instructions re-encoded), the discarded ones are destroyed at the tail.
    /// Instructions without a slot (skipped by the scan) are kept as they are. (Moving them
    /// down one assignment at a time had measured slower than appending them to a fresh
    /// buffer; swaps move without copying, and beat both.)
    /// - Complexity: O(instructions of the changeset).
    private mutating func compact(_ changesetIndex: Int, slots: Range<Int>) {
        // In place: the kept instructions move forward (a swap moves them without copying),
        // the dropped ones end up at the tail and are destroyed once. Building a new array
        // copied every kept instruction (its key and value retained) and then destroyed the
        // whole old one, through the enum's value witnesses (with the scan entries' copies,
        // 9 % of a client's merge of 10^6 map updates; this part 2 %). A buffer shared with
        // the caller is copied once first, as any write.
        var instructions = ContiguousArray<Instruction>()
        changesets.modify(changesetIndex) { swap(&instructions, &$0.instructions) }
        let count = instructions.count
        var kept = 0
        var slot = slots.lowerBound
        instructions.withUnsafeMutableBufferPointer { buffer in
            for position in 0..<count {
                var rebuild = false
                if slot < slots.upperBound && Int(arena.position[slot]) == position {
                    let alive = arena.isAlive(slot)
                    rebuild = alive && arena.flags[slot] & TransformArena.dirty != 0
                    slot += 1
                    if !alive { continue }
                }
                if kept != position { buffer.swapAt(kept, position) }
                if rebuild { buffer[kept] = arena.rebuilt(buffer[kept], slot - 1) }
                kept += 1
            }
        }
        precondition(slot == slots.upperBound, "write-back did not cover the changeset's slots")
        instructions.removeLast(count - kept)
        changesets.modify(changesetIndex) { $0.instructions = instructions }
    }

    // MARK: - Helpers for the rules

    /// Whether arena slot `a` beats slot `b`, one local and one incoming: the higher
    /// discriminant, precomputed as a rank per changeset (ties go to incoming; see
    /// `rankChangesets`, whose ranks do not order two slots of one side).
    @inline(__always)
    func wins(_ a: Int, _ b: Int) -> Bool {
        assert((a < arena.localCount) != (b < arena.localCount), "ranks order the sides only")
        return changesetRank[Int(arena.changeset[a])] > changesetRank[Int(arena.changeset[b])]
    }

    /// Ranks the changesets so that `wins` is one integer compare. Every rule compares a local
    /// slot with an incoming one, never two of one side, so the ranks only order the sides
    /// against each other: incoming changeset number i in (timestamp, file ident) order gets
    /// rank 2i + 1, and a local changeset rank 2j, where j counts the incoming changesets with
    /// a strictly lower discriminant. A local changeset then beats an incoming one exactly when
    /// its discriminant is higher, and an incoming one wins a tie (see the module notes).
    /// Two local changesets may share a rank; a local and an incoming one never do.
    /// - Complexity: O(I log I + L log I) for I incoming and L local changesets: a server's
    ///   long history is not sorted again for every upload.
    mutating func rankChangesets() {
        let localCount = localChangesetCount
        let count = changesets.count
        let times = discriminantTime
        let idents = discriminantIdent
        rankOrder.removeAll(keepingCapacity: true)
        rankOrder.append(contentsOf: Int32(localCount)..<Int32(count))
        // The discriminant, compared as a (timestamp, file ident) tuple in both places below.
        rankOrder.sort { a, b in
            (times[Int(a)], idents[Int(a)], a) < (times[Int(b)], idents[Int(b)], b)
        }
        changesetRank.removeAll(keepingCapacity: true)
        changesetRank.append(contentsOf: repeatElement(0, count: count))
        let order = rankOrder
        changesetRank.withUnsafeMutableBufferPointer { ranks in
            for sorted in order.indices { ranks[Int(order[sorted])] = UInt32(2 * sorted + 1) }
            // A history's discriminants come in long ascending runs (each client's changesets
            // in turn), so each search gallops from the last answer: O(log distance) where a
            // plain binary search costs O(log incoming changesets) every time.
            var previous = 0
            for local in 0..<localCount {
                // j = the incoming changesets whose discriminant is strictly below local's.
                let time = times[local]
                let ident = idents[local]
                @inline(__always) func below(_ sorted: Int) -> Bool {
                    let other = Int(order[sorted])
                    return (times[other], idents[other]) < (time, ident)
                }
                // Bracket the answer in low ..< high + 1, then search it.
                var low: Int
                var high: Int
                if previous < order.count && below(previous) {
                    low = previous + 1
                    var step = 1
                    while low + step - 1 < order.count && below(low + step - 1) {
                        low += step
                        step *= 2
                    }
                    high = Swift.min(low + step - 1, order.count)
                } else {
                    high = previous
                    var step = 1
                    while high - step >= 0 && !below(high - step) {
                        high -= step
                        step *= 2
                    }
                    low = Swift.max(high - step + 1, 0)
                }
                while low < high {
                    let middle = (low + high) / 2
                    if below(middle) { low = middle + 1 } else { high = middle }
                }
                ranks[local] = UInt32(2 * low)
                previous = low
            }
        }
    }

    /// The instruction at arena slot `slot`, as originally scanned (values may have been
    /// folded in place since).
    @inline(__always)
    func instruction(_ slot: Int) -> Instruction {
        changesets.instruction(Int(arena.changeset[slot]), at: Int(arena.position[slot]))
    }

    /// Replaces the instruction at `slot` in its changeset (used by the AddInteger fold).
    @inline(__always)
    mutating func replaceInstruction(_ slot: Int, _ instruction: Instruction) {
        arena.flags[slot] |= TransformArena.replaced
        let position = Int(arena.position[slot])
        changesets.modify(Int(arena.changeset[slot])) { $0.instructions[position] = instruction }
    }
}
