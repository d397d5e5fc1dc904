//! A list's replay kept from one sequence merge to the next (`ListSequenceMerge`).
//!
//! ## Why
//!
//! A server merges each upload against every history instruction the uploader has not seen.
//! When a list is contested, `ListSequenceMerge` first replays each side on its own
//! (`PathSequence`), to name the element each erase removes and the left neighbour of each
//! insert. The history side is the long one, and from one upload to the next it is the same
//! instructions plus the last upload's: over a list run with 100 clients the replays
//! repeated the same prefix a hundred times, about a third of the merge's instructions.
//!
//! ## How
//!
//! A replay depends on nothing but the base's size and the edits (kind, index, prior size),
//! so it is kept by content: each entry holds a side's edits (kind and index packed in one
//! word), what the replay named for each (an insert's left neighbour, an erase's element),
//! and the `PathSequence` after the last one. A side whose first edits equal an entry's, on a
//! base of the same size, takes the entry's names for those and replays only the rest, on the
//! entry's sequence, which the entry then keeps. The prior sizes are checked against the
//! running size instead of being stored: on a valid replay each one is the size before it.
//! No key names the list or the history: equality of the edits is what makes the names
//! right, so a hit is exact, never a guess, and an entry serves any list that starts alike.
//!
//! The entry numbers elements as a run on its own would (the base from 2, its inserts from
//! 2 + base size); a run numbers a side's inserts from its own first number, so names at or
//! above 2 + base size are shifted on the way out.
//!
//! Only the side that can come back is stored (`ListSequenceMerge.StoredSide`: a server's
//! history, never an upload replayed once nor a client's changesets, which the merge
//! rewrites), and only when at least `storedEditsMin` long; a miss on any other side replays
//! as before, and any side may hit. The cache holds at most `entriesMax` entries and
//! `storedEditsMax` edits, the least recently used going first (the entry in use stays,
//! whatever its size: a single list's history longer than that is still kept whole, at 8
//! bytes per edit beside the history's own). It changes no result:
//! `ListReplayCacheTests` checks runs with and without it, edit for edit, and a server's
//! merges against the pairwise walk.
//!
//! The cost is memory: 8 bytes per kept edit (`EditLog`) and each kept sequence's chunks. A
//! list server of 10^6 instructions keeps its whole history, and its peak memory per merged
//! instruction went from 85 to about 96 bytes (the target is 100).

/// Replays of list sides kept across `ListSequenceMerge` runs (see the file's documentation).
struct ListReplayCache: Sendable {
    /// One side's replay: its edits, what the replay named, and the sequence after it.
    private struct Entry: Sendable {
        var baseCount = 0
        /// Per edit: its key (`key(_:)`) and what the replay named.
        var log = EditLog()
        var inserts = 0
        /// The sequence after every edit in `log`.
        var path = PathSequence()
        /// When the entry was last used (`clock`), for eviction.
        var lastUse: UInt64 = 0
    }

    static let insertBit: UInt32 = 1 << 31
    /// The shortest side stored: a shorter replay costs little, and storing every small group's
    /// sides would push out the long ones.
    static let storedEditsMin = 256
    static let entriesMax = 32
    /// Edits held over all entries but the one in use (8 bytes each, with the sequences' few
    /// bytes per alive element beside them).
    static let storedEditsMax = 1 << 22

    private var entries: [Entry] = []
    private var clock: UInt64 = 0
    private var storedEdits = 0
    /// Edits named from an entry without a replay, and edits replayed into an entry
    /// (statistics for tests and tuning; never reset).
    private(set) var editsReused = 0
    private(set) var editsStored = 0
    /// Entries dropped because a side that agreed with them went wrong past their edits.
    private(set) var entriesRejected = 0

    init() {}

