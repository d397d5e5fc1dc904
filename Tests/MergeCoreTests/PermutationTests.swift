//! Upload-order independence (the reference's `Associativity` harness, REALM-SEMANTICS §2.1):
//! 3 and 4 clients make concurrent changesets on one synced state; every permutation of their
//! upload order must give the same server state, and every client must then converge to it.
//!
//! With lists, the server state may depend on the upload order (the TP2 limitation of
//! index-based list OT, `Transform.swift`), but only in the order of list elements, as the
//! pairwise rules alone give it; with list inserts and erases only, only in the order of two
//! clients' concurrent inserts. Those cases are counted and printed.
//!
//! 40 seeds per test by default (and a few known order-dependent ones); a larger sweep:
//!
//!     SYNCSIM_PERMUTATION_SEEDS=3000 swift test -c release --filter PermutationTests

@testable import MergeCore
import Randomness
import Testing

/// All permutations of `0 ..< count`, in lexicographic order.
func permutations(_ count: Int) -> [[Int]] {
    if count == 0 { return [[]] }
    var result: [[Int]] = []
    for rest in permutations(count - 1) {
        for position in 0...rest.count {
            var permutation = rest
            permutation.insert(count - 1, at: position)
            result.append(permutation)
        }
    }
    return result.sorted { $0.lexicographicallyPrecedes($1) }
}

/// What the upload orders of one permutation scenario gave.
enum PermutationOutcome {
    /// One server state for every order, every client converged to it.
    case oneState
    /// Two orders gave different server states (every client still converged in each).
    /// `inserts[c]`: the values of client c's concurrent ArrayInserts.
    case orderDependent(order: [Int], base: Replica, inserts: [[Int64]], first: Replica,
                        this: Replica)
    /// A client diverged, or a merge or the setup failed: always a bug.
    case failed(String)

    /// The failure or order dependence, in words (nil for `oneState`).
    var failure: String? {
        switch self {
        case .oneState: nil
        case .failed(let message): message
        case .orderDependent(let order, _, _, let first, let this):
            "order \(order) gives a different server state\nfirst:\n\(first.debugDump())"
                + "\nthis:\n\(this.debugDump())"
        }
    }
}

/// Runs one permutation scenario over every upload order of its clients.
/// `transformer` is the one the server and every client merge with.
func runPermutationScenario(seed: UInt64, clientsCount: Int, mix: EditMix,
                            changesetsPerClient: Int,
                            transformer: Transformer = Transformer()) -> PermutationOutcome {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x5045_524D))
    var server = ModelServer(clientCount: clientsCount)
    var setupCount = Array(repeating: 0, count: clientsCount)
    server.transformer = transformer
    var clients = (0..<clientsCount).map { id in
        var client = ModelClient(id: id)
        client.transformer = transformer
        return client
    }
    do {
        // A common starting state: client 0 declares the schema and a few objects.
        try clients[0].commit(TestSchema.instructions, timestamp: 1)
        try clients[0].commitRandom(count: 12, random: random, mix: mix, timestamp: 2)
        try clients[0].upload(to: &server)
        for index in clients.indices { try clients[index].download(from: server) }
        for index in clients.indices {
            setupCount[index] = clients[index].local.count
            for step in 0..<changesetsPerClient {
                // Equal timestamps are common: the file ident then decides.
                let timestamp = 10 + random.uniformInt(below: 3) + UInt64(step)
                try clients[index].commitRandom(count: 1 + Int(random.uniformInt(below: 4)),
                                                random: random, mix: mix, timestamp: timestamp)
            }
        }
    } catch {
        return .failed("setup failed: \(error)")
    }
    var reference: Replica?
    for order in permutations(clientsCount) {
        var orderServer = server
        var orderClients = clients
        do {
            for index in order { try orderClients[index].upload(to: &orderServer) }
            for index in orderClients.indices { try orderClients[index].download(from: orderServer) }
        } catch {
            return .failed("order \(order): \(error)")
        }
        for client in orderClients where client.state != orderServer.state {
            return .failed("order \(order): client \(client.id) diverged")
        }
        if let reference, reference != orderServer.state {
            let inserts = clients.indices.map { index in
                clients[index].local[setupCount[index]...].flatMap { entry in
                    entry.original.instructions.compactMap { instruction -> Int64? in
                        guard case .arrayInsert(_, _, _, .int(let value), _) = instruction
                        else { return nil }
                        return value
                    }
                }
            }
            return .orderDependent(order: order, base: server.state, inserts: inserts,
                                   first: reference, this: orderServer.state)
        }
        reference = orderServer.state
    }
    return .oneState
}

