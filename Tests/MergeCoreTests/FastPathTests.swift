//! Differential tests of the transform's fast paths (`Transform+FieldRuns.swift` and the
//! field-granularity relevance filter, `TouchedFields`): over seeded random inputs with hot
//! objects, a `Transformer` that takes every fast path (group threshold 1) must give exactly
//! the result of the pairwise walk over every local instruction of a touched object
//! (`fieldRunsEnabled = false`, `touchedFieldsFilterEnabled = false`): the same transformed
//! changesets on both sides, or the same error. Both orders must also converge. The merge that
//! reports the local side as `LocalEdits` must give, once the edits are applied, the same
//! changesets again.

@testable import MergeCore
import Randomness
import Testing

enum FastPathLimits {
    static let seedsCount: UInt64 = 300
    static let changesetsPerSideMax: UInt64 = 6
    static let editsPerChangesetMax: UInt64 = 40
}

/// Changesets made one after another on a copy of `base` by one peer.
func randomSide(base: Replica, random: RandomStream, mix: EditMix, fileIdent: UInt64,
                tag: Int64) throws -> [Changeset] {
    var scratch = base
    var changesets: [Changeset] = []
    let count = 1 + Int(random.uniformInt(below: FastPathLimits.changesetsPerSideMax))
    for _ in 0..<count {
        var instructions = ContiguousArray<Instruction>()
        let edits = 1 + Int(random.uniformInt(below: FastPathLimits.editsPerChangesetMax))
        for _ in 0..<edits {
            instructions.append(try randomEdit(&scratch, random, mix: mix, tag: tag))
        }
        // Few distinct timestamps: many ties, decided by file ident.
        changesets.append(Changeset(version: UInt64(changesets.count + 1),
                                    originTimestamp: 10 + random.uniformInt(below: 8),
                                    originFileIdent: fileIdent, instructions: instructions))
    }
    return changesets
}

/// The outcome of one merge: the rewritten sides, or the error.
enum MergeResult: Equatable {
    case merged(incoming: [Changeset], local: [Changeset])
    case failed(MergeError)
}

func mergeResult(_ transformer: inout Transformer, incoming: [Changeset],
                 local: [Changeset]) -> MergeResult {
    var transformedIncoming = ContiguousArray(incoming)
    var transformedLocal = ContiguousArray(local)
    do throws(MergeError) {
        try transformer.merge(incoming: &transformedIncoming, local: &transformedLocal,
                              localFileIdent: 1)
    } catch {
        return .failed(error)
    }
    return .merged(incoming: Array(transformedIncoming), local: Array(transformedLocal))
}

/// The same merge through `merge(incoming:local:localEdits:)`, with the edits applied to a
/// copy of `local` afterwards; `local` itself must come out unchanged.
func mergeResultViaEdits(_ transformer: inout Transformer, incoming: [Changeset],
                         local: [Changeset]) -> MergeResult {
    var transformedIncoming = ContiguousArray(incoming)
    let untouched = ContiguousArray(local)
    var edits = LocalEdits()
    do throws(MergeError) {
        try transformer.merge(incoming: &transformedIncoming, local: untouched,
                              localEdits: &edits, localFileIdent: 1)
    } catch {
        return .failed(error)
    }
    precondition(Array(untouched) == local, "the edits merge changed its local input")
    var transformedLocal = untouched
    edits.apply(to: &transformedLocal)
    return .merged(incoming: Array(transformedIncoming), local: Array(transformedLocal))
}

/// The test schema with objects `0 ..< mix.keySpace`.
func schemaAndObjects(_ mix: EditMix) throws -> Replica {
    var base = Replica()
    var setup = ContiguousArray<Instruction>(TestSchema.instructions)
    for key in 0..<mix.keySpace { setup.append(.createObject(TestSchema.object(key))) }
    try base.apply(Changeset(version: 1, originTimestamp: 1, originFileIdent: 9,
                             instructions: setup))
    return base
}

