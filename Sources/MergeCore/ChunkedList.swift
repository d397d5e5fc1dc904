//! The elements of one list field of a replica, in chunks.

/// A sequence of values stored in chunks of at most `chunkMax` elements, so that inserting
/// or erasing at a position costs O(count / chunkMax + chunkMax) instead of O(count): a
/// replica applying a text document's history (10^6 edits of a list of 4 · 10^5 elements)
/// moved about 2 MB per edit with one flat array, minutes in `memmove`.
///
/// Equality and hashing are by the elements in order, never by how they are chunked. A
/// position is found by scanning the chunks' sizes (4 bytes each, one cache line per 16
/// chunks). An empty list holds no chunk; no chunk is ever empty.
struct ChunkedList: Sendable, Hashable, Sequence {
    /// A chunk that grows beyond this many elements is split in two halves.
    static let chunkMax = 1_024

    private(set) var count = 0
    private var chunks: ContiguousArray<ContiguousArray<Value>> = []
    /// `chunkCounts[c] == chunks[c].count`.
    private var chunkCounts: ContiguousArray<Int32> = []

    init() {}

    init(_ elements: some Sequence<Value>) {
        for element in elements { insert(element, at: count) }
    }

    var isEmpty: Bool { count == 0 }

    /// How the elements are chunked (for tests).
    var chunkCount: Int { chunks.count }
    var chunkSizes: [Int] { chunkCounts.map { Int($0) } }

    /// The chunk holding position `index` (`0 ..< count`) and the offset within it.
    private func locate(_ index: Int) -> (chunk: Int, offset: Int) {
        precondition(index >= 0 && index < count, "list index out of range")
        var remaining = index
        var chunk = 0
        while remaining >= Int(chunkCounts[chunk]) {
            remaining -= Int(chunkCounts[chunk])
            chunk += 1
        }
        return (chunk, remaining)
    }

    subscript(index: Int) -> Value {
        get {
            let (chunk, offset) = locate(index)
            return chunks[chunk][offset]
        }
        set {
            let (chunk, offset) = locate(index)
            chunks[chunk][offset] = newValue
        }
    }

    /// Inserts `value` so that it is at `index` (`0 ... count`).
    mutating func insert(_ value: Value, at index: Int) {
        precondition(index >= 0 && index <= count, "list index out of range")
        if chunks.isEmpty {
            chunks.append([value])
            chunkCounts.append(1)
            count = 1
            return
        }
        let (chunk, offset) = index == count
            ? (chunks.count - 1, Int(chunkCounts[chunks.count - 1])) : locate(index)
        chunks[chunk].insert(value, at: offset)
        chunkCounts[chunk] += 1
        count += 1
        if chunkCounts[chunk] > Self.chunkMax {
            let half = Int(chunkCounts[chunk]) / 2
            let tail = ContiguousArray(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunkCounts[chunk] = Int32(half)
            chunks.insert(tail, at: chunk + 1)
            chunkCounts.insert(Int32(tail.count), at: chunk + 1)
        }
    }

    /// Removes and returns the element at `index` (`0 ..< count`).
    @discardableResult
    mutating func remove(at index: Int) -> Value {
        let (chunk, offset) = locate(index)
        let value = chunks[chunk].remove(at: offset)
        chunkCounts[chunk] -= 1
        count -= 1
        if chunkCounts[chunk] == 0 {
            chunks.remove(at: chunk)
            chunkCounts.remove(at: chunk)
        }
        return value
    }

    func makeIterator() -> FlattenSequence<ContiguousArray<ContiguousArray<Value>>>.Iterator {
        chunks.joined().makeIterator()
    }

    static func == (lhs: ChunkedList, rhs: ChunkedList) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for element in self { hasher.combine(element) }
    }
}
