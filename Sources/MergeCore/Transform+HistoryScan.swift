//! The scan of a long local side (a server's history): which local instructions enter the
//! arena, decided for a whole changeset in one pass, and appended to the arena in batches.
//!
//! A server merging an upload against the history reads every history instruction and keeps
//! the few that can meet an incoming one. That read was two thirds of the merge
//! (map-uniform, 100 clients, 10^6 instructions). It classified a changeset's entries into
//! one buffer, selected from that into a second, and grew eight arena columns for the
//! handful it kept; and reading each history changeset's column, an array of its own,
//! retained it and read its count (a cold cache line per changeset, the retain an atomic
//! operation that the processor cannot overlap). Now:
//! - one branch-free loop per changeset finds each entry's node and decides whether it is
//!   kept (`ObjectNodeTable.selectRelevant`), with the filter's answer per key of the dense
//!   map precomputed (`fillKeyMasks`): two independent loads per entry where there were two
//!   dependent ones;
//! - a column whose entries are all on the map's table, none general, each with a field the
//!   key masks cover (`ScanColumn.maskedTable`: nearly every map and churn changeset) takes a
//!   shorter loop (`ObjectNodeTable.selectMaskedRange`) without those per-entry checks, and
//!   reads the kept entries' nodes after it (24 instructions per entry where the general
//!   loop takes 39); a key beyond the map's window that may have a node stops it, and an
//!   out-of-line pass looks the key up and goes on;
//! - the kept instructions wait as selections (`node << 32 | position`), with a run per
//!   changeset naming its column (`SelectedRun`), and enter the arena a few thousand at a
//!   time, read from the columns and written a few arena columns at a time (staging each as a
//!   40-byte record, then copying it, took three times the instructions);
//! - a uniform column (every entry on one object and field: a typed document's changeset) is
//!   decided by its first entry and, kept, enters the arena straight from the column
//!   (`scanUniform`);
//! - the columns live in chunks (`ScanColumn`), and the changeset holds the address and
//!   count, so the scan reads them in place, and prefetches the columns a few changesets
//!   ahead (at parity on its own in the measurements; the one pass gave most of the gain).
//! The result is exactly the old scan's, slot for slot (digests of every map and churn run
//! are unchanged; `FastPathTests` compares the selection with the probe and `interacts`).

internal import CPrefetch

/// A history changeset's kept instructions, waiting to enter the arena: their selections are
/// `Transformer.historySelected[previous run's end ..< end]` (`node << 32 | position`), their
/// entries in `entries` (a scan column, valid while the local side is held).
/// (`@unchecked Sendable`: a run lives within one merge, which holds the column.)
struct SelectedRun: @unchecked Sendable {
    var entries: UnsafePointer<ScanEntry>
    var changeset: UInt32
    var end: UInt32

    /// The entry `selection` (`node << 32 | position`) names in this run's column.
    @inline(__always)
    func entry(_ selection: UInt64) -> ScanEntry {
        entries[Int(UInt32(truncatingIfNeeded: selection))]
    }
}

extension Transformer {
    /// How many kept instructions wait before they enter the arena together (a changeset
    /// with more instructions waits alone).
    static let pendingSlotsMax = 4096