/// How two server states of `TestSchema` differ beyond the order of list elements: nil when
/// they hold the same schema, objects, field values, sets and counters, and lists with the
/// same elements (as multisets); else the first difference found, in words.
func differenceBeyondListOrder(_ first: Replica, _ second: Replica) -> String? {
    if first.tables != second.tables { return "different schemas" }
    let objects = first.objects(in: TestSchema.table).sorted()
    if objects != second.objects(in: TestSchema.table).sorted() { return "different objects" }
    for object in objects {
        for field in [TestSchema.nullableInt, TestSchema.plainInt, TestSchema.link]
        where first.value(of: object, field: field) != second.value(of: object, field: field) {
            return "\(object) field \(field) differs"
        }
        if first.setElements(of: object, field: TestSchema.set)
            != second.setElements(of: object, field: TestSchema.set)
        {
            return "\(object) set differs"
        }
        let lists = (first.list(of: object, field: TestSchema.list) ?? [],
                     second.list(of: object, field: TestSchema.list) ?? [])
        func counts(_ list: [Value]) -> [Value: Int] {
            list.reduce(into: [:]) { $0[$1, default: 0] += 1 }
        }
        if counts(lists.0) != counts(lists.1) {
            return "\(object) list holds different elements: \(lists.0) and \(lists.1)"
        }
    }
    return nil
}

enum PermutationLimits {
    static let seedsCount = environmentInteger("SYNCSIM_PERMUTATION_SEEDS") ?? 40
    /// Seeds 1 … `seedsCount`, then the first order-dependent seeds of the 3,000-seed sweep
    /// with all list edits (113 with 3 clients, 115 with 4) and with inserts and erases only
    /// (50 with 3 clients, 5 with 4), so that the default run checks order-dependent cases.
    static var listSeeds: [UInt64] {
        Array(1...UInt64(seedsCount)) + [50, 113, 115].filter { $0 > UInt64(seedsCount) }
    }
}

