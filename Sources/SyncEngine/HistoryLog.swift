//! The server history's storage: entries in chunks of a fixed size, which copies of the log
//! share: a backup (a copy of the `ServerFile`) and every DOWNLOAD in flight (which reads the
//! changesets it sends where the history holds them, `DownloadEntries`).
//!
//! A chunk is appended in place even while copies share it. Entries never change once
//! written, and a log reads only the entries below its own end in each chunk, so a copy never
//! sees what another log appends after it. A log whose end is not the chunk's (another copy
//! appended there first: the history restored from a backup, then integrating again) copies
//! its own part of the chunk before it appends. Until 2026-11-29 a chunk was a copy-on-write
//! array, and an append after a copy copied the last chunk; a DOWNLOAD then had to copy each
//! changeset it sent (a retain of a cold changeset per entry, about 3 % of the default day).

/// The entries of one chunk: room for `HistoryLog.chunkCapacity`, the first `written` set.
/// (`@unchecked Sendable`: an entry below a log's end is never written again; the appends
/// that write above it happen in the one world that owns the history, on its thread.)
final class HistoryChunk: @unchecked Sendable {
    let entries = UnsafeMutablePointer<ServerHistoryEntry>.allocate(
        capacity: HistoryLog.chunkCapacity)
    var written = 0

    deinit {
        entries.deinitialize(count: written)
        entries.deallocate()
    }
}

/// A server file's history entries, oldest first, indexed from 0 (`historyBase` + 1).
public struct HistoryLog: RandomAccessCollection, Sendable {
    /// Entries per chunk: a power of two, so that an index splits with a shift and a mask.
    static let chunkShift = 10
    static let chunkCapacity = 1 << chunkShift

    /// Every chunk is full up to this log's end but the last; the first may have entries
    /// dropped from its front.
    private var chunks: ContiguousArray<HistoryChunk> = []
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
        return chunks[slot >> Self.chunkShift].entries[slot & (Self.chunkCapacity - 1)]
    }

    /// Calls `body` with each entry from `position` on, in order, read where it is stored: an
    /// entry is copied (its changeset's arrays retained) only if `body` copies it.
    @inline(__always)
    public func forEach(
        from position: Int, _ body: (borrowing ServerHistoryEntry) throws -> Void
    ) rethrows {
        try forEach(in: position..<count, body)
    }

    /// `forEach(from:_:)` for the entries at `positions` only.
    @inline(__always)
    public func forEach(
        in positions: Range<Int>, _ body: (borrowing ServerHistoryEntry) throws -> Void
    ) rethrows {
        try forEachAddress(in: positions) { try body($0.pointee) }
    }

    /// `forEach(in:_:)` with the address of each entry, for a reader of a few of its fields:
    /// a borrowed entry is copied whole when the reader makes a call before its last use.
    @inline(__always)
    func forEachAddress(
        in positions: Range<Int>, _ body: (UnsafePointer<ServerHistoryEntry>) throws -> Void
    ) rethrows {
        precondition(
            positions.lowerBound >= 0 && positions.upperBound <= count,
            "history index out of range")
        var slot = positions.lowerBound + dropped
        let end = positions.upperBound + dropped
        while slot < end {
            let chunk = slot >> Self.chunkShift
            let upTo = Swift.min(end, (chunk + 1) << Self.chunkShift)
            let (first, last) = (slot & (Self.chunkCapacity - 1), upTo - (chunk << Self.chunkShift))
            let entries = UnsafePointer(chunks[chunk].entries)
            for offset in first..<last { try body(entries + offset) }
            slot = upTo
        }
    }

    /// Appends an entry: in place, unless another copy of the log appended to the last chunk
    /// after this log's end (then this log's part of it is copied first). A new chunk is made
    /// with room for all its entries, so that it never grows by copying.
    public mutating func append(_ entry: ServerHistoryEntry) {
        let end = count + dropped
        let lastChunk = chunks.count - 1
        if chunks.isEmpty || end == chunks.count << Self.chunkShift {
            let chunk = HistoryChunk()
            chunk.entries.initialize(to: entry)
            chunk.written = 1
            chunks.append(chunk)
        } else {
            let own = end - (lastChunk << Self.chunkShift)
            if chunks[lastChunk].written != own {
                // Another copy wrote after this log's end: take this log's entries alone.
                let copy = HistoryChunk()
                copy.entries.initialize(from: chunks[lastChunk].entries, count: own)
                copy.written = own
                chunks[lastChunk] = copy
            }
            let chunk = chunks[lastChunk]
            (chunk.entries + own).initialize(to: entry)
            chunk.written = own + 1
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