    /// Scans the local changesets when the incoming side erases no column, in order, into the
    /// arena: exactly the slots `scanLocalBatch` would append for each changeset, in the same
    /// order. A changeset whose entries are all integer-keyed object instructions without
    /// links (`ScanEntry.isGeneral` false) is decided in one pass
    /// (`ObjectNodeTable.selectMasked` or `selectRelevant`), its selection waits in
    /// `historySelected` with a `SelectedRun` naming its column, and the waiting selections
    /// enter the arena together (`TransformArena.appendRuns`); any other goes through
    /// `scanLocalBatch` after the waiting slots have entered the arena, since it may give
    /// objects their first nodes.
    /// - Throws: `MergeError` as `scanLocalBatch`, for the first failing slot in order.
    ///
    /// The history's first changesets keep the arena slots the last merge gave them where
    /// they can (`HistoryPrefix`); the arena is reset to those, with room for `capacity`
    /// slots, and the scan goes on after them.
    mutating func scanHistory(
        filterFields: Bool, capacity: Int, fallback: inout Bool
    ) throws(MergeError) {
        // The scratch's filler (never read: runs are written before they are read).
        let noRun = SelectedRun(entries: UnsafePointer(bitPattern: 8)!, changeset: 0, end: 0)
        historyRuns.reserve(Self.pendingSlotsMax, repeating: noRun)
        historySelected.reserve(Self.pendingSlotsMax, repeating: 0)
        // The filter's answer per dense key, one load instead of the node's and then its
        // mask's.
        let keyMasks = filterFields && nodes.denseActive
        if keyMasks {
            historyKeyMasks.reset(count: nodes.dense.count, repeating: 0)
            nodes.fillKeyMasks(touched, into: historyKeyMasks.buffer)
        }
        let keyMaskBuffer = UnsafeBufferPointer(historyKeyMasks.buffer)
        // Masked columns on the map's table take the short loop.
        let maskedLoop = keyMasks && nodes.dense.count > 0
        let maskedTable = nodes.denseTable
        let filter = filterFields ? touched : nil  // the local scan does not change it
        let kept = matchHistoryPrefix(filter: filter, keyMasks: keyMasks ? keyMaskBuffer : nil)
        arena.reset(capacity: capacity, keepingSlots: historyPrefix.ends(of: kept).slots)
        restoreHistoryPrefix(kept)
        var waiting = 0  // selections waiting in `historySelected`
        var runs = 0  // and their runs in `historyRuns`
        for changesetIndex in kept..<localChangesetCount {
            prefetchColumn(changesetIndex + Self.columnPrefetchDistance)
            let view = columnView(changesetIndex)
            let count = view?.entries.count
                ?? changesets.local[changesetIndex].instructions.count
            if waiting + count > historySelected.count || runs == historyRuns.count {
                try flushRuns(waiting: waiting, runs: runs)
                (waiting, runs) = (0, 0)
                historySelected.reserve(count, repeating: 0)
            }
            changesetFirstSlot[changesetIndex] = arena.count + waiting
            // The selections are written through a raw pointer: the flush above leaves room for
            // every entry (a precondition here cost 0.35 % of a map merge's instructions).
            assert(waiting + count <= historySelected.count && runs < historyRuns.count,
                   "history scan scratch too short")
            let selected = historySelected.buffer.baseAddress! + waiting
            if let view {
                let column = view.entries
                // `Changeset` drops its column when its instructions change (checked in debug
                // builds only: reading the count touches the cold buffer).
                assert(column.count == changesets.local[changesetIndex].instructions.count,
                       "scan column out of date")
                if view.isUniform {
                    try flushRuns(waiting: waiting, runs: runs)
                    (waiting, runs) = (0, 0)
                    let node = try scanUniform(
                        column, changeset: changesetIndex, filter: filter,
                        keyMasks: keyMasks ? keyMaskBuffer : nil, selected: selected,
                        listRuns: view.listRuns)
                    recordHistoryPrefix(changesetIndex, node: node)
                    continue
                }
                var chosen: Int?
                if maskedLoop && view.maskedTable == maskedTable {
                    chosen = nodes.selectMasked(column, touched: filter, keyMasks: keyMaskBuffer,
                                                into: selected)
                }
                if let kept = chosen ?? nodes.selectRelevant(
                    column, touched: filter, keyMasks: keyMasks ? keyMaskBuffer : nil,
                    into: selected)
                {
                    if kept > 0 {
                        waiting += kept
                        historyRuns.buffer[runs] = SelectedRun(
                            entries: column.baseAddress!, changeset: UInt32(changesetIndex),
                            end: UInt32(waiting))
                        runs += 1
                    }
                    continue
                }
            } else {
                localBatch.resize(count)
                ScanEntry.fill(&localBatch.entries,
                               from: changesets.local[changesetIndex].instructions)
                // The batch's entries are overwritten by the next changeset's: its selection
                // enters the arena now. (A second reference to the batch for the scope of the
                // read, so that the arena's writes do not overlap an access to `localBatch`.)
                let batch = localBatch.entries
                let kept = try batch.withUnsafeBufferPointer {
                    (entries) throws(MergeError) -> Int? in
                    let entries = UnsafeBufferPointer(rebasing: entries[0..<count])
                    guard let kept = nodes.selectRelevant(
                        entries, touched: filter, keyMasks: keyMasks ? keyMaskBuffer : nil,
                        into: selected)
                    else { return nil }
                    if kept > 0 {
                        historyRuns.buffer[runs] = SelectedRun(
                            entries: entries.baseAddress!, changeset: UInt32(changesetIndex),
                            end: UInt32(waiting + kept))
                        try flushRuns(waiting: waiting + kept, runs: runs + 1)
                    } else {
                        try flushRuns(waiting: waiting, runs: runs)
                    }
                    return kept
                }
                if kept != nil {
                    (waiting, runs) = (0, 0)
                    continue
                }
            }
            try flushRuns(waiting: waiting, runs: runs)
            (waiting, runs) = (0, 0)
            changesetFirstSlot[changesetIndex] = arena.count
            if let column = view?.entries {
                // Without a column, `localBatch.entries` holds them already.
                localBatch.resize(count)
                localBatch.entries.withUnsafeMutableBufferPointer { entries in
                    entries.baseAddress!.update(from: column.baseAddress!, count: count)
                }
            }
            try scanLocalBatch(changeset: changesetIndex, count: count,
                               filterFields: filterFields, fallback: &fallback)
        }
        try flushRuns(waiting: waiting, runs: runs)
    }

