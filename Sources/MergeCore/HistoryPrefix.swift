//! A server's history slots kept in the arena from one merge to the next.
//!
//! ## Why
//!
//! A server merges each upload against every history changeset the uploader has not seen,
//! and every merge entered that window into the arena afresh: 26 bytes written per history
//! instruction (`TransformArena.appendUniform`), though from one upload to the next the
//! window is the same changesets plus the last upload's. A text-like server with 100 clients
//! reads 49 window instructions per merged one, and appending them was a fifth of its merge
//! time, bound by memory traffic.
//!
//! ## How
//!
//! A history changeset whose scan column is uniform (every entry on one object and field)
//! and whose list entries are ArrayInserts and ArrayErases caching their indices (a typed
//! document's changeset) enters the arena whole or not at all, straight from its column, on
//! the one node its first entry classifies to (`Transformer.scanUniform`). So its slots
//! depend on nothing but the column, that node and where they start. `HistoryPrefix`
//! records, for the history's first changesets while they are all such columns, the column
//! (held, so that its address names it alone: a column's entries never change and its
//! memory is not reused while it is held), the node, and where its slots and listed runs
//! (`historyListRuns`) end.
//!
//! The next merge keeps the arena's slots and listed runs of the longest recorded prefix
//! whose changesets are the same columns, in the same places, classified to the same nodes;
//! drops the rest; and scans on from there. The kept slots are then as that merge left them,
//! so the slots it changed are put back (`TransformArena.restoreUniform`): a merge changes a
//! local slot's kind, flags and list indices only, and marks every slot it changes in its
//! flags (`TransformArena.untouchedMask`), which `ColumnListRuns` already relies on. A kept
//! slot is thus exactly what a fresh append would write; debug builds check it slot by slot,
//! and `HistoryPrefixTests` compares servers with and without the prefix.
//!
//! Any other changeset ends the recorded prefix (a map's selection depends on the upload); so
//! does a change of the settings that cut listed runs. A client's changesets are rewritten
//! by its merges, which drops their columns, so they never match.

/// The history changesets whose arena slots a transformer keeps for its next merge (see the
/// file's documentation), in local order from the first.
struct HistoryPrefix: Sendable {
    /// Per changeset: its scan column, held.
    private(set) var columns: ContiguousArray<ScanColumn> = []
    /// The node its slots are on, or -1 when the scan kept none of them.
    private(set) var nodes: ContiguousArray<Int32> = []
    /// What its node was chosen from: its column's first entry's object, field and whether it
    /// is general (`Transformer.uniformNode`). A copy here, in order: the next merge's match
    /// reads these instead of each column's first cache line.
    private(set) var heads: ContiguousArray<Head> = []
    /// The arena slot after its last one.
    private(set) var slotEnds: ContiguousArray<Int> = []
    /// `Transformer.historyListRuns.count` after its runs.
    private(set) var listRunEnds: ContiguousArray<Int> = []
    /// The settings its runs were listed under (`ListBlockSettings.runLimits`,
    /// `Transformer.historyListRunsEnabled`).
    var runLimits: UInt32? = nil
    var listRunsEnabled = false

    var count: Int { columns.count }

    /// The parts of a column's first entry that `Transformer.uniformNode` reads.
    struct Head: Equatable, Sendable, BitwiseCopyable {
        var key: UInt64
        var table: UInt32
        var field: UInt32
        var isGeneral: Bool

        init(_ entry: ScanEntry) {
            (key, table, field, isGeneral) = (entry.key, entry.table, entry.field,
                                              entry.isGeneral)
        }
    }

    /// The first arena slot of recorded changeset `index`.
    func slotStart(_ index: Int) -> Int { index == 0 ? 0 : slotEnds[index - 1] }

    /// The slots and listed runs of the first `count` recorded changesets.
    func ends(of count: Int) -> (slots: Int, listRuns: Int) {
        count == 0 ? (0, 0) : (slotEnds[count - 1], listRunEnds[count - 1])
    }

    /// Keeps the first `count` changesets.
    mutating func truncate(_ count: Int) {
        let dropped = columns.count - count
        columns.removeLast(dropped)
        nodes.removeLast(dropped)
        heads.removeLast(dropped)
        slotEnds.removeLast(dropped)
        listRunEnds.removeLast(dropped)
    }