/// Runs one seed; returns a failure description or nil.
func runFastPathSeed(_ seed: UInt64, mix: EditMix) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4650_4154_4850))
    do {
        var base = try schemaAndObjects(mix)
        var scratch = base
        var prefix = ContiguousArray<Instruction>()
        for _ in 0..<40 { prefix.append(try randomEdit(&scratch, random, mix: mix, tag: 0)) }
        base = scratch
        let local = try randomSide(base: base, random: random, mix: mix, fileIdent: 0, tag: 1)
        let incoming = try randomSide(base: base, random: random, mix: mix,
                                      fileIdent: 2 + random.uniformInt(below: 2), tag: 2)
        var (pairwise, fast) = pairwiseAndFastTransformers()
        return compareMerges(reference: &pairwise, actual: &fast, base: base, local: local,
                             incoming: incoming, checkConvergence: true)
    } catch {
        return "generator error: \(error)"
    }
}

/// Merges `incoming` with `local` through `reference` and through `actual`, which must give
/// the same result; `actual` again (warm buffers) and in its local-edits form must too. With
/// `checkConvergence`, a successful merge must also converge from `base` both ways.
/// Returns a failure description or nil.
func compareMerges(reference: inout Transformer, actual: inout Transformer, base: Replica,
                   local: [Changeset], incoming: [Changeset], checkConvergence: Bool) -> String? {
    let expected = mergeResult(&reference, incoming: incoming, local: local)
    let result = mergeResult(&actual, incoming: incoming, local: local)
    guard expected == result else {
        return "the fast path differs from the reference\nlocal: \(local)\n"
            + "incoming: \(incoming)\nreference: \(expected)\nfast: \(result)"
    }
    // Reuse: a second merge on the same (warm) transformer must agree too.
    let again = mergeResult(&actual, incoming: incoming, local: local)
    guard again == expected else { return "a reused transformer disagrees" }
    // The sparse-edits form of the local side, applied, is the rewritten local side.
    let viaEdits = mergeResultViaEdits(&actual, incoming: incoming, local: local)
    guard viaEdits == expected else {
        return "local edits differ from the rewritten local side\nexpected: \(expected)\n"
            + "via edits: \(viaEdits)"
    }
    if checkConvergence, case .merged = result {
        switch mergeTwoWays(base: base, local: local, incoming: incoming) {
        case .converged: break
        case .diverged: return "the merge result diverges"
        case .applyFailed(let message): return "apply failed: \(message)"
        case .mergeFailed(let error): return "merge failed: \(error)"
        }
    }
    return nil
}

/// Runs `run` over `count` seeds from `firstSeed` and records each failure with its seed
/// (stopping after three).
func recordSeedFailures(firstSeed: UInt64, keySpace: Int64,
                        count: UInt64 = FastPathLimits.seedsCount,
                        _ run: (UInt64) -> String?) {
    var failures = 0
    for seed in firstSeed..<(firstSeed + count) {
        if let failure = run(seed) {
            failures += 1
            Issue.record("seed \(seed) keySpace \(keySpace): \(failure)")
            if failures >= 3 { break }
        }
    }
}

@Suite("Fast paths equal the pairwise walk")
struct FastPathTests {
    @Test("hot objects of Updates, AddIntegers and object erases", arguments: [2, 4] as [Int64])
    func hotFields(keySpace: Int64) {
        let mix = EditMix(lists: false, sets: false, keySpace: keySpace)
        recordSeedFailures(firstSeed: 1, keySpace: keySpace) { runFastPathSeed($0, mix: mix) }
    }

    @Test("hot objects with every kind of edit", arguments: [1, 3] as [Int64])
    func everything(keySpace: Int64) {
        let mix = EditMix(keySpace: keySpace)
        recordSeedFailures(firstSeed: 10_001, keySpace: keySpace) {
            runFastPathSeed($0, mix: mix)
        }
    }