    /// `scanHistory`'s part for a changeset whose scan column is uniform: its entries are all
    /// on one object and field (`ScanColumn.isUniform`). Only the first is classified, and the
    /// answer holds for every entry (the classification reads only the table, key and field),
    /// so they are all kept, with its node, or all skipped. Kept, they enter the arena at once
    /// and straight from the column (`TransformArena.appendUniform`); a text-like history is
    /// all such columns, and every one is kept.
    ///
    /// Classifying each entry was 16 % of a text-like server merge at K = 100, and staging
    /// each kept one (40 bytes written, read back, and read again for its list indices) 11 %.
    /// - Returns: the node the slots are on (-1: none kept) when a later merge may keep them
    ///   (`HistoryPrefix`: none kept, or every list entry an ArrayInsert or ArrayErase that
    ///   caches its indices); nil otherwise.
    /// - Precondition: no selection is waiting (`scanHistory`).
    private mutating func scanUniform(
        _ entries: UnsafeBufferPointer<ScanEntry>, changeset changesetIndex: Int,
        filter: TouchedFields?, keyMasks: UnsafeBufferPointer<UInt64>?,
        selected: UnsafeMutablePointer<UInt64>, listRuns: ColumnListRuns
    ) throws(MergeError) -> Int32? {
        guard let node = uniformNode(entries, filter: filter, keyMasks: keyMasks,
                                     into: selected)
        else { preconditionFailure("a uniform column has no general entry") }
        assert({
            // Debug builds: entry by entry, into scratch, gives the same choice.
            let check = UnsafeMutablePointer<UInt64>.allocate(capacity: entries.count)
            defer { check.deallocate() }
            guard let general = nodes.selectRelevant(entries, touched: filter,
                                                     keyMasks: keyMasks, into: check)
            else { return false }
            if node < 0 { return general == 0 }
            return general == entries.count && (0..<general).allSatisfy {
                check[$0] == UInt64(UInt32(bitPattern: node)) << 32 | UInt64($0)
            }
        }(), "a uniform column selected otherwise than entry by entry")
        if node < 0 { return -1 }
        let start = arena.count
        changesetSlotsWhole[changesetIndex] = true  // every entry, at positions 0 ..< count
        if arena.appendUniform(entries, node: node, changeset: changesetIndex) {
            try arena.fillListIndices(from: changesets.local[changesetIndex].instructions,
                                      slots: start..<arena.count)
            return nil
        }
        listHistoryRuns(listRuns, entries: entries, node: node, start: start)
        return node
    }

