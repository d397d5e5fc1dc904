//! Differential tests of the history slots a server's transformer keeps from one merge to the
//! next (`HistoryPrefix.swift`): a transformer that keeps them must give exactly the results
//! of one that enters the whole history afresh on every merge, through histories that keep
//! it (typed documents), histories it must give up part of (an upload on another document
//! skips changesets the last one kept), failed merges, and one transformer serving two
//! servers in turns.

@testable import MergeCore
import Randomness
import Testing

/// A transformer as a server runs it, and one that never keeps history slots.
func keepingAndFreshTransformers() -> (fresh: Transformer, keeping: Transformer) {
    var fresh = Transformer()
    fresh.historyPrefixEnabled = false
    return (fresh, Transformer())
}

/// `runTypingServerSeed` of a transformer that keeps history slots and one that does not,
/// adding the slots kept to `kept`.
func runHistoryPrefixSeed(_ seed: UInt64, kept: inout Int) -> String? {
    runTypingServerSeed(seed, domain: 0x4850_5246, total: &kept,
                        make: { _ in
                            let (fresh, keeping) = keepingAndFreshTransformers()
                            return (fresh, keeping)
                        },
                        statistic: \.historyPrefixSlotsKept)
}

/// One server's state in `runTwoServersSeed`.
struct PrefixTestServer {
    var base: Replica
    var history = ContiguousArray<Changeset>()
    /// Never keeps history slots, and serves this server alone.
    var fresh = Transformer()
}

/// Two servers whose typing uploads are integrated in turns by one shared transformer, and by
/// a fresh-scanning transformer of each server's own; one upload in six has a corrupted prior
/// size, so some merges fail (on both, with the same error) and leave their history as it
/// was. Compares the transformed uploads and the reciprocal histories; adds the slots the
/// shared transformer kept to `kept`.
func runTwoServersSeed(_ seed: UInt64, kept: inout Int) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4850_3253))
    do {
        var servers = [PrefixTestServer(base: try typingBase()),
                       PrefixTestServer(base: try typingBase())]
        for index in servers.indices { servers[index].fresh.historyPrefixEnabled = false }
        var shared = Transformer()
        for upload in 0..<10 {
            let server = Int(random.uniformInt(below: 2))
            var side = try typingSide(base: servers[server].base, random: random,
                                      fileIdent: UInt64(2 + upload), tag: Int64(upload + 1),
                                      otherEditsPercent: 0,
                                      switchesObjects: random.chance(1, outOf: 3))
            if random.chance(1, outOf: 6) { corruptPriorSize(&side, random) }
            var expected = ContiguousArray(side)
            var actual = ContiguousArray(side)
            var expectedEdits = LocalEdits()
            var actualEdits = LocalEdits()
            var expectedError: MergeError?
            var actualError: MergeError?
            do throws(MergeError) {
                try servers[server].fresh.merge(incoming: &expected,
                                                local: servers[server].history,
                                                localEdits: &expectedEdits, localFileIdent: 1)
            } catch { expectedError = error }
            do throws(MergeError) {
                try shared.merge(incoming: &actual, local: servers[server].history,
                                 localEdits: &actualEdits, localFileIdent: 1)
            } catch { actualError = error }
            guard expectedError == actualError else {
                return "upload \(upload) to server \(server): errors differ: "
                    + "\(String(describing: expectedError)) vs \(String(describing: actualError))"
            }
            if expectedError != nil { continue }
            guard Array(actual) == Array(expected) else {
                return "upload \(upload) to server \(server): transformed upload differs"
            }
            var expectedHistory = servers[server].history
            expectedEdits.apply(to: &expectedHistory)
            var actualHistory = servers[server].history
            actualEdits.apply(to: &actualHistory)
            guard Array(actualHistory) == Array(expectedHistory) else {
                return "upload \(upload) to server \(server): reciprocal history differs"
            }
            // The shared transformer's output, with its scan columns, joins the history.
            servers[server].history.append(contentsOf: actual)
        }
        kept += shared.historyPrefixSlotsKept
        return nil
    } catch {
        return "generator error: \(error)"
    }
}

