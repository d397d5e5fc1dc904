//! The elements of one list field of a replica, in chunks.

/// A sequence of values stored in chunks of at most `chunkMax` elements, so that inserting
/// or erasing at a position costs O(count / chunkMax + chunkMax) instead of O(count): a
/// replica applying a text document's history (10^6 edits of a list of 4 · 10^5 elements)
/// moved about 2 MB per edit with one flat array, minutes in `memmove`.
///
/// Equality and hashing are by the elements in order, never by how they are chunked. A
/// position is found in two steps: the sums of the chunks' sizes by groups of `groupLength`
/// chunks, then the sizes within the group (4 bytes each, one cache line per 16), so a list of
/// C chunks reads about C / 16 + 16 sizes where one flat scan read C / 2 on average. An empty
/// list holds no chunk; no chunk is ever empty.
///
/// (Until 2026-11-29 the chunks held up to 1,024 elements and a position was found by scanning
/// every chunk's size: at 4 · 10^5 elements an edit moved about 8 KB on average and read about
/// 300 sizes. `memmove` and that scan were a quarter of the samples of a text-like
/// `bench merge`, in the replica that checks the merged history. Chunks of 256 and the group
/// sums: see the README's "Merge throughput".)
struct ChunkedList: Sendable, Hashable, Sequence {
    /// A chunk that grows beyond this many elements is split in two halves.
    static let chunkMax = 256
    /// Chunks per group of `groupCounts`.
    static let groupLength = 16

    private(set) var count = 0
    private var chunks: ContiguousArray<ContiguousArray<Value>> = []
    /// `chunkCounts[c] == chunks[c].count`.
    private var chunkCounts: ContiguousArray<Int32> = []
    /// `groupCounts[g]` is the sum of `chunkCounts[g * groupLength ..< (g + 1) * groupLength]`
    /// (the last group may be shorter); empty while there are at most `groupLength` chunks
    /// (a replica's short lists: no allocation for them, and `locate` scans the chunks).
    private var groupCounts: ContiguousArray<Int32> = []

    init() {}

    init(_ elements: some Sequence<Value>) {
        for element in elements { insert(element, at: count) }
    }

    var isEmpty: Bool { count == 0 }

    /// How the elements are chunked (for tests).
    var chunkCount: Int { chunks.count }
    var chunkSizes: [Int] { chunkCounts.map { Int($0) } }

    /// Whether the sizes and group sums agree with the chunks (for tests).
    var isConsistent: Bool {
        let groups =
            chunks.count > Self.groupLength
            ? (chunks.count + Self.groupLength - 1) / Self.groupLength : 0
        guard chunkCounts.count == chunks.count, groupCounts.count == groups
        else { return false }
        var total = 0
        for chunk in chunks.indices {
            guard chunks[chunk].count == Int(chunkCounts[chunk]), !chunks[chunk].isEmpty
            else { return false }
            total += chunks[chunk].count
        }
        for group in groupCounts.indices {
            let lower = group * Self.groupLength
            let upper = Swift.min(lower + Self.groupLength, chunks.count)
            let sum = chunkCounts[lower..<upper].reduce(0) { $0 + Int($1) }
            guard Int(groupCounts[group]) == sum else { return false }
        }
        return total == count
    }

    /// The chunk holding position `index` (`0 ..< count`) and the offset within it.
    private func locate(_ index: Int) -> (chunk: Int, offset: Int) {
        precondition(index >= 0 && index < count, "list index out of range")
        var remaining = index
        var chunk = 0
        if !groupCounts.isEmpty {
            var group = 0
            while remaining >= Int(groupCounts[group]) {
                remaining -= Int(groupCounts[group])
                group += 1
            }
            chunk = group * Self.groupLength
        }
        while remaining >= Int(chunkCounts[chunk]) {
            remaining -= Int(chunkCounts[chunk])
            chunk += 1
        }
        return (chunk, remaining)
    }

    /// Recomputes `groupCounts` from `chunkCounts` (after a chunk was added or removed, which
    /// moves the later chunks to other groups: once per `chunkMax / 2` inserts at most).
    private mutating func regroup() {
        groupCounts.removeAll(keepingCapacity: true)
        if chunkCounts.count <= Self.groupLength { return }
        var start = 0
        while start < chunkCounts.count {
            let end = Swift.min(start + Self.groupLength, chunkCounts.count)
            var sum: Int32 = 0
            for chunk in start..<end { sum += chunkCounts[chunk] }
            groupCounts.append(sum)
            start = end
        }
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
        let (chunk, offset) =
            index == count
            ? (chunks.count - 1, Int(chunkCounts[chunks.count - 1])) : locate(index)
        chunks[chunk].insert(value, at: offset)
        chunkCounts[chunk] += 1
        if !groupCounts.isEmpty { groupCounts[chunk / Self.groupLength] += 1 }
        count += 1
        if chunkCounts[chunk] > Self.chunkMax {
            let half = Int(chunkCounts[chunk]) / 2
            let tail = ContiguousArray(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunkCounts[chunk] = Int32(half)
            chunks.insert(tail, at: chunk + 1)
            chunkCounts.insert(Int32(tail.count), at: chunk + 1)
            regroup()
        }
    }

    /// Removes and returns the element at `index` (`0 ..< count`).
    @discardableResult
    mutating func remove(at index: Int) -> Value {
        let (chunk, offset) = locate(index)
        let value = chunks[chunk].remove(at: offset)
        chunkCounts[chunk] -= 1
        if !groupCounts.isEmpty { groupCounts[chunk / Self.groupLength] -= 1 }
        count -= 1
        if chunkCounts[chunk] == 0 {
            chunks.remove(at: chunk)
            chunkCounts.remove(at: chunk)
            regroup()
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
