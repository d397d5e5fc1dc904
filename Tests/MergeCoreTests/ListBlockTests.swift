//! Differential tests of the list loop's block skipping (`Transform+ListBlocks.swift`): over
//! seeded typing workloads (a cursor that mostly steps, sometimes jumps, on the lists of two
//! objects, with random edits of every kind in between: moves, list updates, clears, object
//! erases, links that join the two objects' groups), a `Transformer` that cuts every list
//! group into small blocks must give exactly the result of one that walks every pair: the same
//! transformed changesets on both sides, in both merge forms, or the same error.

@testable import MergeCore
import Randomness
import Testing

enum ListBlockLimits {
    static let changesetsPerSideMax: UInt64 = 5
    static let editsPerChangesetMax: UInt64 = 80
    static let initialListLength = 10
}

/// A peer typing into the list of object 0 or 1, with random edits of every kind in between.
struct Typist {
    var object: Int64 = 0
    var cursor: UInt32 = 0
    /// Out of 100: edits that are not typing.
    var otherEditsPercent: UInt64 = 15
    /// The other edits sometimes erase or add column `nullableInt`.
    var schemaChanges = false
    /// Off: the typist stays on its object (with no other edits, each changeset is then one
    /// list's edits, as a typed document's is).
    var switchesObjects = true

    /// Makes one valid instruction for `replica`, applies it and returns it.
    mutating func edit(_ replica: inout Replica, _ random: RandomStream,
                       tag: Int64) throws -> Instruction {
        if switchesObjects && random.chance(1, outOf: 30) { object = 1 - object }
        let target = TestSchema.object(object)
        guard random.uniformInt(below: 100) >= otherEditsPercent,
            let list = replica.list(of: target, field: TestSchema.list)
        else {
            return try randomEdit(&replica, random,
                                  mix: EditMix(keySpace: 2, schemaChanges: schemaChanges), tag: tag)
        }
        let size = UInt32(list.count)
        if random.chance(1, outOf: 15) {
            cursor = UInt32(random.uniformInt(below: UInt64(size) + 1))
        }
        cursor = min(cursor, size)
        let instruction: Instruction
        if size == 0 || random.chance(7, outOf: 10) {
            let value = Int64(random.uniformInt(below: 1000)) + 1000 * tag
            instruction = .arrayInsert(object: target, field: TestSchema.list, index: cursor,
                                       value: .int(value), priorSize: size)
            cursor += 1
        } else {
            // Backspace; at the start, delete forward.
            let index = cursor > 0 ? cursor - 1 : 0
            if cursor > 0 { cursor -= 1 }
            instruction = .arrayErase(object: target, field: TestSchema.list, index: index,
                                      priorSize: size)
        }
        try replica.apply(instruction)
        return instruction
    }
}

/// The test schema with objects 0 ..< `documents` (0 and 1 by default), each with a list of
/// `initialListLength` elements;
/// optionally without column `nullableInt`, so that a side can add it back without erasing it
/// in the window (a local schema instruction meets every incoming one, after the list loop
/// has run on the group).
func typingBase(withoutNullableInt: Bool = false, documents: Int64 = 2) throws -> Replica {
    var base = try schemaAndObjects(EditMix(keySpace: documents))
    var instructions = ContiguousArray<Instruction>()
    for key in 0..<documents {
        for index in 0..<ListBlockLimits.initialListLength {
            instructions.append(.arrayInsert(
                object: TestSchema.object(key), field: TestSchema.list, index: UInt32(index),
                value: .int(Int64(index)), priorSize: UInt32(index)))
        }
    }
    if withoutNullableInt {
        instructions.append(.eraseColumn(table: TestSchema.table, field: TestSchema.nullableInt))
    }
    try base.apply(Changeset(version: 2, originTimestamp: 2, originFileIdent: 9,
                             instructions: instructions))
    return base
}