    /// Names the element of each of `edits` and the left neighbour of each insert, as
    /// `ListSequenceMerge.replay` does (the base `2 ..< 2 + baseCount`, inserted elements from
    /// `firstNew`), from a matching entry where there is one. `store`: on a miss, replay into
    /// a new entry (if the side is long enough) instead of `scratch`.
    /// - Returns: false if an edit does not fit its state (then no entry holds it).
    mutating func replay(
        _ edits: ContiguousArray<ListSequenceEdit>, inserts: Int, baseCount: Int, firstNew: Int32,
        store: Bool, scratch: inout PathSequence,
        elements: UnsafeMutableBufferPointer<Int32>, lefts: UnsafeMutableBufferPointer<Int32>
    ) -> Bool {
        clock &+= 1
        if let found = match(edits, baseCount: baseCount, firstNew: firstNew,
                             elements: elements, lefts: lefts)
        {
            // In place: a copy of the entry would share its sequence's buffers.
            entries[found].lastUse = clock
            let before = entries[found].log.count
            let reused = min(before, edits.count)
            editsReused &+= reused
            guard reused == edits.count
                || Self.extend(&entries[found], with: edits, from: reused, firstNew: firstNew,
                               elements: elements, lefts: lefts)
            else {
                // Its sequence went part of the way: the entry goes.
                storedEdits -= before
                entries.remove(at: found)
                entriesRejected &+= 1
                return false
            }
            storedEdits += entries[found].log.count - before
            editsStored &+= entries[found].log.count - before
            evictBeyondLimits(keeping: found)
            return true
        }
        guard store && edits.count >= Self.storedEditsMin else {
            return ListSequenceMerge.replay(
                edits, inserts: inserts, path: &scratch, firstBase: 2, baseCount: baseCount,
                firstNew: firstNew, elements: elements, lefts: lefts)
        }
        var entry = takeSlot()
        entry.baseCount = baseCount
        entry.log.removeAll()
        entry.inserts = 0
        entry.lastUse = clock
        entry.path.reset(2..<(2 + Int32(baseCount)), inserts: inserts)
        guard Self.extend(&entry, with: edits, from: 0, firstNew: firstNew,
                     elements: elements, lefts: lefts)
        else { return false }
        storedEdits += entry.log.count
        editsStored &+= entry.log.count
        entries.append(entry)
        evictBeyondLimits(keeping: entries.count - 1)
        return true
    }

    /// The entry whose edits and `edits` agree on the shorter of the two, on a base of
    /// `baseCount` elements, with its names for those edits written out (in the run's
    /// numbering, as `ListSequenceMerge.replay` names them). At most one entry can agree: one
    /// is made only when none agrees with its edits, and grows only by edits that agree with
    /// it. An entry that turns out not to agree may have named some edits already; whatever
    /// names them next (another entry, or a replay) writes the same outputs over those.
    private func match(_ edits: ContiguousArray<ListSequenceEdit>, baseCount: Int,
                       firstNew: Int32, elements: UnsafeMutableBufferPointer<Int32>,
                       lefts: UnsafeMutableBufferPointer<Int32>) -> Int? {
        guard !edits.isEmpty else { return nil }
        let firstKey = Self.key(edits[0])
        for e in entries.indices where entries[e].baseCount == baseCount
            && entries[e].log.count > 0 && entries[e].log.firstKey == firstKey
            && entries[e].log.agrees(with: edits, baseCount: baseCount, firstNew: firstNew,
                                     elements: elements, lefts: lefts)
        {
            return e
        }
        return nil
    }

    /// An edit's key in the log: its index, with `insertBit` for an insert.
    @inline(__always)
    static func key(_ edit: ListSequenceEdit) -> UInt32 {
        edit.isInsert ? edit.index | insertBit : edit.index
    }

    /// Replays `edits[start...]` on the entry's sequence (which holds its state after the
    /// first `start`) with `ListSequenceMerge.replay`, in the entry's numbering, then records
    /// each in the entry and renames it into the run's numbering.
    private static func extend(_ entry: inout Entry, with edits: ContiguousArray<ListSequenceEdit>,
                               from start: Int, firstNew: Int32,
                               elements: UnsafeMutableBufferPointer<Int32>,
                               lefts: UnsafeMutableBufferPointer<Int32>) -> Bool {
        let firstEntryNew = 2 + Int32(entry.baseCount)
        guard ListSequenceMerge.replay(edits, from: start, on: &entry.path,
                                       firstNew: firstEntryNew &+ Int32(entry.inserts),
                                       elements: elements, lefts: lefts)
        else { return false }
        let shift = firstNew &- firstEntryNew
        @inline(__always) func mapped(_ name: Int32) -> Int32 {
            name >= firstEntryNew ? name &+ shift : name
        }
        for k in start..<edits.count {
            let edit = edits[k]
            if edit.isInsert {
                entry.log.append(key: key(edit), name: lefts[k])
                lefts[k] = mapped(lefts[k])
                elements[k] = mapped(elements[k])
                entry.inserts += 1
            } else {
                entry.log.append(key: key(edit), name: elements[k])
                elements[k] = mapped(elements[k])
            }
        }
        return true
    }

