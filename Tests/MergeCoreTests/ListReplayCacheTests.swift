//! `ListReplayCache`: a sequence merge that takes long sides' replays from earlier runs gives
//! exactly what one that replays both sides whole gives, as a server's history grows, shrinks
//! back to a prefix, diverges, turns invalid past what is kept, and changes base size.

@testable import MergeCore
import Randomness
import Testing

/// One step of a growing history: `cached` (one merge across all steps, cache on, keeping
/// the longer side's replay) and a fresh merge with the cache off run the same sides; a
/// failure if their results differ.
private func compareCachedRun(
    _ cached: inout ListSequenceMerge, local: [ListSequenceEdit],
    incoming: [ListSequenceEdit], label: String
) -> String? {
    var fresh = ListSequenceMerge()
    fresh.cachesReplays = false
    (cached.local, cached.incoming) = (ContiguousArray(local), ContiguousArray(incoming))
    (fresh.local, fresh.incoming) = (ContiguousArray(local), ContiguousArray(incoming))
    let (ranCached, ranFresh) = (
        cached.run(storing: local.count >= incoming.count ? .local : .incoming), fresh.run())
    guard ranCached == ranFresh else {
        return "\(label): cached run \(ranCached), uncached \(ranFresh)"
    }
    guard ranCached else { return nil }
    if cached.local != fresh.local || cached.incoming != fresh.incoming
        || cached.localAlive != fresh.localAlive || cached.incomingAlive != fresh.incomingAlive
    {
        return "\(label): results differ"
    }
    return nil
}

/// A prior size made wrong at `index` (the replay must reject the side from there on).
private func corrupted(_ edits: [ListSequenceEdit], at index: Int) -> [ListSequenceEdit] {
    var edits = edits
    edits[index].priorSize &+= 1
    return edits
}

/// Seed `seed`: a history of a few hundred to a few thousand edits on a list of up to 40,
/// merged in growing prefixes against short uploads (on either side of the merge, as a
/// server links the smaller side), with a step back to a shorter prefix, a diverging copy, a
/// side made invalid past the kept prefix, and the same edits on another base size.
private func runGrowingHistory(_ seed: UInt64, cached: inout ListSequenceMerge) -> [String] {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4C52_4341))
    let size = Int(random.uniformInt(below: 40))
    let historyCount = 300 + Int(random.uniformInt(below: 1_700))
    let insertPercent = 40 + random.uniformInt(below: 50)
    let history = randomListSide(size: size, count: historyCount, insertPercent: insertPercent,
                                 ranks: [0, 2, 4], random: random)
    let historyOnLocal = random.chance(1, outOf: 2)
    var failures: [String] = []
    func step(_ historyPart: [ListSequenceEdit], _ label: String, baseSize: Int? = nil) {
        let upload = randomListSide(
            size: baseSize ?? size, count: 1 + Int(random.uniformInt(below: 200)),
            insertPercent: insertPercent, ranks: [1, 3], random: random)
        let (local, incoming) = historyOnLocal ? (historyPart, upload) : (upload, historyPart)
        if let failure = compareCachedRun(&cached, local: local, incoming: incoming,
                                          label: "seed \(seed) \(label)") {
            failures.append(failure)
        }
    }
    var end = min(historyCount, 256 + Int(random.uniformInt(below: 200)))
    var steps = 0
    while true {
        step(Array(history[0..<end]), "prefix \(end)")
        if end == historyCount { break }
        let next = min(historyCount, end + 1 + Int(random.uniformInt(below: 400)))
        steps += 1
        if steps == 2 {
            // Agrees with the kept prefix, then a prior size goes wrong: the entry is dropped
            // and both runs give up.
            let bad = end + Int(random.uniformInt(below: UInt64(next - end)))
            step(corrupted(Array(history[0..<next]), at: bad), "invalid past the kept prefix")
        }
        end = next
    }
    // Back to a shorter prefix (named from the entry, no replay), then a history that
    // diverges from the kept one partway, one whose last prior size is wrong (it disagrees
    // with the entry there, and its own replay fails), and the whole history again.
    step(Array(history[0..<(historyCount / 2)]), "shorter prefix")
    var diverging = history
    let changed = historyCount / 3
    diverging[changed].index = diverging[changed].isInsert ? 0 : diverging[changed].index
    diverging[changed].isInsert = true
    diverging = Array(diverging[0...changed])
    step(diverging, "diverging")
    step(corrupted(history, at: historyCount - 1), "invalid within the kept prefix")
    step(history, "whole history again")
    // The same edits on a base one longer are another replay (valid: one more element at
    // the end changes no index).
    var shifted = history
    for k in shifted.indices { shifted[k].priorSize += 1 }
    step(shifted, "another base size", baseSize: size + 1)
    return failures
}