/// Changesets typed one after another on a copy of `base` by one peer.
func typingSide(base: Replica, random: RandomStream, fileIdent: UInt64, tag: Int64,
                otherEditsPercent: UInt64 = 15, schemaChanges: Bool = false,
                switchesObjects: Bool = true) throws -> [Changeset] {
    var scratch = base
    var typist = Typist(object: Int64(random.uniformInt(below: 2)),
                        cursor: UInt32(random.uniformInt(below: 11)),
                        otherEditsPercent: otherEditsPercent, schemaChanges: schemaChanges,
                        switchesObjects: switchesObjects)
    var changesets: [Changeset] = []
    let count = 1 + Int(random.uniformInt(below: ListBlockLimits.changesetsPerSideMax))
    for _ in 0..<count {
        var instructions = ContiguousArray<Instruction>()
        let edits = 1 + Int(random.uniformInt(below: ListBlockLimits.editsPerChangesetMax))
        for _ in 0..<edits { instructions.append(try typist.edit(&scratch, random, tag: tag)) }
        // Few distinct timestamps: insert ties are decided by file ident.
        changesets.append(Changeset(version: UInt64(changesets.count + 1),
                                    originTimestamp: 10 + random.uniformInt(below: 8),
                                    originFileIdent: fileIdent, instructions: instructions))
    }
    return changesets
}

/// Raises the prior size of one list instruction of `changesets` by 1 or 2 (a malformed
/// side: the pairwise walk reports a prior-size mismatch where it meets the instruction, so
/// neither a block nor a run of local instructions may be passed over it).
func corruptPriorSize(_ changesets: inout [Changeset], _ random: RandomStream) {
    var candidates: [(Int, Int)] = []
    for (changesetIndex, changeset) in changesets.enumerated() {
        for (position, instruction) in changeset.instructions.enumerated() {
            switch instruction {
            case .arrayInsert, .arrayErase: candidates.append((changesetIndex, position))
            default: break
            }
        }
    }
    if candidates.isEmpty { return }
    let pick = Int(random.uniformInt(below: UInt64(candidates.count)))
    let (changesetIndex, position) = candidates[pick]
    let raise = UInt32(1 + random.uniformInt(below: 2))
    switch changesets[changesetIndex].instructions[position] {
    case let .arrayInsert(object, field, index, value, priorSize):
        changesets[changesetIndex].instructions[position] = .arrayInsert(
            object: object, field: field, index: index, value: value, priorSize: priorSize + raise)
    case let .arrayErase(object, field, index, priorSize):
        changesets[changesetIndex].instructions[position] = .arrayErase(
            object: object, field: field, index: index, priorSize: priorSize + raise)
    default:
        break
    }
}

/// Whether `changesets` no longer apply to `base` (a corrupted prior size).
func corrupted(_ changesets: [Changeset], base: Replica) -> Bool {
    var replica = base
    for changeset in changesets {
        do throws(ApplyError) { try replica.apply(changeset) } catch { return true }
    }
    return false
}

/// A transformer that walks every list pair, and one that cuts every list group into blocks
/// of at most 1 to 12 minors with a straddle zone of at most 0 to 6.
func referenceAndBlockedTransformers(_ random: RandomStream) -> (Transformer, Transformer) {
    var reference = Transformer()
    reference.listBlockSettings.enabled = false
    reference.listSweepEnabled = false
    var blocked = Transformer()
    blocked.listBlockSettings = ListBlockSettings(
        enabled: true, groupCountMin: 1, lengthMax: 1 + Int(random.uniformInt(below: 12)),
        spanMax: UInt32(random.uniformInt(below: 7)), averageLengthMin: 1)
    // Regions in two seeds of three, from the smallest groups on, with little or no clearance.
    blocked.listBlockSettings.regions = ListRegionSettings(
        enabled: !random.chance(1, outOf: 3), blocksMin: 1,
        margin: Int64(random.uniformInt(below: 3)), runsPerBuildMin: 8,
        backoffMax: Int(random.uniformInt(below: 3)))
    return (reference, blocked)
}

