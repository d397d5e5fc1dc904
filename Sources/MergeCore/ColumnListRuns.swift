//! The list runs of a history changeset, cut once when the changeset enters the history and
//! kept with its scan column, so that later merges take a typed run whole instead of cutting
//! it again.
//!
//! A server merging an upload walks its whole unseen history, and each typed run of it
//! passes the upload's edits together (`Transformer.mergeMajorRun`). Finding where such a run
//! ends (`TransformArena.listRunEnd`) read every history slot on every upload: at 100 clients
//! a text-like merge spent a fifth of its time there (`listRunEnd` 18 % of the merge's
//! samples), cutting the same changesets the same way upload after upload. The history never
//! changes, so the cuts are made once, when the changeset's column is made, from its first
//! slot, and kept relative to each run's first index (`ColumnListRuns`). The history scan,
//! which reads the column anyway, lists them for the merge with their slots and zones
//! (`Transformer.historyListRuns`, in slot order), and the walk reads that list in order
//! (`cachedListRun`): a run that ends its changeset joins the next changeset's first run when
//! the two still form one run, and a run is cut afresh only where its slots are no longer as
//! the history holds them.
//!
//! Where a run ends never changes the merge's result, only how many slots pass together:
//! every cut gives the grid's result (`Transformer.mergeMajorRun`). These cuts stop at a
//! changeset's end unless the next run fits whole, where the per-slot cut could take part of
//! it; the results are the same (every bench digest is unchanged), and the debug builds check
//! each summary against the slots (`summariseMajorRun`).

/// The list runs of one scan column (`ScanColumn.listRuns`): consecutive runs covering the
/// whole column, as `TransformArena.listRunEnd` cut them with `limits` from the column's first
/// entry; none when the column is not all ArrayInserts and ArrayErases on one list.
/// (`@unchecked Sendable`: the runs live in a chunk the column keeps alive, never written
/// again.)
struct ColumnListRuns: @unchecked Sendable {
    /// A run: where it ends and its zone, relative to its first entry's index (the summary's
    /// `minIndex` and `maxBelow` minus it).
    struct Run: Sendable, Equatable {
        /// The column offset after its last entry.
        var end: UInt32
        var minOffset: Int32
        var maxBelowOffset: Int32
        var netDelta: Int32
        var chains: Bool
    }

    var runs = UnsafeBufferPointer<Run>(start: nil, count: 0)
    /// The limits they were cut with, packed (`ListBlockSettings.runLimits`).
    var limits: UInt32 = 0
}

/// A history run listed for one merge (`Transformer.historyListRuns`): its arena slots
/// `start ..< start + summary.count` and the summary `listRunEnd` would give them.
struct HistoryListRun: Sendable {
    var start: Int
    var summary: ListRunSummary
}

extension ListBlockSettings {
    /// `spanMax` and `lengthMax` packed in 16 bits each, as `ColumnListRuns` keeps them; nil
    /// (no runs are kept) when either does not fit.
    var runLimits: UInt32? {
        guard spanMax < 1 << 16, lengthMax > 0 && lengthMax < 1 << 16 else { return nil }
        return spanMax << 16 | UInt32(lengthMax)
    }
}

extension TransformArena {
    /// Cuts the alive slots of `slots` (a changeset's, in its column's order) into the runs
    /// `listRunEnd` cuts from their first slot on once they lie side by side, as a later
    /// merge appends the column (`scanUniform`), into `runs` (emptied first), relative to
    /// each run's first index. A changeset the merge discarded an instruction of (an erase
    /// meeting an erase of the same element) is cut too: at K = 100 about one text-like
    /// changeset in fourteen, which every later merge had cut again slot by slot (4 % of one).
    /// - Returns: false (and no runs) unless every alive slot is an ArrayInsert or ArrayErase
    ///   on one list, with zones that fit the runs' 32-bit fields.
    func cutColumnListRuns(_ slots: Range<Int>, settings: ListBlockSettings,
                           into runs: inout ContiguousArray<ColumnListRuns.Run>) -> Bool {
        runs.removeAll(keepingCapacity: true)
        let cut = withColumns { columns in
            var slot = slots.lowerBound
            var offset = 0  // the column offset of `slot`'s entry
            var list: (node: Int32, field: UInt32)?
            while slot < slots.upperBound {
                if columns.flags[slot] & Self.alive == 0 {
                    slot += 1
                    continue
                }
                guard var run = ListRunCut(slot, of: columns, spanMax: settings.spanMax)
                else { return false }
                if list == nil { list = (run.node, run.field) }
                let firstIndex = Int64(columns.index[slot])
                slot += 1
                while slot < slots.upperBound && run.count < settings.lengthMax {
                    if columns.flags[slot] & Self.alive == 0 {
                        slot += 1
                    } else if run.take(slot, of: columns) {
                        slot += 1
                    } else {
                        break
                    }
                }
                let zone = run.zone
                offset += Int(zone.count)
                guard zone.node == list?.node, zone.field == list?.field,
                    let minOffset = Int32(exactly: Int64(zone.minIndex) - firstIndex),
                    let maxBelowOffset = Int32(exactly: zone.maxBelow - firstIndex),
                    let netDelta = Int32(exactly: zone.netDelta)
                else { return false }
                runs.append(ColumnListRuns.Run(
                    end: UInt32(offset), minOffset: minOffset, maxBelowOffset: maxBelowOffset,
                    netDelta: netDelta, chains: zone.chains))
            }
            return true
        }
        if !cut { runs.removeAll(keepingCapacity: true) }
        return cut
    }