    @Test("a hot field of Updates only, long runs on both sides")
    func longUpdateRuns() {
        var fieldRunsSwept = 0
        for seed in 1...FastPathLimits.seedsCount {
            let random = RandomStream(seed: seed, id: StreamID(domain: 0x4650_5550))
            func side(_ ident: UInt64) -> [Changeset] {
                (0..<(1 + Int(random.uniformInt(below: 8)))).map { version in
                    let instructions = ContiguousArray((0..<(1 + Int(random.uniformInt(below: 60)))).map { _ in
                        Instruction.update(object: TestSchema.object(Int64(random.uniformInt(below: 2))),
                                           field: TestSchema.plainInt,
                                           value: .int(Int64(random.uniformInt(below: 100))),
                                           isDefault: random.chance(1, outOf: 8))
                    })
                    return Changeset(version: UInt64(version + 1),
                                     originTimestamp: random.uniformInt(below: 30),
                                     originFileIdent: ident, instructions: instructions)
                }
            }
            let local = side(0)
            let incoming = side(2)
            var (pairwise, fast) = pairwiseAndFastTransformers()
            let expected = mergeResult(&pairwise, incoming: incoming, local: local)
            let actual = mergeResult(&fast, incoming: incoming, local: local)
            #expect(expected == actual, "seed \(seed)")
            if expected != actual { break }
            fieldRunsSwept += fast.arena.fieldRunMajorsSwept
        }
        // Every group takes field runs here (`fieldRunsGroupCountMin` 1), and the local
        // Updates meet nothing but Updates: the field-run sweep takes them.
        #expect(fieldRunsSwept > 1000, "\(fieldRunsSwept)")
    }
}

/// Integrates four clients' sides (`makeSide(client)`) one after another the way a server
/// does, twice: with `reference` and `merge(incoming:local:)` over a history without scan
/// columns, and with `actual` and `merge(incoming:local:localEdits:)`, whose outputs carry
/// scan columns that the later merges read. Every merge must give the same incoming
/// changesets and, once the edits are applied, the same reciprocal history (or the same
/// error). Returns a failure description or nil.
func compareServerHistories(
    reference: inout Transformer, actual: inout Transformer,
    makeSide: (_ client: Int) throws -> [Changeset]
) rethrows -> String? {
    var referenceHistory = ContiguousArray<Changeset>()
    var history = ContiguousArray<Changeset>()
    for client in 0..<4 {
        let side = try makeSide(client)
        var expectedIncoming = ContiguousArray(side)
        var expectedLocal = referenceHistory
        var incoming = ContiguousArray(side)
        var edits = LocalEdits()
        var expectedError: MergeError?
        var actualError: MergeError?
        do throws(MergeError) {
            try reference.merge(incoming: &expectedIncoming, local: &expectedLocal,
                                localFileIdent: 1)
        } catch { expectedError = error }
        do throws(MergeError) {
            try actual.merge(incoming: &incoming, local: history, localEdits: &edits,
                             localFileIdent: 1)
        } catch { actualError = error }
        guard expectedError == actualError else {
            return "client \(client): errors differ: \(String(describing: expectedError)) "
                + "vs \(String(describing: actualError))"
        }
        if expectedError != nil { return nil }
        guard Array(incoming) == Array(expectedIncoming) else {
            return "client \(client): incoming differs\nexpected: \(expectedIncoming)\n"
                + "actual: \(incoming)"
        }
        var reciprocal = history
        edits.apply(to: &reciprocal)
        guard Array(reciprocal) == Array(expectedLocal) else {
            return "client \(client): reciprocal history differs"
        }
        for changeset in incoming {
            guard let column = changeset.scanColumn,
                  Array(column.entries) == Array(ScanEntry.column(of: changeset.instructions))
            else {
                return "client \(client): an output changeset lacks its scan column"
            }
        }
        history.append(contentsOf: incoming)
        for var changeset in expectedIncoming {
            changeset.scanColumn = nil
            referenceHistory.append(changeset)
        }
    }
    return nil
}

/// `compareServerHistories` of the pairwise and the fast transformer, over `randomSide`s.
func runServerHistorySeed(_ seed: UInt64, mix: EditMix) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x5343_4F4C))
    do {
        let base = try schemaAndObjects(mix)
        var (pairwise, fast) = pairwiseAndFastTransformers()
        return try compareServerHistories(reference: &pairwise, actual: &fast) { client in
            try randomSide(base: base, random: random, mix: mix,
                           fileIdent: UInt64(2 + client), tag: Int64(client + 1))
        }
    } catch {
        return "generator error: \(error)"
    }
}

