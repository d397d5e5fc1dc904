//! `ListCells.meetTiles` (a run's majors in tiles, each passing whole chunks when both
//! summaries show the outcome) against `ListCells.meet` major by major, on random blocks of
//! list edits typed around one position, so that ties between inserts of different ranks
//! and erases of one element are common, with prior sizes sometimes broken on purpose.

@testable import MergeCore
import Randomness
import Testing

/// One side of a tile test: list edits whose prior sizes chain (each the first's plus the
/// deltas before it), their indices within `spread` positions of `around`.
private struct TileSide {
    var isInsert: [Bool] = []
    var index: [UInt32] = []
    var size: [UInt32] = []
    var rank: [UInt32] = []

    init(count: Int, firstSize: UInt32, around: UInt32, spread: UInt32, insertsInTen: UInt64,
         random: RandomStream) {
        var size = firstSize
        for _ in 0..<count {
            let insert = size == 0 || random.chance(insertsInTen, outOf: 10)
            let low = around > spread ? around - spread : 0
            var position = low + UInt32(random.uniformInt(below: 2 * UInt64(spread) + 1))
            position = min(position, insert ? size : size - 1)
            isInsert.append(insert)
            index.append(position)
            self.size.append(size)
            rank.append(UInt32(random.uniformInt(below: 4)))
            size = insert ? size + 1 : size - 1
        }
    }
}

/// The block's minors as the arena holds them, for `ListRunBuffers`.
private struct TileArena {
    var packed: [GroupMinor] = []
    var flags: [UInt8] = []
    var indices: [UInt32] = []
    var sizes: [UInt32] = []
    var slots: [Int32] = []

    init(_ side: TileSide) {
        for minor in side.index.indices {
            let kind = side.isInsert[minor] ? Kind.arrayInsert : Kind.arrayErase
            packed.append(GroupMinor(node: 0, field: 0, rank: side.rank[minor], kind: kind,
                                     flags: TransformArena.alive))
            flags.append(TransformArena.alive)
            indices.append(side.index[minor])
            sizes.append(side.size[minor])
            // Slots in another order than the cursors, as in the arena.
            slots.append(Int32(side.index.count - 1 - minor))
        }
        indices.reverse()
        sizes.reverse()
    }

