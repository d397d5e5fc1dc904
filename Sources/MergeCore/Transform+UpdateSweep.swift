//! The walk's sweep over local Updates, CreateObjects and EraseObjects: consecutive such
//! majors of small conflict groups merged in one loop (`TransformArena.sweepUpdateMajors`),
//! not dispatched one by one.
//!
//! A server merging an upload of map edits against its history keeps a few history
//! instructions per incoming one (those on the fields the upload touches), almost all of them
//! Updates whose group holds one or two incoming instructions. Each went through the walk's
//! dispatch and `mergeWithGroup`: the group's bounds, its list-block state, the field-run
//! threshold, its packing, then `mergeUpdateRun`, which took mutable views of two arena
//! columns (a uniqueness check each) for a loop that ran about twice. At 100 clients and
//! 10^6 map updates that was about 290 instructions per kept Update, over a quarter of the
//! merge's instructions.
//!
//! The sweep takes the views once for a stretch of majors and applies, per major, exactly the
//! checks and rules `mergeWithGroup` would: for an Update the loop of `mergeUpdateRun`
//! (`TransformArena.updateRun`, shared), for a CreateObject and an EraseObject the rules of
//! `Transform+Rules.swift` against their group's packed records (`createSurvives`,
//! `eraseRun`). Churn's history interleaves the three kinds: sweeping Updates alone took
//! 1.6 majors per sweep there (churn K = 100), all three take each merge's kept history in
//! one sweep. An Update of a large group (field runs, `Transform+FieldRuns.swift`) is taken
//! too when its field's chain of incoming Updates is all it meets (`FieldRunSweep`): a
//! client integrating a large download has every group large, and a Zipf-skewed history
//! interleaves hot and cold objects, which a sweep of either kind alone left one major at a
//! time. The sweep stops at the first major it does not take whole, and the walk goes on as
//! before from there:
//! - another kind, a major whose group is cut into list blocks or (small) not yet packed, or
//!   a large group's major that meets more than its field's Updates: the usual dispatch,
//!   from that major;
//! - an Update whose loop stopped at a minor it does not decide (an AddInteger on its field,
//!   a Clear, …): the rest of its group through the generic rules (`mergeUpdateMajor`), as
//!   `mergeWithGroup` does.
//! Merges with an incoming schema instruction, an EraseColumn or a sequence-merged list
//! group do not sweep. `FastPathTests` compares sweeping merges with the pairwise walk.

internal import CPrefetch

extension Transformer {
    /// Sweeps local Update, CreateObject and EraseObject majors from `major` on
    /// (`TransformArena.sweepUpdateMajors`), and finishes the Update whose loop stopped at a
    /// minor it does not decide.
    /// - Returns: the slot the walk continues from, or nil when the sweep took no slot.
    /// - Precondition: `sweepStarts(at: major, kind:)`.
    mutating func sweepUpdates(from major: Int) throws(MergeError) -> Int? {
        var sweep = arena.sweepUpdateMajors(
            from: major, roots: nodeRoot, groupStart: groupStart, blockLower: groupBlockLower,
            packed: groupPacked, ranks: changesetRank, minors: groupPositions,
            groupCountMax: sweepGroupCountMax, fieldRuns: fieldRunSweep)
        if sweep.cursor == TransformArena.sweepNeedsFieldRuns {
            // A large group's Update, before the field runs are built: build them, sweep on.
            buildFieldRuns()
            sweep = arena.sweepUpdateMajors(
                from: sweep.major, roots: nodeRoot, groupStart: groupStart,
                blockLower: groupBlockLower, packed: groupPacked, ranks: changesetRank,
                minors: groupPositions, groupCountMax: sweepGroupCountMax,
                fieldRuns: fieldRunSweep)
        }
        if sweep.cursor < 0 { return sweep.major > major ? sweep.major : nil }
        arena.updateSweepHandoffs &+= 1
        let root = Int(nodeRoot[Int(arena.node[sweep.major])])
        try mergeUpdateMajor(sweep.major, from: sweep.cursor, to: Int(groupStart[root + 1]))
        return sweep.major + 1
    }

