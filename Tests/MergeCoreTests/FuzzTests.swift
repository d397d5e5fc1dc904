//! Randomized multi-client convergence fuzz, in the manner of realm-core's
//! `test/fuzz_tester.hpp`: four clients with skewed clocks make random edits (a small key
//! space, erases racing updates, lists, sets, links, counters, default writes), upload and
//! download in a random interleaving through `ModelServer`; after a final full sync every
//! client must equal the server.
//!
//! Run many more seeds (release is much faster):
//!
//!     SYNCSIM_FUZZ_SEEDS=100000 swift test -c release --filter MergeCoreTests.FuzzTests
//!
//! `SYNCSIM_FUZZ_FIRST_SEED=N` starts at seed N. A second test runs a third as many seeds with
//! EraseColumn/AddColumn races mixed in (the all-pairs fallback). A failing seed prints one line:
//!
//!     reproduce: SYNCSIM_FUZZ_FIRST_SEED=123 SYNCSIM_FUZZ_SEEDS=1 swift test --filter MergeCoreTests.FuzzTests

#if os(Linux)
import Glibc
#else
import Darwin
#endif
import MergeCore
import Randomness
import Testing

/// Reads a non-negative integer from the environment.
func environmentInteger(_ name: String) -> UInt64? {
    guard let raw = getenv(name) else { return nil }
    return UInt64(String(cString: raw))
}

enum FuzzLimits {
    static let clientsCount = 4
    static let stepsPerRound = 120
    static let roundsPerSeed = 2
    static let defaultSeedsCount: UInt64 = 300
}

/// Runs one fuzz seed; returns a failure description or nil.
func runFuzzSeed(_ seed: UInt64, mix: EditMix = .everything) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4D43_4655_5A5A))
    var server = ModelServer(clientCount: FuzzLimits.clientsCount)
    var clients = (0..<FuzzLimits.clientsCount).map { ModelClient(id: $0) }
    var clocks = (0..<FuzzLimits.clientsCount).map { _ in
        SkewedClock(now: 1_000 + random.uniformInt(below: 20))
    }
    var modifications = 0
    do {
        // Every client declares the schema concurrently (identical AddTable/AddColumn merge).
        for index in clients.indices {
            try clients[index].commit(TestSchema.instructions, timestamp: clocks[index].now)
        }
        for _ in 0..<FuzzLimits.roundsPerSeed {
            for _ in 0..<FuzzLimits.stepsPerRound {
                let index = Int(random.uniformInt(below: UInt64(clients.count)))
                let action = random.uniformInt(below: 10)
                if action < 5 {
                    let count = 1 + Int(random.uniformInt(below: 5))
                    modifications += count
                    try clients[index].commitRandom(count: count, random: random, mix: mix,
                                                    timestamp: clocks[index].tick(random))
                } else if action < 8 {
                    try clients[index].upload(to: &server)
                } else {
                    try clients[index].download(from: server)
                }
            }
            // Heal: everyone uploads, then everyone downloads.
            for index in clients.indices { try clients[index].upload(to: &server) }
            for index in clients.indices { try clients[index].download(from: server) }
            for client in clients where client.state != server.state {
                return "client \(client.id) diverged from the server after \(modifications) modifications\nserver:\n\(server.state.debugDump())\nclient:\n\(client.state.debugDump())"
            }
            for client in clients {
                precondition(client.state.contentDigest() == server.state.contentDigest(),
                             "equal replicas with different digests")
            }
        }
    } catch {
        return "error after \(modifications) modifications: \(error)"
    }
    return nil
}

@Suite("Fuzz: multi-client convergence")
struct FuzzTests {
    @Test("random multi-client histories converge")
    func randomHistoriesConverge() {
        let first = environmentInteger("SYNCSIM_FUZZ_FIRST_SEED") ?? 1
        let count = environmentInteger("SYNCSIM_FUZZ_SEEDS") ?? FuzzLimits.defaultSeedsCount
        var failures = 0
        for seed in first..<(first + count) {
            if let failure = runFuzzSeed(seed) {
                failures += 1
                print("reproduce: SYNCSIM_FUZZ_FIRST_SEED=\(seed) SYNCSIM_FUZZ_SEEDS=1 swift test --filter MergeCoreTests.FuzzTests")
                Issue.record("seed \(seed): \(failure)")
                if failures >= 3 { break }
            }
        }
    }

    @Test("random multi-client histories with EraseColumn/AddColumn races converge")
    func schemaChangesConverge() {
        let first = environmentInteger("SYNCSIM_FUZZ_FIRST_SEED") ?? 1
        let count = (environmentInteger("SYNCSIM_FUZZ_SEEDS") ?? FuzzLimits.defaultSeedsCount) / 3
        var failures = 0
        for seed in first..<(first + max(count, 1)) {
            if let failure = runFuzzSeed(seed, mix: .withSchemaChanges) {
                failures += 1
                print("reproduce: SYNCSIM_FUZZ_FIRST_SEED=\(seed) SYNCSIM_FUZZ_SEEDS=1 swift test --filter MergeCoreTests.FuzzTests/schemaChangesConverge")
                Issue.record("seed \(seed) (schema changes): \(failure)")
                if failures >= 3 { break }
            }
        }
    }

    @Test("the same seed gives the same server digest twice")
    func deterministic() {
        func digest(_ seed: UInt64) -> UInt64 {
            let random = RandomStream(seed: seed, id: StreamID(domain: 7))
            var client = ModelClient(id: 0)
            var server = ModelServer(clientCount: 1)
            try! client.commit(TestSchema.instructions, timestamp: 1)
            for step in 0..<20 {
                try! client.commitRandom(count: 5, random: random, mix: .everything,
                                         timestamp: UInt64(step))
            }
            try! client.upload(to: &server)
            return server.state.contentDigest()
        }
        #expect(digest(42) == digest(42))
        #expect(digest(42) != digest(43))
    }
}