@Suite("A server history with scan columns and local edits")
struct ServerHistoryTests {
    @Test("four uploads integrated in turn equal the pairwise walk", arguments: [1, 3, 6] as [Int64])
    func uploadsInTurn(keySpace: Int64) {
        let mix = EditMix(keySpace: keySpace)
        recordSeedFailures(firstSeed: 20_001, keySpace: keySpace) {
            runServerHistorySeed($0, mix: mix)
        }
    }
}

/// The reference (`pairwiseAndFastTransformers().pairwise`) and a transformer that sweeps
/// local Updates, CreateObjects and EraseObjects (`Transform+UpdateSweep.swift`): field runs
/// only for groups of at least `fieldRunsGroupCountMin` (2 to 40 here), so that small groups
/// sweep and large ones stop the sweep, their runs numbered per object or, one time in
/// three, through the hash table (`fieldRunsDirectSpanMax` 0).
func pairwiseAndSweepingTransformers(_ random: RandomStream)
    -> (pairwise: Transformer, sweeping: Transformer)
{
    var sweeping = Transformer()
    sweeping.fieldRunsGroupCountMin = 2 + Int(random.uniformInt(below: 39))
    sweeping.touchedFieldsLocalRatioMin = Int(random.uniformInt(below: 3))
    if random.chance(1, outOf: 3) { sweeping.fieldRunsDirectSpanMax = 0 }
    return (pairwiseAndFastTransformers().pairwise, sweeping)
}

@Suite("The sweep over local Updates, creates and erases equals the pairwise walk")
struct UpdateSweepTests {
    /// Both merge forms and a server's history of four uploads, over `mix`; returns how many
    /// majors were swept, how many swept Updates were handed to the generic rules, and how
    /// many Updates of large groups it took through their field's chain (`FieldRunSweep`), and
    /// in how many two-sided merges the last build of the field runs numbered them per object
    /// or through the hash table.
    func run(mix: EditMix, firstSeed: UInt64)
        -> (swept: Int, handoffs: Int, fieldRuns: Int, direct: Int, hashed: Int)
    {
        var swept = 0
        var handoffs = 0
        var fieldRuns = 0
        var direct = 0
        var hashed = 0
        recordSeedFailures(firstSeed: firstSeed, keySpace: mix.keySpace, count: 100) { seed in
            let random = RandomStream(seed: seed, id: StreamID(domain: 0x5557_5350))
            do {
                let base = try schemaAndObjects(mix)
                let local = try randomSide(base: base, random: random, mix: mix, fileIdent: 0,
                                           tag: 1)
                let incoming = try randomSide(base: base, random: random, mix: mix,
                                              fileIdent: 2 + random.uniformInt(below: 2),
                                              tag: 2)
                var (pairwise, sweeping) = pairwiseAndSweepingTransformers(random)
                if let failure = compareMerges(reference: &pairwise, actual: &sweeping,
                                               base: base, local: local, incoming: incoming,
                                               checkConvergence: true)
                {
                    return "two sides: \(failure)"
                }
                if sweeping.fieldRuns.built {
                    if sweeping.fieldRuns.direct { direct += 1 } else { hashed += 1 }
                }
                var (pairwiseServer, sweepingServer) = pairwiseAndSweepingTransformers(random)
                let failure = try compareServerHistories(
                    reference: &pairwiseServer, actual: &sweepingServer
                ) { client in
                    try randomSide(base: base, random: random, mix: mix,
                                   fileIdent: UInt64(2 + client), tag: Int64(client + 1))
                }
                swept += sweeping.arena.updateMajorsSwept + sweepingServer.arena.updateMajorsSwept
                handoffs += sweeping.arena.updateSweepHandoffs
                    + sweepingServer.arena.updateSweepHandoffs
                fieldRuns += sweeping.arena.fieldRunMajorsSwept
                    + sweepingServer.arena.fieldRunMajorsSwept
                #expect(pairwise.arena.updateMajorsSwept == 0
                        && pairwiseServer.arena.updateMajorsSwept == 0
                        && pairwise.arena.fieldRunMajorsSwept == 0
                        && pairwiseServer.arena.fieldRunMajorsSwept == 0)
                return failure.map { "server history: \($0)" }
            } catch {
                return "generator error: \(error)"
            }
        }
        return (swept, handoffs, fieldRuns, direct, hashed)
    }

    @Test("objects and counters, few and many objects", arguments: [3, 40] as [Int64])
    func objectsAndCounters(keySpace: Int64) {
        let stats = run(mix: EditMix(lists: false, sets: false, keySpace: keySpace),
                        firstSeed: 30_001)
        // Not vacuous: many majors swept, some swept Updates met an AddInteger on their field
        // and went on by the generic rules, and the large groups' Updates went through the
        // field-run sweep (which hands back those with AddIntegers or an erase to meet).
        #expect(stats.swept > 2000 && stats.handoffs > 50 && stats.fieldRuns > 200,
                "\(stats)")
        // Both numberings of the runs were built.
        #expect(stats.direct > 5 && stats.hashed > 5, "\(stats)")
    }

    @Test("every kind of edit (lists and sets stop the sweep)", arguments: [16] as [Int64])
    func everyKind(keySpace: Int64) {
        let stats = run(mix: EditMix(keySpace: keySpace), firstSeed: 31_001)
        #expect(stats.swept > 1000, "\(stats)")
    }
}