    /// Whether a sweep can start at local object instruction `major` of kind `kind`: its kind
    /// and its group as the sweep takes them (`TransformArena.sweepTakes`), and for a large
    /// group's Update, once the field runs are built, whether its field's Updates are all it
    /// meets (`FieldRunSweep.chain`). Checked in the walk, inline, before each sweep: a major
    /// the sweep would refuse at once (a hot object's group before 6d3b0ba, a counter's
    /// Update that meets AddIntegers) would cost the sweep's call on top of its dispatch.
    @inline(__always)
    func sweepStarts(at major: Int, kind: UInt8) -> Bool {
        guard TransformArena.sweepTakes(kind: kind) else { return false }
        let node = arena.node[major]
        let root = Int(nodeRoot[Int(node)])
        let groupCount = Int(groupStart[root + 1] - groupStart[root])
        guard TransformArena.sweepTakes(
            kind: kind, packed: groupPacked[root], blockLower: groupBlockLower[root],
            groupCount: groupCount, groupCountMax: sweepGroupCountMax)
        else { return false }
        return groupCount < sweepGroupCountMax || !fieldRuns.built
            || fieldRunSweep.chain(node: node, field: arena.field[major]) != nil
    }

    /// The groups with this many incoming instructions or more take field runs
    /// (`fieldRunsApply`): the sweep takes only their Updates, through `FieldRunSweep`.
    var sweepGroupCountMax: Int { fieldRunsEnabled ? fieldRunsGroupCountMin : Int.max }

    /// `mergeWithGroup` for a local Update major of a packed group without incoming schema
    /// instructions, from group position `start` to `groupEnd`: runs of field instructions
    /// through the tight loop (`TransformArena.mergeUpdateRun`), the minor it stops at through
    /// the generic rules.
    mutating func mergeUpdateMajor(_ major: Int, from start: Int, to groupEnd: Int)
        throws(MergeError)
    {
        var groupIndex = start
        while groupIndex < groupEnd {
            groupIndex = arena.mergeUpdateRun(
                major: major, minors: groupPositions, from: groupIndex, to: groupEnd,
                ranks: changesetRank)
            if !arena.isAlive(major) || groupIndex >= groupEnd { return }
            if try !mergeStoppedMinor(major, at: &groupIndex) { return }
        }
    }

    /// The minor at group position `cursor`, where a tight loop over `major`'s group stopped,
    /// through the generic rules (`mergePair`, if it is alive); advances `cursor`. Returns
    /// whether `major` is still alive. Shared by the Update and list loops'
    /// `mergeUpdateMajor` and `mergeListMajor`.
    @inline(__always)
    mutating func mergeStoppedMinor(_ major: Int, at cursor: inout Int) throws(MergeError)
        -> Bool
    {
        let minor = Int(groupPositions[cursor])
        cursor += 1
        guard arena.isAlive(minor) else { return true }
        try mergePair(major, minor)
        return arena.isAlive(major)
    }
}