@Suite("Upload-order permutations")
struct PermutationTests {
    @Test("every upload order gives one server state (objects, fields, counters, sets)",
          arguments: [3, 4])
    func mapAndSetPermutations(clientsCount: Int) {
        var failures: [String] = []
        for seed in UInt64(1)...PermutationLimits.seedsCount {
            if let failure = runPermutationScenario(seed: seed, clientsCount: clientsCount,
                                                    mix: .noLists, changesetsPerClient: 2).failure {
                failures.append("seed \(seed): \(failure)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("lists: upload orders converge, and may reorder list elements, only as the rules do",
          arguments: [3, 4])
    func listPermutations(clientsCount: Int) {
        // Reordered pairs counted, not checked: moves can reorder base elements and one
        // client's elements too, and an ArrayUpdate's value names no element.
        sweepListPermutations(clientsCount: clientsCount, mix: .everything,
                              label: "list permutations") { _, _ in }
    }

    @Test("list inserts and erases: orders reorder only two clients' concurrent inserts",
          arguments: [3, 4])
    func listInsertErasePermutations(clientsCount: Int) {
        sweepListPermutations(clientsCount: clientsCount, mix: .listInsertsAndErases,
                              label: "list inserts and erases") { pairs, context in
            #expect(pairs.base == 0 && pairs.sameClient == 0, "\(context): \(pairs)")
            #expect(pairs.crossClient + pairs.unnamed > 0, "\(context)")
        }
    }

    /// Runs `PermutationLimits.listSeeds` with `mix`: a client's divergence or an error fails;
    /// an order-dependent server state must differ only in the order of list elements, as the
    /// pairwise rules alone give it, and its reordered pairs go to `checkPairs` (with the seed
    /// and order, for messages). Prints the count and the pairs.
    private func sweepListPermutations(
        clientsCount: Int, mix: EditMix, label: String,
        checkPairs: (ReorderedPairs, String) -> Void
    ) {
        var orderDependent = 0
        var firstOrderDependent: UInt64?
        var pairs = ReorderedPairs()
        let seeds = PermutationLimits.listSeeds
        for seed in seeds {
            switch runPermutationScenario(seed: seed, clientsCount: clientsCount, mix: mix,
                                          changesetsPerClient: 2) {
            case .oneState:
                break
            case .failed(let failure):
                // Divergence of a client, or an error, is a bug.
                Issue.record("seed \(seed): \(failure)")
            case .orderDependent(let order, let base, let inserts, let first, let this):
                // The documented TP2 limitation of index-based list OT moves list elements,
                // and only them: anything else is a bug.
                let context = "seed \(seed), order \(order)"
                let beyond = differenceBeyondListOrder(first, this)
                #expect(beyond == nil, "\(context): \(beyond ?? "")")
                expectPairwiseAgrees(seed: seed, clientsCount: clientsCount, mix: mix,
                                     order: order, first: first, this: this)
                let seedPairs = ReorderedPairs(base: base, inserts: inserts, first, this)
                checkPairs(seedPairs, context)
                pairs.add(seedPairs)
                orderDependent += 1
                if firstOrderDependent == nil { firstOrderDependent = seed }
            }
        }
        #expect(orderDependent > 0, "no order-dependent seed: the checks above went unused")
        print("\(label) with \(clientsCount) clients: \(orderDependent) of \(seeds.count) "
              + "seeds order-dependent"
              + (firstOrderDependent.map { " (first: seed \($0))" } ?? "")
              + "; reordered pairs: \(pairs)")
    }

    @Test("the TP2 puzzle by hand: two upload orders, two server states")
    func tp2Puzzle() throws {
        // Base [10, 20]. Client 0 inserts 1 before 20, client 1 erases 20, client 2 inserts 2
        // after 20; client 2's changeset has the lower discriminant (timestamp 5 against 10).
        let object = TestSchema.object(1)
        func run(_ order: [Int]) throws -> [Value] {
            var server = ModelServer(clientCount: 3)
            var clients = (0..<3).map { ModelClient(id: $0) }
            try clients[0].commit(TestSchema.instructions + [
                .createObject(object),
                .arrayInsert(object: object, field: TestSchema.list, index: 0, value: .int(10),
                             priorSize: 0),
                .arrayInsert(object: object, field: TestSchema.list, index: 1, value: .int(20),
                             priorSize: 1),
            ], timestamp: 1)
            try clients[0].upload(to: &server)
            for index in clients.indices { try clients[index].download(from: server) }
            try clients[0].commit([.arrayInsert(object: object, field: TestSchema.list,
                                                index: 1, value: .int(1), priorSize: 2)],
                                  timestamp: 10)
            try clients[1].commit([.arrayErase(object: object, field: TestSchema.list,
                                               index: 1, priorSize: 2)], timestamp: 10)
            try clients[2].commit([.arrayInsert(object: object, field: TestSchema.list,
                                                index: 2, value: .int(2), priorSize: 2)],
                                  timestamp: 5)
            for index in order { try clients[index].upload(to: &server) }
            for index in clients.indices {
                try clients[index].download(from: server)
                #expect(clients[index].state == server.state, "order \(order)")
            }
            return server.state.list(of: object, field: TestSchema.list) ?? []
        }
        // The erase first: 1 and 2 meet at one index, and the lower discriminant (client 2's)
        // goes first. The erase last: 1 and 2 were a position apart when they met.
        #expect(try run([1, 0, 2]) == [.int(10), .int(2), .int(1)])
        #expect(try run([0, 2, 1]) == [.int(10), .int(1), .int(2)])
    }
}

/// The checks' own helpers on hand-made states: a test that tolerates "lists differ only in
/// order" must see every other difference.
@Suite("Upload-order permutations: the comparisons")
struct PermutationComparisonTests {
    /// A `TestSchema` state with object 1 holding `list`, object 2 holding `plain` in its
    /// plain int field and `set` in its set.
    func state(list: [Int64], plain: Int64 = 0, set: [Int64] = [], objects: [Int64] = [1, 2])
        throws -> Replica
    {
        var replica = Replica()
        for instruction in TestSchema.instructions { try replica.apply(instruction) }
        for key in objects { try replica.apply(.createObject(TestSchema.object(key))) }
        for (index, value) in list.enumerated() {
            try replica.apply(.arrayInsert(object: TestSchema.object(1), field: TestSchema.list,
                                           index: UInt32(index), value: .int(value),
                                           priorSize: UInt32(index)))
        }
        try replica.apply(.update(object: TestSchema.object(2), field: TestSchema.plainInt,
                                  value: .int(plain), isDefault: false))
        for value in set {
            try replica.apply(.setInsert(object: TestSchema.object(2), field: TestSchema.set,
                                         value: .int(value)))
        }
        return replica
    }

    @Test("a list's order is the only difference tolerated")
    func differences() throws {
        let reference = try state(list: [1000, 2000, 3000], plain: 5, set: [1])
        #expect(differenceBeyondListOrder(reference, reference) == nil)
        #expect(differenceBeyondListOrder(
            reference, try state(list: [2000, 1000, 3000], plain: 5, set: [1])) == nil)
        for other in [
            try state(list: [1000, 2000, 3001], plain: 5, set: [1]),  // an element's value
            try state(list: [1000, 2000], plain: 5, set: [1]),  // an element fewer
            try state(list: [1000, 2000, 3000], plain: 6, set: [1]),  // a field
            try state(list: [1000, 2000, 3000], plain: 5, set: [1, 2]),  // a set
            try state(list: [1000, 2000, 3000], plain: 5, set: [1], objects: [1, 2, 3]),
        ] {
            #expect(differenceBeyondListOrder(reference, other) != nil, "\(other.debugDump())")
        }
    }

    @Test("reordered pairs are told apart by who inserted their elements")
    func pairs() throws {
        // Base [1000]; client 0 inserted 1001 and 1002, client 1 inserted 2001.
        let base = try state(list: [1000])
        let inserts: [[Int64]] = [[1001, 1002], [2001]]
        let first = try state(list: [1000, 1001, 1002, 2001])
        func pairs(_ list: [Int64]) throws -> ReorderedPairs {
            ReorderedPairs(base: base, inserts: inserts, first, try state(list: list))
        }
        #expect(try pairs([1000, 1001, 1002, 2001]).description
                == ReorderedPairs().description)
        #expect(try pairs([1000, 1001, 2001, 1002]).crossClient == 1)
        #expect(try pairs([1000, 1002, 1001, 2001]).sameClient == 1)
        #expect(try pairs([1001, 1000, 1002, 2001]).base == 1)
        // A value two sources hold names no element.
        let unnamed = ReorderedPairs(base: base, inserts: [[1001, 1002], [1001]], first,
                                     try state(list: [1000, 1002, 1001, 2001]))
        #expect(unnamed.unnamed == 1 && unnamed.sameClient == 0)
    }
}

