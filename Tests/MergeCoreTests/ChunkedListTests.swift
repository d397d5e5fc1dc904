import Randomness
import Testing

@testable import MergeCore

/// `ChunkedList` against a flat array: the same elements after every edit, across chunk
/// splits and emptied chunks, and equality and hashing that ignore the chunking.
@Suite("Chunked list")
struct ChunkedListTests {
    @Test(
        "random inserts, erases and updates match a flat array", arguments: [1, 2, 3] as [UInt64])
    func matchesArray(seed: UInt64) {
        let random = RandomStream(seed: seed, id: StreamID(domain: 0x4348_4B4C))
        var list = ChunkedList()
        var reference = [Value]()
        var splits = 0
        var chunksPeak = 0
        // Grow past several chunks (inserts twice as likely), then shrink to empty.
        for step in 0..<12_000 {
            let growing = step < 8_000
            let action = random.uniformInt(below: 3)
            if reference.isEmpty || (growing ? action < 2 : action == 0 && reference.count < 50) {
                let index = Int(random.uniformInt(below: UInt64(reference.count + 1)))
                let value = Value.int(Int64(step))
                let chunksBefore = list.chunkCount
                list.insert(value, at: index)
                reference.insert(value, at: index)
                if list.chunkCount > chunksBefore && chunksBefore > 0 { splits += 1 }
            } else if action == 2 && growing {
                let index = Int(random.uniformInt(below: UInt64(reference.count)))
                list[index] = .int(-Int64(step))
                reference[index] = .int(-Int64(step))
            } else {
                let index = Int(random.uniformInt(below: UInt64(reference.count)))
                #expect(list.remove(at: index) == reference.remove(at: index))
            }
            #expect(list.count == reference.count)
            chunksPeak = max(chunksPeak, list.chunkCount)
            if step % 500 == 0 || step > 11_990 {
                #expect(Array(list) == reference)
                #expect(list.isConsistent)
                if !reference.isEmpty {
                    let probe = Int(random.uniformInt(below: UInt64(reference.count)))
                    #expect(list[probe] == reference[probe])
                }
            }
        }
        #expect(splits >= 4)  // the walk crossed chunk boundaries
        #expect(chunksPeak > ChunkedList.groupLength)  // and group boundaries (32 chunks at the peak)
        while !reference.isEmpty {
            #expect(list.remove(at: reference.count - 1) == reference.removeLast())
        }
        #expect(list.isEmpty && list.chunkCount == 0 && Array(list).isEmpty)
    }

    @Test("equality and hashing are by elements, not by chunks")
    func equalityIgnoresChunks() {
        let elements = (0..<3_000).map { Value.int(Int64($0)) }
        let appended = ChunkedList(elements)
        var frontInserted = ChunkedList()
        for element in elements.reversed() { frontInserted.insert(element, at: 0) }
        #expect(
            appended.chunkCount != frontInserted.chunkCount
                || appended.chunkSizes != frontInserted.chunkSizes)
        #expect(appended == frontInserted)
        #expect(appended.hashValue == frontInserted.hashValue)
        var other = appended
        other[1_500] = .int(-1)
        #expect(other != appended)
    }
}