@Suite("Scan entries cache list indices")
struct ScanEntryListIndexTests {
    @Test("the cache fits the entry's padding")
    func entryStaysTwentyFourBytes() {
        #expect(MemoryLayout<ScanEntry>.stride == 24)
    }

    @Test("an ArrayInsert or ArrayErase caches its valid indices below the limit, nothing else")
    func cacheRoundTrip() {
        let random = RandomStream(seed: 11, id: StreamID(domain: 0x5343_4E45))
        let limit = ScanEntry.listIndexLimit
        let edges: [UInt32] = [0, 1, 0xFFFF, 0x1_0000, limit - 2, limit - 1, limit, .max]
        for _ in 0..<20_000 {
            let pick = { () -> UInt32 in
                random.chance(1, outOf: 4)
                    ? edges[Int(random.uniformInt(below: UInt64(edges.count)))]
                    : UInt32(random.uniformInt(below: UInt64(limit) + 2))
            }
            let (index, priorSize) = (pick(), pick())
            for kind in [Kind.arrayInsert, Kind.arrayErase, Kind.arrayMove, Kind.update] {
                var entry = ScanEntry(key: 7, table: 1, field: 2, kind: kind, flags: 1)
                #expect(entry.cachedListIndices == nil)
                entry.cacheListIndices(index: index, priorSize: priorSize)
                let valid = kind == Kind.arrayInsert ? index <= priorSize
                    : kind == Kind.arrayErase && index < priorSize
                if valid && priorSize < limit {
                    #expect(entry.cachedListIndices?.index == index)
                    #expect(entry.cachedListIndices?.priorSize == priorSize)
                } else {
                    #expect(entry.cachedListIndices == nil, "\(kind) \(index) \(priorSize)")
                }
                #expect(entry.key == 7 && entry.table == 1 && entry.field == 2
                        && entry.kind == kind && entry.flags == 1)
            }
        }
    }

    @Test("entries read from instructions cache the inserts' and erases' indices only")
    func entriesFromInstructions() {
        let object = ObjectRef(table: 3, key: .int(42))
        let instructions: ContiguousArray<Instruction> = [
            .arrayInsert(object: object, field: 1, index: 5, value: .int(9), priorSize: 5),
            .arrayErase(object: object, field: 1, index: 70_000, priorSize: 70_001),
            .arrayMove(object: object, field: 1, from: 1, to: 2, priorSize: 6),
            .arrayInsert(object: object, field: 1, index: 0, value: .int(1),
                         priorSize: ScanEntry.listIndexLimit),
            .update(object: object, field: 2, value: .int(1), isDefault: false),
        ]
        let column = ScanEntry.column(of: instructions)
        #expect(column[0].cachedListIndices?.index == 5)
        #expect(column[0].cachedListIndices?.priorSize == 5)
        #expect(column[1].cachedListIndices?.index == 70_000)
        #expect(column[1].cachedListIndices?.priorSize == 70_001)
        #expect(column[2].cachedListIndices == nil)
        #expect(column[3].cachedListIndices == nil)
        #expect(column[4].cachedListIndices == nil)
    }
}