/// Checks that the transformer with every fast path off (each pair by the rules) gives the
/// same first order-dependent upload order and the same two states as the default one: the
/// order dependence is the rules', not a fast path's.
func expectPairwiseAgrees(seed: UInt64, clientsCount: Int, mix: EditMix, order: [Int],
                          first: Replica, this: Replica) {
    var pairwise = pairwiseAndFastTransformers().pairwise
    pairwise.listBlockSettings.enabled = false
    pairwise.listSequenceSettings.enabled = false
    let outcome = runPermutationScenario(seed: seed, clientsCount: clientsCount, mix: mix,
                                         changesetsPerClient: 2, transformer: pairwise)
    guard case .orderDependent(let pairwiseOrder, _, _, let pairwiseFirst, let pairwiseThis)
        = outcome
    else {
        Issue.record("seed \(seed): the pairwise rules give \(outcome.failure ?? "one state")")
        return
    }
    #expect(pairwiseOrder == order && pairwiseFirst == first && pairwiseThis == this,
            "seed \(seed): the pairwise rules disagree with the fast paths")
}

/// The pairs of list elements that two server states of `TestSchema` hold in opposite
/// orders, by who inserted them. With list inserts and erases only, a value names its element
/// when exactly one source holds it: the common base's list, or one client's concurrent
/// inserts (values are drawn per client, `randomEdit`'s tag, but may repeat).
struct ReorderedPairs: CustomStringConvertible {
    /// Two elements that two different clients inserted concurrently.
    var crossClient = 0
    /// Two elements one client inserted.
    var sameClient = 0
    /// A pair with an element of the base.
    var base = 0
    /// A pair with a value that names no single element.
    var unnamed = 0