    /// Whether every slot of `slots` is alive and as its changeset holds it: never
    /// rewritten (`dirty`), replaced, or merged by the sequence merge.
    func slotsPristine(_ slots: Range<Int>) -> Bool {
        flags.withUnsafeBufferPointer { flags in
            var differs: UInt8 = 0
            for slot in slots { differs |= (flags[slot] & Self.untouchedMask) ^ Self.alive }
            return differs == 0
        }
    }
}

extension ListRunSummary {
    /// This run followed by `next` (the slots right after it, on its list), if the two form
    /// one run within `spanMax`: what `TransformArena.listRunEnd` gives for them together.
    func joined(with next: ListRunSummary, spanMax: UInt32) -> ListRunSummary? {
        guard next.node == node && next.field == field else { return nil }
        var joined = self
        joined.minIndex = min(minIndex, next.minIndex)
        joined.maxBelow = max(maxBelow, next.maxBelow - netDelta)
        if joined.maxBelow - Int64(joined.minIndex) > Int64(spanMax) { return nil }
        joined.chains = chains && next.chains
            && Int64(next.firstSize) == Int64(firstSize) + netDelta
        joined.netDelta = netDelta + next.netDelta
        joined.count = count + next.count
        return joined
    }
}

extension Transformer {
    /// Lists the runs of a history changeset whose column was just appended to the arena
    /// whole at `start` (`scanUniform`), with their zones read from its entries' cached
    /// indices; lists none when the runs were cut with other limits, and stops at a run whose
    /// first entry caches no indices.
    mutating func listHistoryRuns(_ runs: ColumnListRuns,
                                  entries: UnsafeBufferPointer<ScanEntry>, node: Int32,
                                  start: Int) {
        guard historyListRunsEnabled, !runs.runs.isEmpty,
            runs.limits == listBlockSettings.runLimits
        else { return }
        var offset = 0
        for run in runs.runs {
            guard let (index, size) = entries[offset].cachedListIndices else { return }
            let end = Int(run.end)
            var zone = ListRunSummary()
            zone.count = Int32(end - offset)
            zone.node = node
            zone.field = entries[offset].field
            zone.minIndex = UInt32(truncatingIfNeeded: Int64(index) + Int64(run.minOffset))
            zone.firstSize = size
            zone.maxBelow = Int64(index) + Int64(run.maxBelowOffset)
            zone.netDelta = Int64(run.netDelta)
            zone.chains = run.chains
            historyListRuns.append(HistoryListRun(start: start + offset, summary: zone))
            offset = end
        }
    }

    /// The run `majorRun` would take from local slot `first` (below `limit`), read from the
    /// history's listed runs (`historyListRuns`) when `first` starts one of them and its slots
    /// are as the history holds them; a run joins the listed runs right after it while they
    /// form one run. Calls come in ascending `first` within a merge.
    /// - Returns: the run's end and summary; or nil, with the end of the listed run that
    ///   holds `first` (a cut there lines the next runs up with the listed ones) or `limit`.
    mutating func cachedListRun(from first: Int, limit: Int)
        -> (run: (end: Int, zone: ListRunSummary)?, limit: Int)
    {
        let spanMax = listBlockSettings.spanMax
        let cursor = historyListRunCursor
        return historyListRuns.withUnsafeBufferPointer { runs in
            var at = cursor
            while at < runs.count && runs[at].start + Int(runs[at].summary.count) <= first {
                at += 1
            }
            historyListRunCursor = at
            guard at < runs.count, runs[at].start <= first else { return (nil, limit) }
            var zone = runs[at].summary
            var stop = runs[at].start + Int(zone.count)
            if runs[at].start < first { return (nil, min(limit, stop)) }
            if stop > limit { return (nil, limit) }
            at += 1
            while at < runs.count && runs[at].start == stop {
                let next = runs[at].summary
                guard stop + Int(next.count) <= limit,
                    let joined = zone.joined(with: next, spanMax: spanMax)
                else { break }
                zone = joined
                stop += Int(next.count)
                at += 1
            }
            guard arena.slotsPristine(first..<stop) else { return (nil, limit) }
            historyListRunsTaken += 1
            return ((stop, zone), limit)
        }
    }
}
