//! The object-node table's dense map (`ObjectNodeTable.dense`, `denseOutside`) against the
//! plain probe: `classify` must give every entry the node `existingNode(for:)` finds, or
//! `untouched` when there is none, whatever the key layout (a dense cluster, keys far outside
//! it on both sides of zero, another table, string keys) and after inserts made once the map
//! is built (as a local link into a touched object makes them).

@testable import MergeCore
import Randomness
import Testing

@Suite("Object-node table")
struct ObjectNodeTableTests {
    /// A key from one of the layouts the map must handle.
    static func key(_ random: RandomStream) -> Int64 {
        switch random.uniformInt(below: 6) {
        case 0, 1, 2: Int64(random.uniformInt(below: 300))  // the dense cluster
        case 3: (1 << 40) + Int64(random.uniformInt(below: 50))  // a client's own range
        case 4: -(1 << 41) - Int64(random.uniformInt(below: 50))  // negative keys
        default: 300 + Int64(random.uniformInt(below: 2_000))  // just beyond the window
        }
    }

    static func object(_ random: RandomStream) -> ObjectRef {
        switch random.uniformInt(below: 10) {
        case 0: ObjectRef(table: 2, key: .int(key(random)))
        case 1: ObjectRef(table: 1, key: .string("k\(random.uniformInt(below: 40))"))
        default: ObjectRef(table: 1, key: .int(key(random)))
        }
    }

    @Test("classify equals the probe, before and after inserts into a built map")
    func classifyMatchesProbe() {
        let random = RandomStream(seed: 11, id: StreamID(domain: 0x4F4E_5442))
        var mapsBuilt = 0
        var outsideLookups = 0
        for round in 0..<60 {
            var table = ObjectNodeTable()
            table.reset(capacity: 64)
            let incoming = 1 + Int(random.uniformInt(below: 400))
            // Some rounds start with a string key or another table: no map, probe only.
            for _ in 0..<incoming { _ = table.node(for: Self.object(random)) }
            // Every other round expects many lookups: the window widens (`lookups`).
            table.buildDenseIndex(lookups: round.isMultiple(of: 2) ? 0 : 4_000)
            if table.denseActive { mapsBuilt += 1 }
            for phase in 0..<2 {
                if phase == 1 {
                    for _ in 0..<Int(random.uniformInt(below: 40)) {
                        _ = table.node(for: Self.object(random))
                    }
                }
                var column = ContiguousArray<ScanEntry>()
                var objects: [ObjectRef] = []
                for _ in 0..<200 {
                    let object = Self.object(random)
                    guard case .int(let value) = object.key else { continue }
                    column.append(ScanEntry(key: UInt64(bitPattern: value), table: object.table,
                                            field: 1, kind: Kind.update,
                                            flags: TransformArena.alive))
                    objects.append(object)
                }
                var batch = LocalScanBatch()
                batch.resize(column.count)
                table.classify(column, count: column.count, into: &batch.node)
                for (position, object) in objects.enumerated() {
                    if table.denseActive && object.table == table.denseTable,
                       case .int(let value) = object.key,
                       table.denseOffset(intKey: UInt64(bitPattern: value),
                                         table: object.table) == nil
                    {
                        outsideLookups += 1
                    }
                    let expected = table.existingNode(for: object) ?? LocalScanBatch.untouched
                    #expect(batch.node[position] == expected,
                            "round \(round) phase \(phase): \(object)")
                }
            }
        }
        // The layouts above must exercise the map, not only the probe.
        #expect(mapsBuilt >= 15, "only \(mapsBuilt) of 60 rounds built a dense map")
        #expect(outsideLookups >= 1_000, "only \(outsideLookups) lookups beyond the window")
    }

    /// The map's window: the first key's, or one starting at the smallest key or ending at
    /// the largest, whichever holds the most keys. A merge whose first object is one the
    /// client created in its own key range (churn) must still map the cluster.
    @Test("the map covers the cluster when the first key, or the extremes, lie outside it")
    func windowFindsTheCluster() {
        let cluster = (0..<500).map { Int64($0 * 3) }
        let far: Int64 = 7 << 32
        for layout in 0..<4 {
            var keys = cluster
            switch layout {
            case 0: keys.insert(far, at: 0)  // first key far above the cluster
            case 1: keys.insert(-far, at: 0)  // far below
            case 2: keys.insert(far + 1, at: 0); keys.append(-far)  // outliers both ways
            default: keys.append(contentsOf: [far, far + 1])  // first key in the cluster
            }
            var table = ObjectNodeTable()
            table.reset(capacity: 64)
            for key in keys { _ = table.node(for: ObjectRef(table: 1, key: .int(key))) }
            table.buildDenseIndex()
            let mapped = table.denseActive  // (a plain Bool: the table's dump is long)
            #expect(mapped, "layout \(layout): no dense map")
            for key in cluster {
                #expect(table.denseOffset(intKey: UInt64(bitPattern: key), table: 1) != nil,
                        "layout \(layout): cluster key \(key) outside the map")
            }
            #expect(table.denseOffset(intKey: UInt64(bitPattern: far), table: 1) == nil,
                    "layout \(layout): the far key is in the map")
        }
        // A few keys scattered over a wide range: no window of four times their count holds
        // half of them, but one widened for many lookups holds them all.
        var scattered = ObjectNodeTable()
        scattered.reset(capacity: 64)
        let scatteredKeys = (0..<20).map { Int64($0) * 997 }
        for key in scatteredKeys { _ = scattered.node(for: ObjectRef(table: 1, key: .int(key))) }
        scattered.buildDenseIndex()
        let narrowMapped = scattered.denseActive
        #expect(!narrowMapped)
        scattered.buildDenseIndex(lookups: 50_000)
        let wideMapped = scattered.denseActive
        #expect(wideMapped)
        for key in scatteredKeys {
            #expect(scattered.denseOffset(intKey: UInt64(bitPattern: key), table: 1) != nil,
                    "key \(key) outside the widened map")
        }
        // Keys spread so thin that no window holds half of them: no map, probe only.
        var sparse = ObjectNodeTable()
        sparse.reset(capacity: 64)
        for index in 0..<100 {
            _ = sparse.node(for: ObjectRef(table: 1, key: .int(Int64(index) << 20)))
        }
        sparse.buildDenseIndex()
        let sparseMapped = sparse.denseActive
        #expect(!sparseMapped)
    }
}
