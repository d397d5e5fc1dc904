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
    /// The list runs cut from the entries when the column was made (`listRuns`): stored in
    /// the chunk right after the entries, and read in place by the history scan.
    private let listRunBase: UnsafePointer<ColumnListRuns.Run>?
    private let listRunCount: UInt32
    private let listRunLimits: UInt32

    fileprivate init(chunk: ScanColumnChunk, base: UnsafePointer<ScanEntry>, count: Int,
                     listRuns: ColumnListRuns) {
        self.chunk = chunk
        self.base = base
        self.count = count
        listRunBase = listRuns.runs.baseAddress
        listRunCount = UInt32(listRuns.runs.count)
        listRunLimits = listRuns.limits
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

    /// The runs a merge takes whole when this changeset is on its local side (a server's
    /// history), cut once when the column was made (`ColumnListRuns`); none unless every
    /// entry is an ArrayInsert or ArrayErase on one list. Valid while this column lives.
    @inline(__always)
    var listRuns: ColumnListRuns {
        ColumnListRuns(runs: UnsafeBufferPointer(start: listRunBase, count: Int(listRunCount)),
                       limits: listRunLimits)
    }
}

/// A block of entries that columns are cut from, in order (each column's list runs right
/// after its entries). Only the slab that made it appends to it (`ScanColumnSlab`, which
/// checks that it is the only one holding it), and only beyond `used`; the entries below
/// `used` belong to columns and never change, so reading them from any thread is safe.
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
    /// in order, through the pointer it gets), and a copy of `runs` (its list runs, cut with
    /// the limits `limits` packs: `ListBlockSettings.runLimits`) right after them.
    mutating func makeColumn(
        count: Int, runs: UnsafeBufferPointer<ColumnListRuns.Run> = .init(start: nil, count: 0),
        limits: UInt32 = 0, fill: (UnsafeMutablePointer<ScanEntry>) -> Void
    ) -> ScanColumn {
        if !isKnownUniquelyReferenced(&token) {
            token = Token()
            chunk = nil
        }
        // The runs take whole entry cells after the entries (a run's alignment divides an
        // entry's).
        let runBytes = runs.count * MemoryLayout<ColumnListRuns.Run>.stride
        let runCells = (runBytes + MemoryLayout<ScanEntry>.stride - 1)
            / MemoryLayout<ScanEntry>.stride
        let cells = count + runCells
        if chunk == nil || chunk!.capacity - chunk!.used < cells {
            chunk = ScanColumnChunk(capacity: Swift.max(cells, Self.chunkEntries))
        }
        let chunk = chunk!
        let base = chunk.entries + chunk.used
        fill(base)
        var listRuns = ColumnListRuns()
        if !runs.isEmpty {
            let runBase = UnsafeMutableRawPointer(base + count)
                .initializeMemory(as: ColumnListRuns.Run.self, from: runs.baseAddress!,
                                  count: runs.count)
            listRuns = ColumnListRuns(runs: UnsafeBufferPointer(start: runBase, count: runs.count),
                                      limits: limits)
        }
        chunk.used += cells
        return ScanColumn(chunk: chunk, base: UnsafePointer(base), count: count,
                          listRuns: listRuns)
    }
}