@Suite("The field relevance filter")
struct TouchedFieldsTests {
    @Test("masked fields, overflow fields and object erases, against a set model")
    func matchesSetModel() {
        let random = RandomStream(seed: 7, id: StreamID(domain: 0x5446_4C44))
        var filter = TouchedFields()
        for round in 0..<20 {
            filter.reset(nodesMax: 40)
            var fields = Set<UInt64>()
            var erased = Set<Int32>()
            var recordedMax: Int32?
            let nodes = 1 + Int32(random.uniformInt(below: 40))
            // Fields around the mask boundary (62) and far above it, so both paths fill.
            let fieldSpan: UInt64 = round.isMultiple(of: 2) ? 70 : 5000
            for _ in 0..<(1 + random.uniformInt(below: 300)) {
                let node = Int32(random.uniformInt(below: UInt64(nodes)))
                let erases = random.chance(1, outOf: 30)
                let field = random.chance(1, outOf: 10)
                    ? UInt32.max : UInt32(random.uniformInt(below: fieldSpan))
                filter.record(node: node, field: field, erases: erases)
                recordedMax = max(recordedMax ?? node, node)
                if erases { erased.insert(node) }
                if field != UInt32.max { fields.insert(TouchedFields.key(node: node, field: field)) }
            }
            // Nodes up to the highest one recorded are known (link targets are known without
            // being recorded); a node above it is not.
            let knownCount = Int32(filter.knownCount)
            #expect(knownCount == (recordedMax ?? -1) + 1)
            for node in 0..<(nodes + 3) {
                for field in [0, 1, 61, 62, 63, 69, 4999, UInt32.max] as [UInt32] {
                    let model = node < knownCount
                        && (field == UInt32.max || erased.contains(node)
                            || fields.contains(TouchedFields.key(node: node, field: field)))
                    #expect(filter.interacts(node: node, field: field) == model,
                            "round \(round) node \(node) field \(field)")
                }
            }
        }
    }

    @Test("the list kinds' mask marks exactly the kinds whose slots need list indices")
    func listKindsMask() {
        for kind in 0...UInt8.max {
            let entry = ScanEntry(key: 0, table: 0, field: 0, kind: kind, flags: 0)
            let masked = kind < 64 && ScanEntry.listKindsMask >> UInt64(kind) & 1 != 0
            #expect(masked == !entry.fillsSlot, "kind \(kind)")
        }
        // The loops test `kind & 63`: exact for the instruction codes and for `general`.
        let kinds = [Kind.addTable, Kind.createObject, Kind.eraseObject, Kind.update,
                     Kind.addInteger, Kind.addColumn, Kind.eraseColumn, Kind.arrayInsert,
                     Kind.arrayMove, Kind.arrayErase, Kind.clear, Kind.setInsert, Kind.setErase,
                     Kind.arrayUpdate]
        #expect(kinds.allSatisfy { $0 < 64 })
        #expect(ScanEntry.listKindsMask >> UInt64(ScanEntry.general.kind & 63) & 1 == 0)
    }

    @Test("the history scan keeps exactly what the node table and interacts keep")
    func historySelectionMatchesInteracts() {
        let random = RandomStream(seed: 11, id: StreamID(domain: 0x5346_4C44))
        var generalRounds = 0
        var keyMaskRounds = 0
        var keptTotal = 0
        var maskedKept = 0
        var maskedBeyond = 0
        var maskedStops = 0
        for round in 0..<300 {
            var table = ObjectNodeTable()
            table.reset(capacity: 64)
            // Mostly dense integer keys of table 1; some of table 2, some far away (outside
            // the map's window), and in some rounds a string key first (no map at all).
            func object() -> ObjectRef {
                switch random.uniformInt(below: 12) {
                case 0: ObjectRef(table: 2, key: .int(Int64(random.uniformInt(below: 300))))
                case 1:
                    ObjectRef(table: 1, key: .int(1_000_000 + Int64(random.uniformInt(below: 50))))
                default: ObjectRef(table: 1, key: .int(Int64(random.uniformInt(below: 300))))
                }
            }
            if round % 7 == 0 { _ = table.node(for: ObjectRef(table: 1, key: .string("s"))) }
            for _ in 0..<(1 + random.uniformInt(below: 200)) { _ = table.node(for: object()) }
            table.buildDenseIndex()
            var filter = TouchedFields()
            filter.reset(nodesMax: table.count)
            // Every fourth round records fields beyond the mask, so some answers need the hash.
            let fieldSpan: UInt64 = round % 4 == 0 ? 70 : 8
            for _ in 0..<(random.uniformInt(below: 150)) {
                filter.record(node: Int32(random.uniformInt(below: UInt64(table.count))),
                              field: UInt32(random.uniformInt(below: fieldSpan)),
                              erases: random.chance(1, outOf: 25))
            }
            var entries: [ScanEntry] = []
            var objects: [ObjectRef] = []
            for _ in 0..<Int(random.uniformInt(below: 120)) {
                let object = object()
                guard case .int(let value) = object.key else { continue }
                let field = random.chance(1, outOf: 12)
                    ? UInt32.max : UInt32(random.uniformInt(below: 72))
                entries.append(ScanEntry(key: UInt64(bitPattern: value), table: object.table,
                                         field: field, kind: Kind.update,
                                         flags: TransformArena.alive))
                objects.append(object)
            }
            let general = round % 5 == 0 && !entries.isEmpty
            if general { entries[Int(random.uniformInt(below: UInt64(entries.count)))] = .general }
            var keyMasks = [UInt64](repeating: 0, count: table.dense.count)
            keyMasks.withUnsafeMutableBufferPointer { table.fillKeyMasks(filter, into: $0) }
            if table.denseActive { keyMaskRounds += 1 }
            for filtered in [false, true] {
                var selected = [UInt64](repeating: .max, count: entries.count)
                let kept = entries.withUnsafeBufferPointer { entries in
                    keyMasks.withUnsafeBufferPointer { masks in
                        selected.withUnsafeMutableBufferPointer { selected in
                            table.selectRelevant(
                                entries, touched: filtered ? filter : nil,
                                keyMasks: filtered && table.denseActive ? masks : nil,
                                into: selected.baseAddress!)
                        }
                    }
                }
                // The model: the probe, then `interacts`, one position at a time.
                var model: [UInt64] = []
                for (position, object) in objects.enumerated() {
                    guard let node = table.existingNode(for: object) else { continue }
                    if filtered && !filter.interacts(node: node, field: entries[position].field) {
                        continue
                    }
                    model.append(UInt64(UInt32(bitPattern: node)) << 32 | UInt64(position))
                }
                guard !general else {
                    #expect(kept == nil, "round \(round)")
                    continue
                }
                guard let kept else {
                    Issue.record("round \(round): no selection without a general entry")
                    continue
                }
                #expect(Array(selected[0..<kept]) == model, "round \(round) filtered \(filtered)")
                keptTotal += kept
            }
            if general { generalRounds += 1 }
            // The short loop, on the entries a masked column may hold (the map's table, no
            // general entry, each field with a mask bit), against the same model.
            guard table.denseActive && table.dense.count > 0 else { continue }
            var masked: [ScanEntry] = []
            var maskedObjects: [ObjectRef] = []
            for (entry, object) in zip(entries, objects)
            where !entry.isGeneral && entry.table == table.denseTable
                && entry.field &+ 1 <= TouchedFields.maskedFields
            {
                masked.append(entry)
                maskedObjects.append(object)
            }
            // As the history scan runs it (the short loop, and the lookups out of line
            // where it stops at a key beyond the window that may have a node).
            var selected = [UInt64](repeating: .max, count: masked.count)
            let kept = masked.withUnsafeBufferPointer { entries in
                keyMasks.withUnsafeBufferPointer { masks in
                    selected.withUnsafeMutableBufferPointer { selected in
                        table.selectMasked(entries, touched: filter, keyMasks: masks,
                                           into: selected.baseAddress!)
                    }
                }
            }
            let window = UInt64(table.dense.count)
            if masked.contains(where: {
                ($0.key ^ 1 << 63) &- table.denseMin >= window
                    && ObjectNodeTable.outsideBit(table.denseOutsideBits, $0.key)
            }) {
                maskedStops += 1
            }
            var model: [UInt64] = []
            for (position, object) in maskedObjects.enumerated() {
                guard let node = table.existingNode(for: object),
                      filter.interacts(node: node, field: masked[position].field)
                else { continue }
                model.append(UInt64(UInt32(bitPattern: node)) << 32 | UInt64(position))
            }
            #expect(Array(selected[0..<kept]) == model, "round \(round) masked")
            maskedKept += kept
            // Kept keys beyond the window: their nodes were looked up, not read from the map.
            maskedBeyond += selected[0..<kept].filter {
                (masked[Int(UInt32(truncatingIfNeeded: $0))].key ^ 1 << 63) &- table.denseMin
                    >= window
            }.count
        }
        // Every path was exercised: general entries, the key masks, and kept instructions;
        // the short loop kept some, some of them beyond the map's window.
        #expect(generalRounds > 20 && keyMaskRounds > 100 && keptTotal > 1000)
        #expect(maskedKept > 200 && maskedBeyond > 20 && maskedStops > 20,
                "kept \(maskedKept), beyond \(maskedBeyond), stops \(maskedStops)")
    }
}

