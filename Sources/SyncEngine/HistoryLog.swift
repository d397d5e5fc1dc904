//! The server history's storage: entries in chunks of a fixed size, so that a copy of a
//! `ServerFile` (a backup) shares every chunk, and the appends after it copy only the last
//! chunk instead of the whole history (copy-on-write works per chunk).

/// A server file's history entries, oldest first, indexed from 0 (`historyBase` + 1).
public struct HistoryLog: RandomAccessCollection, Sendable {
    /// Entries per chunk: a power of two, so that an index splits with a shift and a mask.
    static let chunkShift = 10
    static let chunkCapacity = 1 << chunkShift

    /// Every chunk is full but the last; the first may have entries dropped from its front.
    private var chunks: ContiguousArray<ContiguousArray<ServerHistoryEntry>> = []
    /// Entries dropped from the front of the first chunk (less than `chunkCapacity`).
    private var dropped = 0
    public private(set) var count = 0
    /// The entries' encoded lengths (`ServerHistoryEntry.encodedBytes`), summed: what the
    /// history takes to store.
    public private(set) var encodedBytes = 0

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> ServerHistoryEntry {
        precondition(position >= 0 && position < count, "history index out of range")
        let slot = position + dropped
        return chunks[slot >> Self.chunkShift][slot & (Self.chunkCapacity - 1)]
    }

    /// Calls `body` with each entry from `position` on, in order, read where it is stored: an
    /// entry is copied (its changeset's arrays retained) only if `body` copies it.
    @inline(__always)
    public func forEach(
        from position: Int, _ body: (borrowing ServerHistoryEntry) throws -> Void
    ) rethrows {
        precondition(position >= 0 && position <= count, "history index out of range")
        var slot = position + dropped
        let end = count + dropped
        while slot < end {
            let chunk = slot >> Self.chunkShift
            let upTo = Swift.min(end, (chunk + 1) << Self.chunkShift)
            let (first, last) = (slot & (Self.chunkCapacity - 1), upTo - (chunk << Self.chunkShift))
            try chunks[chunk].withUnsafeBufferPointer { entries in
                for offset in first..<last { try body(entries[offset]) }
            }
            slot = upTo
        }
    }

    /// Appends an entry; copies at most the last chunk when a backup shares it. A new chunk is
    /// made with room for all its entries, so that it never grows by copying.
    public mutating func append(_ entry: ServerHistoryEntry) {
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkCapacity {
            var chunk = ContiguousArray<ServerHistoryEntry>()
            chunk.reserveCapacity(Self.chunkCapacity)
            chunk.append(entry)
            chunks.append(chunk)
        } else {
            chunks[chunks.count - 1].append(entry)
        }
        count += 1
        encodedBytes += entry.encodedBytes
    }

    /// Drops the `n` oldest entries (history compaction).
    /// - Complexity: O(n + chunks).
    public mutating func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "cannot drop more entries than the history holds")
        for position in 0..<n { encodedBytes -= self[position].encodedBytes }
        count -= n
        guard count > 0 else {
            removeAll()
            return
        }
        dropped += n
        let whole = dropped >> Self.chunkShift
        if whole > 0 {
            chunks.removeFirst(whole)
            dropped -= whole << Self.chunkShift
        }
    }

    public mutating func removeAll() {
        chunks = []
        dropped = 0
        count = 0
        encodedBytes = 0
    }
}