    /// An entry to fill: the least recently used one's buffers when the cache is full, else
    /// new ones.
    private mutating func takeSlot() -> Entry {
        guard entries.count >= Self.entriesMax else { return Entry() }
        let oldest = leastRecentlyUsed(excluding: nil)!
        storedEdits -= entries[oldest].log.count
        return entries.remove(at: oldest)
    }

    /// Drops least recently used entries, never `kept`, while the edits held exceed
    /// `storedEditsMax`.
    private mutating func evictBeyondLimits(keeping kept: Int) {
        var kept = kept
        while storedEdits > Self.storedEditsMax,
            let oldest = leastRecentlyUsed(excluding: kept)
        {
            storedEdits -= entries[oldest].log.count
            entries.remove(at: oldest)
            if oldest < kept { kept -= 1 }
        }
    }

    private func leastRecentlyUsed(excluding excluded: Int?) -> Int? {
        var oldest: Int?
        for e in entries.indices where e != excluded {
            if oldest == nil || entries[e].lastUse < entries[oldest!].lastUse { oldest = e }
        }
        return oldest
    }
}

/// A cache entry's edits, each as its key (high 32 bits) and the name its replay gave (low 32),
/// in blocks of `blockSize`. A full block never moves: one array grown by each run's edits
/// was copied whole at each growth and held up to twice its size (a list server's peak
/// memory went from 85 to 105 bytes per merged instruction at K = 100).
private struct EditLog: Sendable {
    static let blockSize = 4_096
    private var blocks: ContiguousArray<ContiguousArray<UInt64>> = []
    private(set) var count = 0

    var firstKey: UInt32 { UInt32(truncatingIfNeeded: blocks[0][0] >> 32) }

    mutating func removeAll() {
        blocks.removeAll()
        count = 0
    }

    mutating func append(key: UInt32, name: Int32) {
        if count % Self.blockSize == 0 {
            var block = ContiguousArray<UInt64>()
            block.reserveCapacity(Self.blockSize)
            blocks.append(block)
        }
        blocks[blocks.count - 1].append(
            UInt64(key) << 32 | UInt64(UInt32(bitPattern: name)))
        count += 1
    }

    /// Calls `body` with the records of the first `prefix` edits, a block at a time; stops
    /// early when it returns false.
    func forEachBlock(upTo prefix: Int,
                      _ body: (UnsafeBufferPointer<UInt64>) -> Bool) {
        var start = 0
        for block in blocks where start < prefix {
            let length = min(block.count, prefix - start)
            let goOn = block.withUnsafeBufferPointer {
                body(UnsafeBufferPointer(rebasing: $0[0..<length]))
            }
            if !goOn { return }
            start += length
        }
    }

    /// Whether the log and `edits` agree on their common prefix, each edit's prior size being
    /// the size its predecessors leave (on the valid replay the log records); names those
    /// edits as it goes (`elements`, and `lefts` for inserts), in the numbering of a run whose
    /// inserts start at `firstNew`: the log's own inserts start at 2 + `baseCount`. On false,
    /// the edits before the first disagreement are named.
    func agrees(with edits: ContiguousArray<ListSequenceEdit>, baseCount: Int, firstNew: Int32,
                elements: UnsafeMutableBufferPointer<Int32>,
                lefts: UnsafeMutableBufferPointer<Int32>) -> Bool {
        let firstLogNew = 2 + Int32(truncatingIfNeeded: baseCount)
        let shift = firstNew &- firstLogNew
        return edits.withUnsafeBufferPointer { edits in
            var size = UInt32(truncatingIfNeeded: baseCount)
            var next = firstNew
            var k = 0
            var agreed = true
            forEachBlock(upTo: Swift.min(count, edits.count)) { block in
                for record in block {
                    let edit = edits[k]
                    guard ListReplayCache.key(edit) == UInt32(truncatingIfNeeded: record >> 32)
                        && edit.priorSize == size && edit.index < ListReplayCache.insertBit
                    else {
                        agreed = false
                        return false
                    }
                    let name = Int32(truncatingIfNeeded: record)
                    let mapped = name >= firstLogNew ? name &+ shift : name
                    if edit.isInsert {
                        lefts[k] = mapped
                        elements[k] = next
                        next &+= 1
                        size &+= 1
                    } else {
                        elements[k] = mapped
                        size &-= 1
                    }
                    k &+= 1
                }
                return true
            }
            return agreed
        }
    }
}