/// A transformer that dispatches every local list edit on its own, and one that sweeps them
/// (`TransformArena.sweepListMajors`); neither cuts blocks, so every list group walks every
/// pair and the sweep takes every list edit it can.
func referenceAndSweepingTransformers() -> (reference: Transformer, sweeping: Transformer) {
    var reference = Transformer()
    reference.listBlockSettings.enabled = false
    reference.listSweepEnabled = false
    var sweeping = Transformer()
    sweeping.listBlockSettings.enabled = false
    return (reference, sweeping)
}

/// Runs one seed of a local and an incoming typing side; returns a failure or nil. With
/// `sweep`, compares the sweeping transformer with the per-edit one (and adds the list edits
/// it swept to `swept`); otherwise the blocked one with the pairwise walk.
func runListBlockSeed(_ seed: UInt64, sweep: Bool = false, swept: inout Int) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4C42_4C4B))
    do {
        let schemaChanges = random.chance(1, outOf: 3)
        let base = try typingBase(withoutNullableInt: schemaChanges)
        var local = try typingSide(base: base, random: random, fileIdent: 0, tag: 1,
                                   schemaChanges: schemaChanges)
        if random.chance(1, outOf: 8) { corruptPriorSize(&local, random) }
        var incoming = try typingSide(base: base, random: random,
                                      fileIdent: 2 + random.uniformInt(below: 2), tag: 2)
        if random.chance(1, outOf: 4) { corruptPriorSize(&incoming, random) }
        let checkConvergence = !corrupted(incoming, base: base) && !corrupted(local, base: base)
        if sweep {
            var (reference, sweeping) = referenceAndSweepingTransformers()
            let failure = compareMerges(
                reference: &reference, actual: &sweeping, base: base, local: local,
                incoming: incoming, checkConvergence: checkConvergence)
            swept += sweeping.arena.listMajorsSwept
            return failure.map { "sweep: \($0)" }
        }
        var (reference, blocked) = referenceAndBlockedTransformers(random)
        let failure = compareMerges(
            reference: &reference, actual: &blocked, base: base, local: local,
            incoming: incoming, checkConvergence: checkConvergence)
        return failure.map { "\($0)\n\(blocked.listBlockSettings)" }
    } catch {
        return "generator error: \(error)"
    }
}

/// Four typing clients integrated in turn, as a server does, by the reference and by the
/// blocked transformer (`compareServerHistories`); with `sweep`, by the per-edit and the
/// sweeping transformer (adding the list edits swept to `swept`).
func runListBlockServerSeed(_ seed: UInt64, sweep: Bool = false, swept: inout Int) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4C42_5356))
    do {
        let base = try typingBase()
        var (reference, actual) = sweep
            ? referenceAndSweepingTransformers() : referenceAndBlockedTransformers(random)
        let failure = try compareServerHistories(reference: &reference, actual: &actual) {
            client in
            try typingSide(base: base, random: random, fileIdent: UInt64(2 + client),
                           tag: Int64(client + 1))
        }
        swept += actual.arena.listMajorsSwept
        return failure.map { "\($0) (\(actual.listBlockSettings), sweep \(sweep))" }
    } catch {
        return "generator error: \(error)"
    }
}

/// Typing uploads integrated in turn, as a server does, by the two transformers `make` gives
/// (`compareServerHistories`), adding `statistic` of the second to `total`. In half the seeds
/// each typist stays on one list and makes no other edit, so most history changesets are one
/// list's edits (a typed document's); in the other half some are not.
func runTypingServerSeed(
    _ seed: UInt64, domain: UInt64, total: inout Int,
    make: (RandomStream) -> (reference: Transformer, actual: Transformer),
    statistic: (Transformer) -> Int
) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: domain))
    do {
        let base = try typingBase()
        var (reference, actual) = make(random)
        let typingOnly = random.chance(1, outOf: 2)
        let failure = try compareServerHistories(reference: &reference, actual: &actual) {
            client in
            try typingSide(base: base, random: random, fileIdent: UInt64(2 + client),
                           tag: Int64(client + 1), otherEditsPercent: typingOnly ? 0 : 15,
                           switchesObjects: !typingOnly)
        }
        total += statistic(actual)
        return failure.map { "\($0) (\(actual.listBlockSettings), typing only \(typingOnly))" }
    } catch {
        return "generator error: \(error)"
    }
}