    init() {}

    init(base baseState: Replica, inserts: [[Int64]], _ first: Replica, _ second: Replica) {
        // Who holds each value, for each object's list: -1 the base, c client c, nil several.
        for object in first.objects(in: TestSchema.table) {
            let one = Self.ints(first.list(of: object, field: TestSchema.list))
            let other = Self.ints(second.list(of: object, field: TestSchema.list))
            if one == other { continue }
            var sources: [Int64: [Int]] = [:]
            for value in Self.ints(baseState.list(of: object, field: TestSchema.list)) {
                sources[value, default: []].append(-1)
            }
            for (client, values) in inserts.enumerated() {
                for value in values { sources[value, default: []].append(client) }
            }
            func source(_ value: Int64) -> Int? {
                guard let holders = sources[value], holders.count == 1 else { return nil }
                return holders[0]
            }
            var positions: [Int64: Int] = [:]
            for (offset, value) in other.enumerated() { positions[value] = offset }
            for i in one.indices {
                for j in one.indices where j > i {
                    // A value missing from `other` (a bug `differenceBeyondListOrder` reports)
                    // names nothing here.
                    guard let p = positions[one[i]], let q = positions[one[j]] else {
                        unnamed += 1
                        continue
                    }
                    if p <= q { continue }
                    guard let u = source(one[i]), let v = source(one[j]) else {
                        unnamed += 1
                        continue
                    }
                    if u < 0 || v < 0 {
                        base += 1
                    } else if u == v {
                        sameClient += 1
                    } else {
                        crossClient += 1
                    }
                }
            }
        }
    }

    private static func ints(_ list: [Value]?) -> [Int64] {
        (list ?? []).map { value in
            guard case .int(let number) = value else {
                preconditionFailure("a TestSchema list holds ints")
            }
            return number
        }
    }

    mutating func add(_ other: ReorderedPairs) {
        crossClient += other.crossClient
        sameClient += other.sameClient
        base += other.base
        unnamed += other.unnamed
    }

    var description: String {
        "\(crossClient) of two clients' inserts, \(sameClient) of one client's, \(base) with a "
            + "base element, \(unnamed) unnamed"
    }
}