@Suite("Kept history slots equal a fresh scan")
struct HistoryPrefixTests {
    @Test("four typing clients integrated in turn")
    func typingServers() {
        var kept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) { runHistoryPrefixSeed($0, kept: &kept) }
        // Not vacuous: merges kept slots.
        #expect(kept > 10_000, "kept \(kept) history slots")
    }

    @Test("one transformer serving two servers in turns, some merges failing")
    func twoServersInTurns() {
        var kept = 0
        recordSeedFailures(firstSeed: 1, keySpace: 2) { runTwoServersSeed($0, kept: &kept) }
        #expect(kept > 10_000, "kept \(kept) history slots")
    }

    /// A merge whose history starts like the last merge's but whose upload is on the other
    /// document skips changesets the last merge kept: the prefix ends there, and the arena
    /// is cut back to it.
    @Test("a prefix given up where an upload classifies a changeset otherwise")
    func prefixGivenUp() throws {
        let (keptAfter, sizes) = try typeDocuments([0, 0, 0, 1, 0, 0], base: try typingBase())
        // Merge 2 keeps client 0's slots (merge 1 recorded them; merge 0 had no history).
        // Client 3, on the other document, skips the changesets merge 2 kept (its upload
        // does not touch document 0), so it keeps none; nor does client 4, back on document
        // 0, which classifies alike none of what merge 3 recorded (all skipped). Client 5
        // keeps clients 0-2's slots and client 3's changeset, skipped in both merges.
        #expect(keptAfter == [0, 0, sizes[0], 0, 0, sizes[0] + sizes[1] + sizes[2]],
                "kept per merge: \(keptAfter), history \(sizes)")
    }

    /// The match classifies a recorded changeset again when its first entry differs from the
    /// last one classified (`HistoryPrefix.heads`). Merge 2 records clients 0 and 1, on two
    /// other documents, both skipped; merge 3 types on client 1's document, so its changeset
    /// no longer classifies as skipped, though client 0's before it still does.
    @Test("a recorded changeset classified again where its document differs from the last")
    func headsDiffer() throws {
        let (keptAfter, _) = try typeDocuments([0, 1, 2, 1], base: try typingBase(documents: 3))
        #expect(keptAfter == [0, 0, 0, 0], "kept per merge: \(keptAfter)")
    }

    /// Clients that each type 40 edits on the document `objects[client]`, integrated in turn
    /// by a transformer that keeps history slots and by one that does not, which must agree.
    /// - Returns: the slots kept per merge and the history's changeset sizes.
    private func typeDocuments(
        _ objects: [Int], base: Replica
    ) throws -> (keptAfter: [Int], sizes: [Int]) {
        let random = RandomStream(seed: 7, id: StreamID(domain: 0x4850_4755))
        var (fresh, keeping) = keepingAndFreshTransformers()
        var history = ContiguousArray<Changeset>()
        var keptBefore = 0
        var keptAfter: [Int] = []
        for (client, object) in objects.enumerated() {
            var typist = Typist(object: Int64(object), cursor: 0, otherEditsPercent: 0,
                                switchesObjects: false)
            var scratch = base
            var instructions = ContiguousArray<Instruction>()
            for _ in 0..<40 {
                instructions.append(try typist.edit(&scratch, random, tag: Int64(client + 1)))
            }
            let side = [Changeset(version: 1, originTimestamp: 10,
                                  originFileIdent: UInt64(2 + client), instructions: instructions)]
            var expected = ContiguousArray(side)
            var actual = ContiguousArray(side)
            var expectedEdits = LocalEdits()
            var actualEdits = LocalEdits()
            try fresh.merge(incoming: &expected, local: history, localEdits: &expectedEdits,
                            localFileIdent: 1)
            try keeping.merge(incoming: &actual, local: history, localEdits: &actualEdits,
                              localFileIdent: 1)
            #expect(Array(actual) == Array(expected), "client \(client)")
            var expectedHistory = history
            expectedEdits.apply(to: &expectedHistory)
            var actualHistory = history
            actualEdits.apply(to: &actualHistory)
            #expect(Array(actualHistory) == Array(expectedHistory), "client \(client)")
            keptAfter.append(keeping.historyPrefixSlotsKept - keptBefore)
            keptBefore = keeping.historyPrefixSlotsKept
            history.append(contentsOf: actual)
        }
        return (keptAfter, history.map(\.instructions.count))
    }
}