    /// The node every entry of the uniform column `entries` is selected on, from its first
    /// entry (`selectRelevant`, with `selected` as its scratch): -1 when none is selected,
    /// nil when that entry is general. `scanUniform` and `matchHistoryPrefix` classify
    /// through it alike.
    @inline(__always)
    func uniformNode(
        _ entries: UnsafeBufferPointer<ScanEntry>, filter: TouchedFields?,
        keyMasks: UnsafeBufferPointer<UInt64>?, into selected: UnsafeMutablePointer<UInt64>
    ) -> Int32? {
        let first = UnsafeBufferPointer(rebasing: entries[0..<1])
        guard let chosen = nodes.selectRelevant(first, touched: filter, keyMasks: keyMasks,
                                                into: selected)
        else { return nil }
        return chosen == 0 ? -1 : Int32(truncatingIfNeeded: selected[0] >> 32)
    }

    /// The scan column of local changeset `index`, if it has one, with its
    /// `ScanColumn.isUniform` and `ScanColumn.maskedTable`; the entries are valid while the
    /// local side is held. Read in place from the local array: the column's address, count
    /// and summary are in the changeset, so nothing else is touched (`ScanColumn`).
    @inline(__always)
    private func columnView(
        _ index: Int
    ) -> (entries: UnsafeBufferPointer<ScanEntry>, isUniform: Bool, maskedTable: UInt32,
          listRuns: ColumnListRuns)?
    {
        changesets.local.withUnsafeBufferPointer { locals in
            guard let column = locals[index].scanColumn else { return nil }
            return (column.entries, column.isUniform, column.maskedTable, column.listRuns)
        }
    }

    /// How many local changesets ahead `scanHistory` asks for a scan column's cache lines.
    static let columnPrefetchDistance = 4

    /// Asks for the cache lines of local changeset `index`'s scan column, if it has one,
    /// without waiting for them.
    @inline(__always)
    private func prefetchColumn(_ index: Int) {
        guard index < localChangesetCount, let column = columnView(index)?.entries else { return }
        let base = UnsafeRawPointer(column.baseAddress!)
        let bytes = column.count * MemoryLayout<ScanEntry>.stride
        var offset = 0
        while offset < bytes {
            syncsim_prefetch(base + offset)
            offset += 64
        }
    }

    /// Appends the `waiting` selections of the first `runs` runs to the arena
    /// (`TransformArena.appendRuns`); the list slots of a run whose entries cache no indices
    /// read them from its instructions, checked (`fillListIndices`).
    /// - Throws: `MergeError.indexBeyondPriorSize` for the first such slot in order that fails.
    private mutating func flushRuns(waiting: Int, runs: Int) throws(MergeError) {
        if waiting == 0 { return }
        let start = arena.count
        let runBuffer = UnsafeBufferPointer(rebasing: historyRuns.buffer[0..<runs])
        if !arena.appendRuns(runBuffer,
                             selected: UnsafePointer(historySelected.buffer.baseAddress!))
        {
            return
        }
        // Rare (an ArrayMove, or indices beyond the cache's 24 bits): the slots of each run
        // with a missing index read theirs, in slot order.
        let selected = historySelected.buffer
        var from = 0
        for run in runBuffer {
            let end = Int(run.end)
            let missing = (from..<end).contains { offset in
                let entry = run.entry(selected[offset])
                return !entry.fillsSlot && entry.cachedListIndices == nil
            }
            if missing {
                try arena.fillListIndices(
                    from: changesets.local[Int(run.changeset)].instructions,
                    slots: start + from..<start + end)
            }
            from = end
        }
    }
}

