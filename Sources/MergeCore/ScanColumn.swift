/// A changeset's scan column (`Changeset.scanColumn`): its instructions' `ScanEntry`s, in
/// memory that a merge's slab (`ScanColumnSlab`) hands out.
///
/// Why not an array: a server's merge reads the column of every history changeset in its
/// window, a few dozen entries each. As an array, each read retained and released the
/// column's own heap block (an atomic operation on a cache line the merge had not touched
/// yet) and read the count from that line. Here the entries' address and count sit in
/// the changeset itself (in the history's array, which the scan reads in order), the reference
/// that keeps them alive is not touched by a read, and consecutive columns are consecutive in
/// memory, so the scan streams them and can prefetch ahead. (Measured on its own, at 100
/// clients and 10^6 map updates, this was at parity within the machine's noise; the README's
/// "The history scan in one pass" gives the figures.)
///
/// The entries never change once the column is made; the chunk they live in is freed when
/// the last column in it is. (`@unchecked Sendable`: `base` points into `chunk`, which this
/// column keeps alive, at entries no one writes again.)
struct ScanColumn: @unchecked Sendable {
    /// Keeps `base` alive; never read by the scan.
    private let chunk: ScanColumnChunk
    /// The first entry.
    let base: UnsafePointer<ScanEntry>
    /// How many entries.
    let count: Int
    /// Whether every entry is on one object and field (the same table, key and field, none
    /// `general`): a typed changeset on one document. Then the history scan classifies the
    /// first entry and keeps or skips them all (`Transformer.scanHistory`).
    let isUniform: Bool
    /// The table of every entry when none is `general` and each field has a bit in the
    /// history scan's key masks (below `TouchedFields.maskedFields`, or `UInt32.max` for an
    /// object instruction); `UInt32.max` otherwise. A column on the node table's dense table
    /// then takes the scan's short loop (`ObjectNodeTable.selectMaskedRange`).
    let maskedTable: UInt32

    fileprivate init(chunk: ScanColumnChunk, base: UnsafePointer<ScanEntry>, count: Int) {
        self.chunk = chunk
        self.base = base
        self.count = count
        let first = count > 0 ? base[0] : .general
        var uniform = count > 0 && !first.isGeneral
        var masked = count > 0
        for offset in 0..<count {
            let entry = base[offset]
            uniform = uniform && entry.key == first.key && entry.table == first.table
                && entry.field == first.field
            masked = masked && !entry.isGeneral && entry.table == first.table
                && entry.field &+ 1 <= TouchedFields.maskedFields
        }
        isUniform = uniform
        maskedTable = masked ? first.table : .max
    }

    /// The entries, valid while this column (or a copy of it) lives.
    @inline(__always)
    var entries: UnsafeBufferPointer<ScanEntry> { UnsafeBufferPointer(start: base, count: count) }
}

/// A block of entries that columns are cut from, in order. Only the slab that made it
/// appends to it (`ScanColumnSlab`, which checks that it is the only one holding it), and
/// only beyond `used`; the entries below `used` belong to columns and never change, so
/// reading them from any thread is safe.
final class ScanColumnChunk: @unchecked Sendable {
    let entries: UnsafeMutablePointer<ScanEntry>
    let capacity: Int
    var used = 0

    init(capacity: Int) {
        self.capacity = capacity
        entries = UnsafeMutablePointer.allocate(capacity: capacity)
    }

    deinit { entries.deallocate() }
}

/// Where a transformer makes scan columns: consecutive columns in one chunk of
/// `chunkEntries` entries (a column longer than that gets a chunk of its own).
struct ScanColumnSlab: Sendable {
    /// Held by this slab alone unless the slab was copied: a copy then starts a chunk of its
    /// own, so that two slabs never append to one chunk.
    private final class Token: Sendable {}
    private var token = Token()
    private var chunk: ScanColumnChunk?

    /// 64 KiB of entries: a chunk stays alive while any column in it does.
    static let chunkEntries = 65_536 / MemoryLayout<ScanEntry>.stride

    /// A column holding `count` entries, written by `fill` (which must write all of them,
    /// in order, through the pointer it gets).
    mutating func makeColumn(
        count: Int, fill: (UnsafeMutablePointer<ScanEntry>) -> Void
    ) -> ScanColumn {
        if !isKnownUniquelyReferenced(&token) {
            token = Token()
            chunk = nil
        }
        if chunk == nil || chunk!.capacity - chunk!.used < count {
            chunk = ScanColumnChunk(capacity: Swift.max(count, Self.chunkEntries))
        }
        let chunk = chunk!
        let base = chunk.entries + chunk.used
        fill(base)
        chunk.used += count
        return ScanColumn(chunk: chunk, base: UnsafePointer(base), count: count)
    }
}
