import MergeCore
import Testing

@testable import SyncEngine

/// `HistoryLog`, the server history in chunks: the same entries as an array under any mix of
/// appends and drops from the front, and a copy (a backup) unchanged by what the original does
/// after it; its running total of encoded bytes always the entries' sum.
@Suite struct HistoryLogTests {
    static func entry(_ number: Int) -> ServerHistoryEntry {
        ServerHistoryEntry(
            changeset: Changeset(
                version: UInt64(number), lastIntegratedRemoteVersion: 0, originTimestamp: 0,
                originFileIdent: 1, instructions: []),
            salt: UInt64(number) &* 0x9E37_79B9, writeID: UInt64(number), encodedBytes: number)
    }

    func expectEqual(_ log: HistoryLog, _ array: [Int], _ context: String) {
        #expect(log.count == array.count, "\(context)")
        #expect(log.map(\.writeID) == array.map(UInt64.init), "\(context)")
        // Each entry's encoded length is its number: the running total is the array's sum.
        #expect(log.encodedBytes == array.reduce(0, +), "\(context)")
        if let last = array.last { #expect(log[log.count - 1].writeID == UInt64(last)) }
        // `forEach(from:)`, which reads entries in place chunk by chunk, gives the same entries
        // from any position (the first, one inside, the end).
        for from in Set([0, array.count / 3, array.count]).sorted() {
            var read: [Int] = []
            log.forEach(from: from) { read.append(Int($0.writeID)) }
            #expect(read == Array(array[from...]), "\(context), from \(from)")
        }
    }

    @Test func itHoldsWhatAnArrayHoldsUnderAppendsAndDrops() {
        // A fixed, irregular mix of operations (a multiplicative sequence, not randomness).
        var mix: UInt64 = 11
        func next(below bound: UInt64) -> UInt64 {
            mix = mix &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (mix >> 33) % bound
        }
        var log = HistoryLog()
        var array: [Int] = []
        var number = 0
        for step in 0..<600 {
            switch next(below: 10) {
            case 0..<7:
                // Runs of appends that cross chunk boundaries.
                for _ in 0..<Int(next(below: 700)) {
                    log.append(Self.entry(number))
                    array.append(number)
                    number += 1
                }
            case 7..<9:
                let drop = Int(next(below: UInt64(array.count) + 1))
                log.removeFirst(drop)
                array.removeFirst(drop)
            default:
                // Drop everything but a few, or all.
                let drop = max(0, array.count - Int(next(below: 3)))
                log.removeFirst(drop)
                array.removeFirst(drop)
            }
            expectEqual(log, array, "step \(step)")
        }
        #expect(number > 100 * HistoryLog.chunkCapacity)
        log.removeAll()
        expectEqual(log, [], "after removeAll")
        log.append(Self.entry(7))
        expectEqual(log, [7], "after removeAll and one append")
    }

    @Test func aCopyIsUnchangedByTheOriginal() {
        var log = HistoryLog()
        for number in 0..<(2 * HistoryLog.chunkCapacity + 5) { log.append(Self.entry(number)) }
        let backup = log
        let before = Array(0..<(2 * HistoryLog.chunkCapacity + 5))
        for number in 10_000..<10_100 { log.append(Self.entry(number)) }
        log.removeFirst(HistoryLog.chunkCapacity + 3)
        expectEqual(backup, before, "the backup")
        expectEqual(
            log, Array(before.dropFirst(HistoryLog.chunkCapacity + 3)) + Array(10_000..<10_100),
            "the original")
    }

    /// A restore: the history goes back to a backup that shares its last chunk, then both go
    /// on. The original appended in place after the backup's end, so the backup's appends
    /// must not write there: each log reads its own entries.
    @Test func copiesThatBothAppendKeepTheirOwnEntries() {
        var log = HistoryLog()
        for number in 0..<(HistoryLog.chunkCapacity + 10) { log.append(Self.entry(number)) }
        var backup = log
        for number in 5_000..<5_020 { log.append(Self.entry(number)) }
        // An in-flight reader (a DOWNLOAD) holding the log as it was then.
        let reader = log
        for number in 7_000..<7_005 { backup.append(Self.entry(number)) }
        for number in 6_000..<6_003 { log.append(Self.entry(number)) }
        let base = Array(0..<(HistoryLog.chunkCapacity + 10))
        expectEqual(backup, base + Array(7_000..<7_005), "the backup, restored and appended to")
        expectEqual(log, base + Array(5_000..<5_020) + Array(6_000..<6_003), "the original")
        expectEqual(reader, base + Array(5_000..<5_020), "the reader")
        // A copy appending across a chunk boundary from a shared, partly filled chunk.
        var other = reader
        for number in 8_000..<(8_000 + HistoryLog.chunkCapacity) {
            other.append(Self.entry(number))
        }
        expectEqual(
            other, base + Array(5_000..<5_020) + Array(8_000..<(8_000 + HistoryLog.chunkCapacity)),
            "a copy filling its chunk")
        expectEqual(log, base + Array(5_000..<5_020) + Array(6_000..<6_003), "the original again")
    }
}