extension TransformArena {
    /// Appends one slot per waiting selection of `runs`, in order: the selections of run r
    /// are `selected[previous end ..< r.end]`, each `node << 32 | position`, filled from
    /// `r.entries[position]` on that node, at that position, in changeset `r.changeset`; list
    /// slots take the indices their entries cache. Returns whether some list slot's entry
    /// caches none (the caller then fills it before anything reads it).
    ///
    /// Read straight from the columns, the kept instructions cost a third of what staging
    /// them did (each a 40-byte record, written, read back and copied into the columns).
    mutating func appendRuns(
        _ runs: UnsafeBufferPointer<SelectedRun>, selected: UnsafePointer<UInt64>
    ) -> Bool {
        guard let last = runs.last else { return false }
        let count = Int(last.end)
        let start = growColumns(by: count, changeset: 0)
        // A few columns at a time, as `SlotWriters.writeEntries` (which needs the entries in
        // order: here they are gathered through the selections).
        var listKinds: UInt64 = 0  // bit k & 63 set: some entry has kind k (`listKindsMask`)
        withSlotWriters { slots in
            for offset in 0..<count {
                let chosen = selected[offset]
                slots.node[start &+ offset] = Int32(truncatingIfNeeded: chosen >> 32)
                slots.position[start &+ offset] = UInt32(truncatingIfNeeded: chosen)
            }
            var from = 0
            for run in runs {
                let end = Int(run.end)
                let changeset = run.changeset
                for offset in from..<end {
                    let entry = run.entry(selected[offset])
                    slots.kind[start &+ offset] = entry.kind
                    slots.flags[start &+ offset] = entry.flags
                    slots.field[start &+ offset] = entry.field
                    slots.changeset[start &+ offset] = changeset
                    listKinds |= 1 << UInt64(entry.kind & 63)
                }
                from = end
            }
        }
        // List slots are few in most histories: their indices in a second pass.
        if listKinds & ScanEntry.listKindsMask == 0 { return false }
        var missing = false
        index.withUnsafeMutableBufferPointer { index in
            priorSize.withUnsafeMutableBufferPointer { priorSize in
                var from = 0
                for run in runs {
                    let end = Int(run.end)
                    for offset in from..<end {
                        let entry = run.entry(selected[offset])
                        if Self.writeCachedListIndices(entry, slot: start + offset,
                                                       index: index, priorSize: priorSize)
                        {
                            missing = true
                        }
                    }
                    from = end
                }
            }
        }
        return missing
    }
}

extension ObjectNodeTable {
    /// `classify` and the relevance filter of one local changeset in one pass, for the
    /// history scan: for each position whose object has a node and, with `touched`, that
    /// `touched.interacts` with, writes `node << 32 | position` to `selected[0 ..< kept]` in
    /// order, and returns `kept`. Returns nil, with nothing meant, when an entry is `general`
    /// (the caller then classifies the changeset one instruction at a time).
    ///
    /// `keyMasks` (with `touched`) holds the filter's answer per key of the dense map
    /// (`Transformer.historyKeyMasks`), so a key in the map takes two independent loads and
    /// a few instructions. Any other key, and a field at or above
    /// `TouchedFields.maskedFields`, goes through `classifyOne`, out of line, so the hot loop
    /// keeps its values in registers. A history's instructions are kept or skipped in no
    /// predictable order, so the keep decision is made without a branch: every position is
    /// written, and the write index advances by the answer.
    /// - Precondition: `selected` has room for `entries.count` values; `keyMasks` is as long
    ///   as the dense map when given, and given when `touched` is and the map is active.
    /// - Complexity: O(entries).
    @inline(__always)
    func selectRelevant(
        _ entries: UnsafeBufferPointer<ScanEntry>, touched: TouchedFields?,
        keyMasks: UnsafeBufferPointer<UInt64>?, into selected: UnsafeMutablePointer<UInt64>
    ) -> Int? {
        let flip: UInt64 = 1 << 63
        let low = denseMin
        let table = denseTable
        // Without a map, or with the filter but no key masks, every key goes out of line.
        let window = denseActive && (touched == nil || keyMasks != nil) ? UInt64(dense.count) : 0
        let masks = keyMasks ?? UnsafeBufferPointer(start: nil, count: 0)
        let filter = touched != nil
        let dense = UnsafeBufferPointer(self.dense.buffer)
        let outside = denseOutsideBits
        var kept = 0
        for position in 0..<entries.count {
            let entry = entries[position]
            if entry.isGeneral { return nil }
            let offset = (entry.key ^ flip) &- low
            let field = entry.field
            var node: Int32
            var keep: Int
            // `field + 1` wraps to 0 for an object-level instruction (`UInt32.max`).
            if entry.table == table && offset < window
                && field &+ 1 <= TouchedFields.maskedFields
            {
                node = dense[Int(offset)]
                if filter {
                    // The key's mask has the field's bit (bit 61 for an object-level
                    // instruction) set when the entry is kept (`fillKeyMasks`).
                    let shift = UInt64(Swift.min(field, 61))
                    keep = Int(truncatingIfNeeded: masks[Int(offset)] >> shift & 1)
                } else {
                    keep = node >= 0 ? 1 : 0
                }
            } else if entry.table == table && offset >= window && window > 0
                        && !Self.outsideBit(outside, entry.key)
            {
                // A key of the map's table beyond its window that the incoming side
                // never touched (a clear bit proves it has no node): objects other
                // clients created, in their own key ranges.
                node = -1
                keep = 0
            } else {
                (node, keep) = classifyOne(entry, touched: touched)
            }
            selected[kept] = UInt64(UInt32(bitPattern: node)) << 32
                | UInt64(UInt32(truncatingIfNeeded: position))
            kept &+= keep
        }
        return kept
    }