/// `runTypingServerSeed` of the pairwise walk and the blocked transformer, which takes its
/// local runs from the history's cut runs (`ColumnListRuns`, adding how many to `taken`).
func runHistoryRunSeed(_ seed: UInt64, taken: inout Int) -> String? {
    runTypingServerSeed(seed, domain: 0x4C42_4852, total: &taken,
                        make: referenceAndBlockedTransformers,
                        statistic: \.historyListRunsTaken)
}

@Suite("List block skipping equals the pairwise walk")
struct ListBlockTests {
    @Test("typing sides with every kind of edit between")
    func typingSides() {
        var swept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) { runListBlockSeed($0, swept: &swept) }
    }

    @Test("four typing clients integrated in turn, with local edits")
    func serverHistory() {
        var swept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) {
            runListBlockServerSeed($0, swept: &swept)
        }
    }

    /// The history's cut runs (`ColumnListRuns`), taken whole and joined across changesets,
    /// give the pairwise walk's result; and they are taken (not a check that never runs).
    @Test("runs read from the history's cut runs")
    func historyRuns() {
        var taken = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) { runHistoryRunSeed($0, taken: &taken) }
        #expect(taken > 0, "no run was read from the history's cut runs")
    }

    /// The sweep of local list edits (`TransformArena.sweepListMajors`) against dispatching
    /// each on its own: the same sides (every kind of edit between, prior sizes sometimes
    /// corrupted), with no blocks, so every list group walks every pair.
    @Test("sweeping local list edits equals dispatching each on its own")
    func sweepEqualsPerEdit() {
        var swept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) {
            runListBlockSeed($0, sweep: true, swept: &swept)
        }
        var serverSwept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) {
            runListBlockServerSeed($0, sweep: true, swept: &serverSwept)
        }
        // Not vacuous: most local list edits were swept (a group's first edit is not).
        #expect(swept > 10_000, "swept \(swept) list edits")
        #expect(serverSwept > 10_000, "swept \(serverSwept) list edits in server histories")
    }

    /// Regions (`Transform+ListRegions.swift`) from the smallest groups on, with 0 to 2
    /// positions of clearance, against the pairwise walk, over server histories of four typing
    /// clients (one side in twelve with a corrupted prior size): every path of a run (clear
    /// of every region, touching some, discarding majors on the way; a touching run's majors
    /// passing a copied block whole, at a tie, or walking it; touching exactly the regions
    /// the run before it left, so that their blocks are not collected again) must give the
    /// grid's result or its error. (The path where a touching run's majors stop chaining after a
    /// walk, kept as `mergeMajorRun` has it, was reached by no generated input.)
    @Test("regions give the pairwise walk's result on every path")
    func regionsEqualPairwise() throws {
        var stats = (clear: 0, touching: 0, deferred: 0, discards: 0, split: 0, builds: 0,
                     reused: 0)
        var shifts = (ranges: 0, settled: 0)
        var cells = ListCellStats()
        recordSeedFailures(firstSeed: 1, keySpace: 2) { seed in
            let random = RandomStream(seed: seed, id: StreamID(domain: 0x4C42_5247))
            do {
                let base = try typingBase()
                var reference = Transformer()
                reference.listBlockSettings.enabled = false
                reference.listSweepEnabled = false
                var regions = Transformer()
                regions.listBlockSettings = ListBlockSettings(
                    enabled: true, groupCountMin: 1,
                    lengthMax: 2 + Int(random.uniformInt(below: 12)),
                    spanMax: UInt32(random.uniformInt(below: 5)), averageLengthMin: 1)
                regions.listBlockSettings.regions = ListRegionSettings(
                    enabled: true, blocksMin: 1, margin: Int64(random.uniformInt(below: 3)),
                    runsPerBuildMin: 8, backoffMax: Int(random.uniformInt(below: 2)))
                regions.listBlockSettings.cellChunkLength = 1 + Int(random.uniformInt(below: 4))
                regions.listBlockSettings.cellChunkSpan = Int64(random.uniformInt(below: 6))
                let otherEdits = random.chance(1, outOf: 2) ? 0 : UInt64(5)
                let failure = try compareServerHistories(reference: &reference,
                                                         actual: &regions) { client in
                    var side = try typingSide(base: base, random: random,
                                              fileIdent: UInt64(2 + client),
                                              tag: Int64(client + 1), otherEditsPercent: otherEdits)
                    if random.chance(1, outOf: 12) { corruptPriorSize(&side, random) }
                    return side
                }
                let used = regions.listRegions
                stats.clear += used.runsClear
                stats.touching += used.runsTouching
                stats.deferred += used.runsTouchingDeferred
                stats.discards += used.runsWithDiscards
                stats.split += used.runsSplit
                stats.builds += used.builds
                stats.reused += used.collectsReused
                cells.add(regions.arena.listCellStats)
                shifts.ranges += regions.listShiftRangesReported
                shifts.settled += regions.listShiftsSettled
                return failure.map { "\($0) (\(regions.listBlockSettings))" }
            } catch {
                return "generator error: \(error)"
            }
        }
        // Not vacuous: each path ran many times.
        #expect(stats.clear > 1000, "\(stats)")
        #expect(stats.touching > 1000, "\(stats)")
        // Touching runs whose slots all moved alike owed one shift, deferred as a clear
        // run's; the others (a major discarded, or moved unlike the rest) were written slot
        // by slot.
        #expect(stats.deferred > 300 && stats.deferred < stats.touching, "\(stats)")
        #expect(stats.discards > 10, "\(stats)")
        #expect(stats.builds > 300, "\(stats)")
        // Clear runs were reported as ranges, and, where the scan skipped an edit of another
        // object between their slots, slot by slot (`Transform+ListShifts.swift`).
        #expect(shifts.ranges > 1000 && shifts.settled > 10, "\(shifts)")
        // Touching runs met the regions the run before them left, without collecting again.
        #expect(stats.reused > 300 && stats.reused < stats.touching, "\(stats)")
        // Majors of touching runs met uniform blocks by each path (`ListCells`).
        #expect(cells.passed > 1000 && cells.passedAtTie > 100 && cells.walked > 1000,
                "\(cells)")
        // Tiles of majors passed chunks whole on each side (`ListCellTilesTests` has the
        // prior-size mismatches, which the typing sides here never bring to the copies).
        #expect(cells.tilesAbove > 100 && cells.tilesAtTie > 100 && cells.tilesBelow > 100,
                "\(cells)")
        print("regions: \(stats), cells: \(cells)")
    }

    @Test("the default settings pass whole blocks of a long typing run")
    func defaultSettingsPass() throws {
        let random = RandomStream(seed: 5, id: StreamID(domain: 0x4C42_4446))
        let base = try typingBase()
        var passedTotal = 0
        for round in 0..<20 {
            let local = try typingSide(base: base, random: random, fileIdent: 0, tag: 1,
                                       otherEditsPercent: 0)
            let incoming = try typingSide(base: base, random: random, fileIdent: 2, tag: 2,
                                          otherEditsPercent: 0)
            var reference = Transformer()
            reference.listBlockSettings.enabled = false
            reference.listSweepEnabled = false
            var blocked = Transformer()
            let expected = mergeResult(&reference, incoming: incoming, local: local)
            let actual = mergeResult(&blocked, incoming: incoming, local: local)
            #expect(expected == actual, "round \(round)")
            #expect(reference.arena.listBlocksPassed == 0)
            passedTotal += blocked.arena.listBlocksPassed
        }
        // Sides of up to 400 typed edits: groups of 64 or more are cut, and their typing runs
        // lie wholly above or below most local edits.
        #expect(passedTotal > 1000, "passed \(passedTotal) blocks")
    }
}