@Suite struct ListReplayCacheTests {
    /// Growing histories through one cached merge give exactly the uncached results, and the
    /// cache did serve them: more edits came from it than were replayed into it (each seed
    /// stores its history about twice: once more after the invalid side dropped its entry).
    @Test func cachedRunsMatchUncachedRuns() {
        var cached = ListSequenceMerge()
        var failures: [String] = []
        for seed in UInt64(0)..<25 {
            failures += runGrowingHistory(seed, cached: &cached)
            if failures.count >= 3 { break }
        }
        #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
        let cache = cached.replayCache
        #expect(cache.editsReused > cache.editsStored && cache.editsStored > 10_000,
                "\(cache.editsReused) edits reused, \(cache.editsStored) stored")
        #expect(cache.entriesRejected > 10, "\(cache.entriesRejected) entries rejected")
    }

    /// The sequence merge's other tests, with the cache on (as by default) and off: every
    /// random grid agrees; here long grids run through one merge, so later seeds meet entries
    /// of earlier ones.
    @Test func longGridsAgreeWithAndWithoutTheCache() {
        var cached = ListSequenceMerge()
        for seed in UInt64(0)..<200 {
            let grid = randomListGrid(seed, long: true)
            if let failure = compareCachedRun(&cached, local: grid.local, incoming: grid.incoming,
                                              label: "seed \(seed)") {
                Issue.record(Comment(rawValue: failure))
                break
            }
        }
    }

    /// A transformer keeps the replays of a server's history (its local side in the
    /// `localEdits` form, which the merge leaves as it is) and reuses them upload after upload,
    /// with results equal to the pairwise walk; a client's merge, which rewrites its local
    /// side, keeps none.
    @Test func aServerKeepsItsHistoryReplaysAndAClientDoesNot() throws {
        let random = RandomStream(seed: 3, id: StreamID(domain: 0x4C52_4354))
        func side(_ client: Int) -> [Changeset] {
            let edits = randomListSide(size: ListBlockLimits.initialListLength, count: 400,
                                       insertPercent: 60, ranks: [0], random: random)
            return stride(from: 0, to: edits.count, by: 100).map { start in
                let instructions = edits[start..<min(start + 100, edits.count)].map {
                    edit -> Instruction in
                    edit.isInsert
                        ? .arrayInsert(object: TestSchema.object(0), field: TestSchema.list,
                                       index: edit.index, value: .int(Int64(client)),
                                       priorSize: edit.priorSize)
                        : .arrayErase(object: TestSchema.object(0), field: TestSchema.list,
                                      index: edit.index, priorSize: edit.priorSize)
                }
                return Changeset(version: UInt64(start / 100 + 1),
                                 originTimestamp: 10 + random.uniformInt(below: 8),
                                 originFileIdent: UInt64(2 + client),
                                 instructions: ContiguousArray(instructions))
            }
        }
        var (reference, server) = referenceAndSequencingTransformers()
        let failure = compareServerHistories(reference: &reference, actual: &server,
                                             makeSide: side)
        #expect(failure == nil, "\(failure ?? "")")
        // Four uploads of 400 edits: the history (about 400, fewer where two erases of one
        // element cancelled) is stored at the second, then reused and extended at the third
        // and fourth (about 400 + 800 reused). Each history edit is stored once: at most the
        // 1,200 of the first three uploads.
        let kept = server.listSequence.replayCache
        #expect(server.listSequencesMerged == 3, "\(server.listSequencesMerged) merged")
        #expect(kept.editsReused > 1_100 && kept.editsStored > 1_100
                    && kept.editsStored <= 1_200,
                "\(kept.editsReused) edits reused, \(kept.editsStored) stored")
        var client = referenceAndSequencingTransformers().sequencing
        var (incoming, local) = (ContiguousArray(side(1)), ContiguousArray(side(0)))
        try client.merge(incoming: &incoming, local: &local, localFileIdent: 2)
        #expect(client.listSequencesMerged == 1
                    && client.listSequence.replayCache.editsStored == 0,
                "\(client.listSequence.replayCache.editsStored) edits stored by a client")
    }

    /// A sequence kept across resets outgrows the chunks its reset made room for, and grows
    /// them: edits far beyond the reset's estimate, checked against an array.
    @Test func pathSequenceGrowsPastItsReset() {
        let array = ListSequenceMergeTests.editAgainstArray(
            RandomStream(seed: 5, id: StreamID(domain: 0x5047_5257)), base: 10,
            reservedInserts: 0, steps: 30_000, insertOneIn: (4, 5), countEvery: 1_009)
        #expect(array.count > 15_000)
    }
}