    /// `selectRelevant` with the filter and its key masks, for entries known to be on the
    /// dense map's table, none `general`, each field below `TouchedFields.maskedFields` or
    /// an object instruction's (`ScanColumn.maskedTable`): the same selection, with the
    /// checks those facts settle left out of the loop. Nearly every history changeset of a
    /// map or churn workload is such a column, and the checks (and the registers they took)
    /// were about half of the loop's instructions.
    ///
    /// From `start`, writes `offset << 32 | position` for each kept entry to
    /// `selected[kept...]`, `offset` being the key's in the map (`resolveMasked` then puts
    /// the nodes in place: one load fewer per entry here, and one register), and advances
    /// `kept`. Returns the entries' count, or the position of the first key beyond the map's
    /// window whose `denseOutsideBits` bit is set (it may have a node:
    /// `selectMaskedLookingUp` looks it up and goes on).
    /// - Precondition: as `selectRelevant`'s, the map active, and every entry as above.
    /// - Complexity: O(entries from `start`).
    @inline(__always)
    func selectMaskedRange(
        _ entries: UnsafeBufferPointer<ScanEntry>, keyMasks masks: UnsafeBufferPointer<UInt64>,
        into selected: UnsafeMutablePointer<UInt64>, from start: Int, kept: inout Int
    ) -> Int {
        precondition(denseActive && dense.count > 0 && masks.count == dense.count
                        && dense.count + count < Int(UInt32.max),
                     "selectMaskedRange needs the map")
        assert(entries.allSatisfy {
            !$0.isGeneral && $0.table == denseTable && $0.field &+ 1 <= TouchedFields.maskedFields
        }, "selectMaskedRange's entries are not all masked on the map's table")
        // `(key ^ 1 << 63) &- denseMin`, the key's offset, is `key &- base`: flipping the top
        // bit is adding it, modulo 2^64.
        let base = denseMin &- (1 << 63)
        let window = UInt64(dense.count)
        let outside = denseOutsideBits
        var written = kept
        defer { kept = written }
        for position in start..<entries.count {
            let entry = entries[position]
            let offset = entry.key &- base
            var keep = 0
            if offset < window {
                let shift = UInt64(Swift.min(entry.field, 61))
                keep = Int(truncatingIfNeeded: masks[Int(offset)] >> shift & 1)
            } else if Self.outsideBit(outside, entry.key) {
                return position  // maybe touched beyond the window: the caller looks it up
            }  // else beyond the window and never touched (as in `selectRelevant`)
            selected[written] = offset << 32 | UInt64(UInt32(truncatingIfNeeded: position))
            written &+= keep
        }
        return entries.count
    }

    /// The selection `selectRelevant` makes of a masked column on the map's table
    /// (`ScanColumn.maskedTable`), in `selected[0 ..< kept]`: `selectMaskedRange` over the
    /// column, then `resolveMasked`, or, if it stopped at a key beyond the window,
    /// `selectMaskedLookingUp`, out of line. Returns `kept`.
    @inline(__always)
    func selectMasked(
        _ column: UnsafeBufferPointer<ScanEntry>, touched: TouchedFields?,
        keyMasks: UnsafeBufferPointer<UInt64>, into selected: UnsafeMutablePointer<UInt64>
    ) -> Int {
        var kept = 0
        let stop = selectMaskedRange(column, keyMasks: keyMasks, into: selected, from: 0,
                                     kept: &kept)
        if stop == column.count {
            resolveMasked(selected, count: kept, lookedUp: false)
            return kept
        }
        return selectMaskedLookingUp(column, touched: touched, keyMasks: keyMasks,
                                     into: selected, from: stop, kept: kept)
    }