    /// Meets `majors` with a copy of the block's alive minors, in tiles of `tile` (0: major by
    /// major, `meet`), writes the copies back, and gives what the meeting found.
    mutating func meet(_ majors: inout [ListMajor], chunkLength: Int, chunkSpan: Int64,
                       tile: Int)
        -> (mismatch: MergeError?, stats: ListCellStats)
    {
        let count = packed.count
        var cellSpace = [ListCell](repeating: ListCell(), count: count)
        var chunkSpace = [ListCellChunk](repeating: ListCellChunk(), count: count)
        return packed.withUnsafeMutableBufferPointer { packed in
            flags.withUnsafeMutableBufferPointer { flags in
                indices.withUnsafeMutableBufferPointer { indices in
                    sizes.withUnsafeMutableBufferPointer { sizes in
                        slots.withUnsafeBufferPointer { slots in
                            cellSpace.withUnsafeMutableBufferPointer { space in
                                chunkSpace.withUnsafeMutableBufferPointer { chunkSpace in
                                    majors.withUnsafeMutableBufferPointer { majors in
                                        let buffers = ListRunBuffers(
                                            packed: packed, flags: flags, indices: indices,
                                            sizes: sizes, slots: slots)
                                        var block = ListBlock(start: 0, end: count)
                                        block.state = .uniform
                                        var cells = ListCells(
                                            block, buffers: buffers, space: space,
                                            chunkSpace: chunkSpace, chunkLength: chunkLength,
                                            chunkSpan: chunkSpan)
                                        var mismatch: MergeError?
                                        if tile > 0 {
                                            mismatch = cells.meetTiles(majors, tileLength: tile)
                                        } else {
                                            for major in majors.indices {
                                                mismatch = cells.meet(&majors[major])
                                                if mismatch != nil { break }
                                            }
                                        }
                                        if mismatch == nil { cells.finish() }
                                        return (mismatch, cells.stats)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

@Suite("Tiles of majors equal the majors one by one")
struct ListCellTilesTests {
    @Test("random blocks and runs typed around one position, with broken prior sizes")
    func tilesEqualMajorByMajor() {
        var stats = ListCellStats()
        var (compared, mismatches, otherMismatch) = (0, 0, 0)
        var failures = 0
        var spanCut = 0
        for seed in UInt64(1)...3000 {
            let random = RandomStream(seed: seed, id: StreamID(domain: 0x5449_4C45))
            let firstSize = UInt32(random.uniformInt(below: 12))
            let around = UInt32(random.uniformInt(below: UInt64(firstSize) + 1))
            let spread = UInt32(random.uniformInt(below: 4))
            let insertsInTen = 4 + random.uniformInt(below: 7)
            let minors = TileSide(count: 1 + Int(random.uniformInt(below: 40)),
                                  firstSize: firstSize, around: around, spread: spread,
                                  insertsInTen: insertsInTen, random: random)
            var majorSide = TileSide(count: 1 + Int(random.uniformInt(below: 30)),
                                     firstSize: firstSize, around: around, spread: spread,
                                     insertsInTen: insertsInTen, random: random)
            var arena = TileArena(minors)
            // Prior sizes off by one, on either side or both (where the order of the cells
            // decides which mismatch is found first).
            if random.chance(1, outOf: 6) {
                let at = Int(random.uniformInt(below: UInt64(majorSide.size.count)))
                majorSide.size[at] &+= 1
            }
            if random.chance(1, outOf: 6) {
                let at = Int(random.uniformInt(below: UInt64(arena.sizes.count)))
                arena.sizes[at] &+= 1
            }
            let majors = majorSide.index.indices.map {
                ListMajor(node: 0, field: 0, isInsert: majorSide.isInsert[$0],
                          rank: majorSide.rank[$0], index: majorSide.index[$0],
                          size: majorSide.size[$0])
            }
            let chunkLength = 1 + Int(random.uniformInt(below: 8))
            // Chunks cut by their zone's width too, in some seeds.
            let chunkSpan = random.chance(1, outOf: 2) ? Int64.max
                : Int64(random.uniformInt(below: 4))
            let tile = 1 + Int(random.uniformInt(below: 12))
            var (rowArena, rowMajors) = (arena, majors)
            var (tileArena, tileMajors) = (arena, majors)
            let row = rowArena.meet(&rowMajors, chunkLength: chunkLength, chunkSpan: chunkSpan,
                                    tile: 0)
            let tiled = tileArena.meet(&tileMajors, chunkLength: chunkLength,
                                       chunkSpan: chunkSpan, tile: tile)
            stats.add(tiled.stats)
            var failure: String?
            // Major by major, how the chunks are cut changes nothing: a chunk is passed whole
            // only when no mismatch lies in it, so even the first mismatch found is the same.
            if chunkSpan != .max {
                spanCut += 1
                var (uncutArena, uncutMajors) = (arena, majors)
                let uncut = uncutArena.meet(&uncutMajors, chunkLength: chunkLength,
                                            chunkSpan: .max, tile: 0)
                if "\(String(describing: uncut.mismatch))" != "\(String(describing: row.mismatch))"
                    || uncutArena.indices != rowArena.indices || uncutArena.sizes != rowArena.sizes
                    || uncutArena.flags != rowArena.flags
                    || uncutArena.packed.map(\.flags) != rowArena.packed.map(\.flags)
                    || uncutMajors.map({ [$0.index, $0.size, $0.alive ? 1 : 0] })
                        != rowMajors.map({ [$0.index, $0.size, $0.alive ? 1 : 0] })
                {
                    failure = "chunks cut by their span give another result"
                }
            }
            switch (row.mismatch, tiled.mismatch) {
            case (nil, nil):
                compared += 1
                if rowArena.indices != tileArena.indices || rowArena.sizes != tileArena.sizes
                    || rowArena.flags != tileArena.flags || rowArena.packed.map(\.flags)
                        != tileArena.packed.map(\.flags)
                {
                    failure = "minors differ"
                } else if rowMajors.map({ [$0.index, $0.size, $0.alive ? 1 : 0] })
                    != tileMajors.map({ [$0.index, $0.size, $0.alive ? 1 : 0] })
                {
                    failure = "majors differ"
                }
            case let (rowMismatch?, tileMismatch?):
                // Both find a mismatch, not always the same one: the caller of `meetTiles`
                // starts again major by major to report the pairwise walk's.
                mismatches += 1
                if "\(rowMismatch)" != "\(tileMismatch)" { otherMismatch += 1 }
            default:
                failure = failure ?? "mismatch \(String(describing: row.mismatch)) major by major, "
                    + "\(String(describing: tiled.mismatch)) in tiles"
            }
            if let failure {
                failures += 1
                let cut = "chunks of \(chunkLength) within \(chunkSpan), tiles of \(tile)"
                Issue.record("seed \(seed) (\(cut)): \(failure)")
                if failures >= 3 { break }
            }
        }
        // Not vacuous: every way a tile passes a chunk, and walks, and mismatches.
        #expect(compared > 1500 && mismatches > 100, "compared \(compared), mismatches \(mismatches)")
        // Some mismatches come out otherwise in tiles: why the caller starts again.
        #expect(otherMismatch > 0)
        #expect(spanCut > 1000, "chunks cut by their span in \(spanCut) seeds")
        #expect(stats.tilesAbove > 1000 && stats.tilesAtTie > 100 && stats.tilesBelow > 1000
                && stats.walked > 1000, "\(stats)")
        print("tiles: compared \(compared), mismatches \(mismatches) (\(otherMismatch) another "
              + "one than major by major), \(stats)")
    }
}