    mutating func append(_ column: ScanColumn, node: Int32, slotEnd: Int, listRunEnd: Int) {
        precondition(column.count > 0, "an empty column in the history prefix")
        columns.append(column)
        nodes.append(node)
        heads.append(Head(column.base[0]))
        slotEnds.append(slotEnd)
        listRunEnds.append(listRunEnd)
    }
}

extension Transformer {
    /// How many of the history's first changesets keep the arena slots and listed runs the
    /// last merge gave them: the longest prefix recorded in `historyPrefix`, under the same
    /// run settings, whose changesets hold the recorded columns and whose first entries
    /// classify to the recorded nodes (with `filter` and `keyMasks`, as `scanUniform` does).
    func matchHistoryPrefix(
        filter: TouchedFields?, keyMasks: UnsafeBufferPointer<UInt64>?
    ) -> Int {
        guard historyPrefixEnabled, historyPrefix.runLimits == listBlockSettings.runLimits,
            historyPrefix.listRunsEnabled == historyListRunsEnabled
        else { return 0 }
        let limit = Swift.min(historyPrefix.count, localChangesetCount)
        var selection: UInt64 = 0
        // The node of the last head classified: the next changesets with the same head (a
        // typed document's, all on one list) take it without reading their columns.
        var last: (head: HistoryPrefix.Head, node: Int32?)? = nil
        return changesets.local.withUnsafeBufferPointer { locals in
            historyPrefix.columns.withUnsafeBufferPointer { columns in
                var matched = 0
                while matched < limit {
                    guard let base = locals[matched].scanColumn?.base,
                        base == columns[matched].base
                    else { break }
                    let head = historyPrefix.heads[matched]
                    let node: Int32?
                    if let last, last.head == head {
                        node = last.node
                    } else {
                        node = withUnsafeMutablePointer(to: &selection) {
                            uniformNode(columns[matched].entries, filter: filter,
                                        keyMasks: keyMasks, into: $0)
                        }
                        last = (head, node)
                    }
                    guard node == historyPrefix.nodes[matched] else { break }
                    matched += 1
                }
                return matched
            }
        }
    }

    /// Keeps the arena slots and listed runs of the first `kept` recorded changesets (the
    /// arena must be reset to their slots), puts back the slots the last merge changed, and
    /// sets their first slots; the scan records from there (`recordHistoryPrefix`).
    mutating func restoreHistoryPrefix(_ kept: Int) {
        historyPrefix.truncate(kept)
        historyListRuns.removeLast(historyListRuns.count - historyPrefix.ends(of: kept).listRuns)
        historyPrefix.runLimits = listBlockSettings.runLimits
        historyPrefix.listRunsEnabled = historyListRunsEnabled
        historyPrefixSlotsKept += historyPrefix.ends(of: kept).slots
        historyPrefix.columns.withUnsafeBufferPointer { columns in
            for index in 0..<kept {
                let start = historyPrefix.slotStart(index)
                changesetFirstSlot[index] = start
                if historyPrefix.slotEnds[index] > start {
                    arena.restoreUniform(columns[index].entries, at: start)
                    changesetSlotsWhole[index] = true  // as `scanUniform` appended them
                }
            }
        }
        assert((0..<kept).allSatisfy { index in
            // Debug builds: every kept slot is what a fresh append writes.
            let start = historyPrefix.slotStart(index)
            if historyPrefix.slotEnds[index] == start { return historyPrefix.nodes[index] < 0 }
            return arena.uniformSlotsMatch(historyPrefix.columns[index].entries,
                                           node: historyPrefix.nodes[index], changeset: index,
                                           at: start)
                && historyPrefix.slotEnds[index] == start + historyPrefix.columns[index].count
        }, "a kept history slot differs from its column")
    }

    /// Records local changeset `index`, just scanned, in `historyPrefix` when every changeset
    /// before it is recorded: `node` is what `scanUniform` returned (nil: the changeset
    /// cannot be kept). A changeset not recorded (nil here, or never passed here: not a
    /// uniform column) thus ends the prefix for the rest of the scan.
    mutating func recordHistoryPrefix(_ index: Int, node: Int32?) {
        guard historyPrefixEnabled, let node, index == historyPrefix.count,
            let column = changesets.local[index].scanColumn
        else { return }
        historyPrefix.append(column, node: node, slotEnd: arena.count,
                             listRunEnd: historyListRuns.count)
    }
}