/// `rankChangesets` ranks only the sides against each other (every rule compares a local slot
/// with an incoming one), so it checks exactly that, with many ties.
@Suite("Changeset ranks")
struct ChangesetRankTests {
    @Test("changeset ranks order each local changeset against each incoming one by discriminant")
    func ranksOrderTheSides() {
        let random = RandomStream(seed: 5, id: StreamID(domain: 0x5241_4E4B))
        var transformer = Transformer()
        var ties = 0
        for round in 0..<300 {
            let localCount = Int(random.uniformInt(below: 40))
            let incomingCount = Int(random.uniformInt(below: 12))
            let empty = Changeset(version: 1, originTimestamp: 1, originFileIdent: 1,
                                  instructions: [])
            transformer.changesets.local = ContiguousArray(repeating: empty, count: localCount)
            transformer.changesets.incoming = ContiguousArray(repeating: empty,
                                                               count: incomingCount)
            transformer.localChangesetCount = localCount
            // Few distinct discriminants, so ties across the sides are common.
            transformer.discriminantTime = ContiguousArray((0..<(localCount + incomingCount)).map {
                _ in random.uniformInt(below: 4)
            })
            transformer.discriminantIdent = ContiguousArray(
                (0..<(localCount + incomingCount)).map { _ in 1 + random.uniformInt(below: 3) })
            transformer.rankChangesets()
            let ranks = transformer.changesetRank
            let times = transformer.discriminantTime
            let idents = transformer.discriminantIdent
            for local in 0..<localCount {
                for incoming in localCount..<(localCount + incomingCount) {
                    let localHigher = (times[local], idents[local])
                        > (times[incoming], idents[incoming])
                    if (times[local], idents[local]) == (times[incoming], idents[incoming]) {
                        ties += 1
                    }
                    // The local changeset beats the incoming one exactly when its discriminant
                    // is higher: a tie goes to the incoming side.
                    #expect((ranks[local] > ranks[incoming]) == localHigher,
                            "round \(round): local \(local) vs incoming \(incoming)")
                    #expect(ranks[local] != ranks[incoming], "round \(round)")
                }
            }
        }
        #expect(ties > 100)
    }
}

/// The reference transformer (every local instruction of a touched object, pairwise, each on
/// its own) and one that takes every fast path (field runs for any group, the field filter
/// always built, list edits swept).
func pairwiseAndFastTransformers() -> (pairwise: Transformer, fast: Transformer) {
    var pairwise = Transformer()
    pairwise.fieldRunsEnabled = false
    pairwise.touchedFieldsFilterEnabled = false
    pairwise.listSweepEnabled = false
    pairwise.updateSweepEnabled = false
    var fast = Transformer()
    fast.fieldRunsGroupCountMin = 1
    fast.touchedFieldsLocalRatioMin = 0
    return (pairwise, fast)
}