    /// Finishes a `selectMaskedRange` over `column` that stopped at `stop` (a key beyond the
    /// map's window that may have a node) with `kept` selections written: looks up each key
    /// it stops at (`classifyOne`), goes on from the next, and resolves the nodes
    /// (`resolveMasked`). Returns the selection's count: with `selectMaskedRange`, the
    /// selection `selectRelevant` makes. Out of line, so that the common path stays small.
    @inline(never)
    func selectMaskedLookingUp(
        _ column: UnsafeBufferPointer<ScanEntry>, touched: TouchedFields?,
        keyMasks: UnsafeBufferPointer<UInt64>, into selected: UnsafeMutablePointer<UInt64>,
        from stop: Int, kept: Int
    ) -> Int {
        var kept = kept
        var position = stop
        while position < column.count {
            let (node, keep) = classifyOne(column[position], touched: touched)
            selected[kept] = (UInt64(dense.count) &+ UInt64(UInt32(bitPattern: node))) << 32
                | UInt64(UInt32(truncatingIfNeeded: position))
            kept &+= keep
            position = selectMaskedRange(column, keyMasks: keyMasks, into: selected,
                                         from: position + 1, kept: &kept)
        }
        resolveMasked(selected, count: kept, lookedUp: true)
        return kept
    }

    /// Replaces the map offsets of `selectMaskedRange`'s first `count` selections by their
    /// nodes: a high half `v` below the map's length is an offset (its node is `dense[v]`);
    /// any other, written by `selectMaskedLookingUp` for a key it looked up, is
    /// `length + node` (only when `lookedUp`).
    @inline(__always)
    func resolveMasked(_ selected: UnsafeMutablePointer<UInt64>, count: Int, lookedUp: Bool) {
        let window = UInt64(self.dense.count)
        let dense = UnsafeBufferPointer(self.dense.buffer)
        for offset in 0..<count {
            let chosen = selected[offset]
            let high = chosen >> 32
            let node = !lookedUp || high < window
                ? dense[Int(high)] : Int32(truncatingIfNeeded: high &- window)
            selected[offset] = UInt64(UInt32(bitPattern: node)) << 32 | chosen & 0xFFFF_FFFF
        }
    }

    /// Writes, per offset of the dense map, which of that key's instructions the filter keeps
    /// (the `keyMasks` of `selectRelevant`): every bit when the incoming side erases the
    /// object, else the filter's field bits with `TouchedFields.knownBit` (bit 61: an
    /// object-level instruction is kept), and 0 when the filter knows no node for the key.
    /// An entry on field f < 61 is then kept exactly when bit f is set, an object-level one
    /// when bit 61 is, as `TouchedFields.interacts` decides.
    /// - Precondition: `out` is as long as the dense map and all zeros.
    func fillKeyMasks(_ touched: TouchedFields, into out: UnsafeMutableBufferPointer<UInt64>) {
        precondition(out.count == dense.count, "one key mask per dense key")
        let masks = touched.nodeMasks.buffer
        let known = touched.knownCount
        let dense = self.dense.buffer
        for offset in dense.indices {
            let node = Int(dense[offset])
            if node >= 0 && node < known {
                let mask = masks[node]
                out[offset] = mask & TouchedFields.erasesBit != 0
                    ? UInt64.max : mask | TouchedFields.knownBit
            }
        }
    }

    /// One entry of `selectRelevant` the hot loop does not decide: its node as `classify`
    /// finds it (-1 for none) and whether it is kept (1 or 0).
    @inline(never)
    func classifyOne(_ entry: ScanEntry, touched: TouchedFields?) -> (node: Int32, keep: Int) {
        let node = existingNode(intKey: entry.key, table: entry.table)
        if node < 0 { return (-1, 0) }
        guard let touched else { return (node, 1) }
        return (node, touched.interacts(node: node, field: entry.field) ? 1 : 0)
    }
}