extension TransformArena {
    /// Merges the alive local majors from `first` on with their groups, as
    /// `Transformer.mergeWithGroup` would, while each is an Update, CreateObject or
    /// EraseObject whose group is packed, has no list blocks (`blockLower` below 0) and fewer
    /// than `groupCountMax` incoming instructions, or an Update of a larger group without
    /// list blocks that `fieldRuns` takes (`FieldRunSweep.mergeUpdate`); dead slots are
    /// skipped. The merge must have no incoming schema instruction.
    /// - Returns: `major`, the slot the sweep stopped at (`localCount` if none); `cursor` is
    ///   -1 if the sweep did not start that slot (the caller takes the usual path),
    ///   `sweepNeedsFieldRuns` if that slot is a large group's Update and `fieldRuns` is not
    ///   built, else the group position its loop stopped at, which needs the generic rules.
    /// - Complexity: O(the minors walked + slots swept).
    mutating func sweepUpdateMajors(
        from first: Int, roots: ContiguousArray<Int32>, groupStart: ContiguousArray<Int32>,
        blockLower: ContiguousArray<Int32>, packed groupPacked: ContiguousArray<Bool>,
        ranks: ContiguousArray<UInt32>, minors: ContiguousArray<Int32>, groupCountMax: Int,
        fieldRuns: FieldRunSweep
    ) -> (major: Int, cursor: Int) {
        let end = localCount
        var swept = 0
        var fieldRunSwept = 0
        defer {
            updateMajorsSwept &+= swept
            fieldRunMajorsSwept &+= fieldRunSwept
        }
        return SweepViews.with(
            kinds: kind, nodes: node, fields: field, owners: changeset, roots: roots,
            groupStart: groupStart, blockLower: blockLower, packed: groupPacked, ranks: ranks,
            minors: minors
        ) { views in
            let (kinds, nodes, fields, owners) = (views.kinds, views.nodes, views.fields,
                                                  views.owners)
            let (roots, groupStart, blockLower) = (views.roots, views.groupStart,
                                                   views.blockLower)
            let (groupPacked, ranks, minors) = (views.packed, views.ranks, views.minors)
            return groupCursor.withUnsafeBufferPointer { cursors in
                groupMinors.withUnsafeMutableBufferPointer { records in
                    flags.withUnsafeMutableBufferPointer { flags in
                        var major = first
                        while major < end {
                            let majorFlags = flags[major]
                            if majorFlags & Self.alive == 0 {
                                major += 1
                                continue
                            }
                            let majorNode = nodes[major]
                            let majorKind = kinds[major]
                            // Another kind (a schema instruction has no node) ends the sweep.
                            guard majorNode >= 0 && Self.sweepTakes(kind: majorKind) else {
                                return (major, -1)
                            }
                            let root = Int(roots[Int(majorNode)])
                            let groupFrom = Int(groupStart[root])
                            let groupEnd = Int(groupStart[root + 1])
                            if groupEnd - groupFrom >= groupCountMax {
                                // A large group's Update: its field's chain, or the usual path.
                                guard majorKind == Kind.update && blockLower[root] < 0 else {
                                    return (major, -1)
                                }
                                guard fieldRuns.isBuilt else {
                                    return (major, Self.sweepNeedsFieldRuns)
                                }
                                guard let alive = fieldRuns.mergeUpdate(
                                    major, node: majorNode, field: fields[major],
                                    majorFlags: majorFlags, rank: ranks[Int(owners[major])],
                                    flags: flags, records: records, cursors: cursors)
                                else { return (major, -1) }
                                fieldRunSwept += 1
                                if !alive { flags[major] = majorFlags & ~Self.alive }
                                major += 1
                                continue
                            }
                            guard groupPacked[root] && blockLower[root] < 0 else {
                                return (major, -1)
                            }
                            // As the walk does for the majors it dispatches (`prefetchGroup`).
                            let ahead = major + Transformer.prefetchDistance
                            if ahead < end && nodes[ahead] >= 0 {
                                let start = Int(groupStart[Int(roots[Int(nodes[ahead])])])
                                if start < records.count {
                                    syncsim_prefetch(records.baseAddress! + start)
                                }
                            }
                            let rank = ranks[Int(owners[major])]
                            let alive: Bool
                            if majorKind == Kind.update {
                                let update = UpdateMajor(
                                    node: majorNode, field: fields[major],
                                    isDefault: majorFlags & Self.isDefault != 0, rank: rank)
                                let stop: Int
                                (stop, alive) = Self.updateRun(
                                    update, packed: records, flags: flags, minors: minors,
                                    from: groupFrom, to: groupEnd)
                                if alive && stop < groupEnd {
                                    swept += 1
                                    return (major, stop)
                                }
                            } else if majorKind == Kind.createObject {
                                alive = Self.createSurvives(majorNode, records: records,
                                                            from: groupFrom, to: groupEnd)
                            } else {
                                alive = Self.eraseRun(majorNode, rank: rank, packed: records,
                                                      flags: flags, minors: minors, from: groupFrom,
                                                      to: groupEnd)
                            }
                            swept += 1
                            if !alive { flags[major] = majorFlags & ~Self.alive }
                            major += 1
                        }
                        return (end, -1)
                    }
                }
            }
        }
    }

    /// `sweepUpdateMajors`' cursor when it stopped at a large group's Update before the field
    /// runs were built.
    static let sweepNeedsFieldRuns = -2

    /// Whether the sweep takes a local instruction of kind `kind`: an Update, CreateObject or
    /// EraseObject. With `sweepTakes(packed:…)`, the walk's check before a sweep
    /// (`Transformer.sweepStarts`) and the sweep's own, per major.
    @inline(__always)
    static func sweepTakes(kind: UInt8) -> Bool {
        kind == Kind.update || kind == Kind.createObject || kind == Kind.eraseObject
    }

