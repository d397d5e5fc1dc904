//! Upload-order independence (the reference's `Associativity` harness, REALM-SEMANTICS §2.1):
//! 3 and 4 clients make concurrent changesets on one synced state; every permutation of their
//! upload order must give the same server state, and every client must then converge to it.
//!
//! 40 seeds per test by default; a larger sweep (lists' order dependence is counted and
//! printed, not failed):
//!
//!     SYNCSIM_PERMUTATION_SEEDS=3000 swift test -c release --filter PermutationTests

import MergeCore
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

/// Runs one permutation scenario; returns a failure description or nil.
func runPermutationScenario(seed: UInt64, clientsCount: Int, mix: EditMix,
                            changesetsPerClient: Int) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x5045_524D))
    var server = ModelServer(clientCount: clientsCount)
    var clients = (0..<clientsCount).map { ModelClient(id: $0) }
    do {
        // A common starting state: client 0 declares the schema and a few objects.
        try clients[0].commit(TestSchema.instructions, timestamp: 1)
        try clients[0].commitRandom(count: 12, random: random, mix: mix, timestamp: 2)
        try clients[0].upload(to: &server)
        for index in clients.indices { try clients[index].download(from: server) }
        for index in clients.indices {
            for step in 0..<changesetsPerClient {
                // Equal timestamps are common: the file ident then decides.
                let timestamp = 10 + random.uniformInt(below: 3) + UInt64(step)
                try clients[index].commitRandom(count: 1 + Int(random.uniformInt(below: 4)),
                                                random: random, mix: mix, timestamp: timestamp)
            }
        }
    } catch {
        return "setup failed: \(error)"
    }
    var reference: Replica?
    for order in permutations(clientsCount) {
        var orderServer = server
        var orderClients = clients
        do {
            for index in order { try orderClients[index].upload(to: &orderServer) }
            for index in orderClients.indices { try orderClients[index].download(from: orderServer) }
        } catch {
            return "order \(order): \(error)"
        }
        for client in orderClients where client.state != orderServer.state {
            return "order \(order): client \(client.id) diverged"
        }
        if let reference, reference != orderServer.state {
            return "order \(order) gives a different server state\nfirst:\n\(reference.debugDump())\nthis:\n\(orderServer.state.debugDump())"
        }
        reference = orderServer.state
    }
    return nil
}

enum PermutationLimits {
    static let seedsCount = environmentInteger("SYNCSIM_PERMUTATION_SEEDS") ?? 40
}

@Suite("Upload-order permutations")
struct PermutationTests {
    @Test("every upload order gives one server state (objects, fields, counters, sets)",
          arguments: [3, 4])
    func mapAndSetPermutations(clientsCount: Int) {
        var failures: [String] = []
        for seed in UInt64(1)...PermutationLimits.seedsCount {
            if let failure = runPermutationScenario(seed: seed, clientsCount: clientsCount,
                                                    mix: .noLists, changesetsPerClient: 2) {
                failures.append("seed \(seed): \(failure)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("every upload order converges for lists; the server state may depend on the order",
          arguments: [3, 4])
    func listPermutations(clientsCount: Int) {
        var orderDependent = 0
        var firstOrderDependent: UInt64?
        for seed in UInt64(1)...PermutationLimits.seedsCount {
            if let failure = runPermutationScenario(seed: seed, clientsCount: clientsCount,
                                                    mix: .everything, changesetsPerClient: 2) {
                // Divergence of a client, or an error, is a bug; an order-dependent server
                // state is the documented TP2 limitation of index-based list OT.
                let tolerated = failure.contains("gives a different server state")
                #expect(tolerated, "seed \(seed): \(failure)")
                if tolerated {
                    orderDependent += 1
                    if firstOrderDependent == nil { firstOrderDependent = seed }
                }
            }
        }
        print("list permutations with \(clientsCount) clients: \(orderDependent) of "
              + "\(PermutationLimits.seedsCount) seeds order-dependent"
              + (firstOrderDependent.map { " (first: seed \($0))" } ?? ""))
    }
}