    /// Whether the sweep takes a major of kind `kind` (one it takes, `sweepTakes(kind:)`)
    /// whose group is as given: without list blocks (`blockLower` below 0), and either with
    /// fewer than `groupCountMax` incoming instructions and packed, or larger (field runs)
    /// and the major an Update.
    @inline(__always)
    static func sweepTakes(kind: UInt8, packed: Bool, blockLower: Int32, groupCount: Int,
                           groupCountMax: Int) -> Bool {
        if blockLower >= 0 { return false }
        return groupCount < groupCountMax ? packed : kind == Kind.update
    }

    /// Raw views of the columns and group arrays `sweepUpdateMajors` reads (reads through
    /// them are unchecked in release builds).
    struct SweepViews {
        let kinds: UnsafeBufferPointer<UInt8>
        let nodes: UnsafeBufferPointer<Int32>
        let fields: UnsafeBufferPointer<UInt32>
        let owners: UnsafeBufferPointer<UInt32>
        let roots: UnsafeBufferPointer<Int32>
        let groupStart: UnsafeBufferPointer<Int32>
        let blockLower: UnsafeBufferPointer<Int32>
        let packed: UnsafeBufferPointer<Bool>
        let ranks: UnsafeBufferPointer<UInt32>
        let minors: UnsafeBufferPointer<Int32>

        /// Runs `body` with views of the arrays.
        static func with<Result>(
            kinds: ContiguousArray<UInt8>, nodes: ContiguousArray<Int32>,
            fields: ContiguousArray<UInt32>, owners: ContiguousArray<UInt32>,
            roots: ContiguousArray<Int32>, groupStart: ContiguousArray<Int32>,
            blockLower: ContiguousArray<Int32>, packed: ContiguousArray<Bool>,
            ranks: ContiguousArray<UInt32>, minors: ContiguousArray<Int32>,
            _ body: (SweepViews) -> Result
        ) -> Result {
            kinds.withUnsafeBufferPointer { kinds in
                nodes.withUnsafeBufferPointer { nodes in
                    fields.withUnsafeBufferPointer { fields in
                        owners.withUnsafeBufferPointer { owners in
                            roots.withUnsafeBufferPointer { roots in
                                groupStart.withUnsafeBufferPointer { groupStart in
                                    blockLower.withUnsafeBufferPointer { blockLower in
                                        packed.withUnsafeBufferPointer { packed in
                                            ranks.withUnsafeBufferPointer { ranks in
                                                minors.withUnsafeBufferPointer { minors in
                                                    body(SweepViews(
                                                        kinds: kinds, nodes: nodes,
                                                        fields: fields, owners: owners,
                                                        roots: roots, groupStart: groupStart,
                                                        blockLower: blockLower, packed: packed,
                                                        ranks: ranks, minors: minors))
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The rules of a local CreateObject on `node` against the packed records
    /// `records[from ..< to]` (`Transform+Rules.swift`): an alive EraseObject of the object
    /// discards it; every other rule is a no-op.
    /// - Returns: whether the CreateObject is still alive.
    @inline(__always)
    static func createSurvives(_ node: Int32, records: UnsafeMutableBufferPointer<GroupMinor>,
                               from: Int, to: Int) -> Bool {
        for cursor in from..<to {
            let record = records[cursor]
            if record.flags & Self.alive != 0 && record.node == node
                && record.kind == Kind.eraseObject
            {
                return false
            }
        }
        return true
    }

    /// The rules of a local EraseObject on `node`, of rank `rank`, against the packed records
    /// `packed[from ..< to]` (`Transform+Rules.swift`): it discards every alive minor on the
    /// object (their slots' flags through `minors`, and their records), except an EraseObject
    /// of higher rank, which discards it instead.
    /// - Returns: whether the EraseObject is still alive.
    @inline(__always)
    static func eraseRun(
        _ node: Int32, rank: UInt32, packed: UnsafeMutableBufferPointer<GroupMinor>,
        flags: UnsafeMutableBufferPointer<UInt8>, minors: UnsafeBufferPointer<Int32>,
        from: Int, to: Int
    ) -> Bool {
        for cursor in from..<to {
            let record = packed[cursor]
            if record.flags & Self.alive == 0 || record.node != node { continue }
            if record.kind == Kind.eraseObject && record.rank > rank { return false }
            discardPacked(cursor, packed: packed, flags: flags, minors: minors)
        }
        return true
    }
}
