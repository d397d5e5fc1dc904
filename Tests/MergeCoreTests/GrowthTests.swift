//! The buffers a server's merges grow run after run reserve ahead (`TransformArena.growColumns`,
//! `LocalEdits.reserveCapacity`): what they hold is kept, and a growth leaves room for many
//! more before the next one (each growth copies into fresh pages).

@testable import MergeCore
import Testing

@Suite("Buffers that grow with a server's window")
struct GrowthTests {
    @Test("the arena's columns keep their slots and grow eightfold")
    func arenaColumnsGrowAhead() {
        var arena = TransformArena()
        arena.reset(capacity: 16)
        let first = arena.growColumns(by: 10, changeset: 3)
        #expect(first == 0)
        for slot in 0..<10 {
            arena.kind[slot] = UInt8(slot)
            arena.index[slot] = UInt32(100 + slot)
            arena.position[slot] = UInt32(slot)
        }
        // Past every column's capacity: each grows to at least eight times its own.
        func capacities(_ arena: TransformArena) -> [Int] {
            [arena.kind.capacity, arena.flags.capacity, arena.node.capacity,
             arena.field.capacity, arena.index.capacity, arena.priorSize.capacity,
             arena.changeset.capacity, arena.position.capacity]
        }
        let before = capacities(arena)
        let grownBy = before.max()! - arena.count + 1
        let second = arena.growColumns(by: grownBy, changeset: 4)
        #expect(second == 10)
        #expect(arena.count == 10 + grownBy)
        let after = capacities(arena)
        for column in before.indices {
            #expect(after[column] >= TransformArena.columnGrowthFactor * before[column],
                    "column \(column): \(before[column]) -> \(after[column])")
        }
        // The old slots as they were, the new ones zero in their changeset.
        for slot in 0..<10 {
            #expect(arena.kind[slot] == UInt8(slot))
            #expect(arena.index[slot] == UInt32(100 + slot))
            #expect(arena.position[slot] == UInt32(slot))
            #expect(arena.changeset[slot] == 3)
        }
        for slot in 10..<arena.count {
            let zeros: [UInt32] = [UInt32(arena.kind[slot]), UInt32(arena.flags[slot]),
                                   UInt32(bitPattern: arena.node[slot]), arena.field[slot],
                                   arena.index[slot], arena.priorSize[slot],
                                   arena.position[slot]]
            #expect(zeros == [0, 0, 0, 0, 0, 0, 0], "slot \(slot)")
            #expect(arena.changeset[slot] == 4)
        }
        // Within the capacity: no growth.
        let capacityAfter = arena.index.capacity
        _ = arena.growColumns(by: capacityAfter - arena.count, changeset: 5)
        #expect(arena.index.capacity == capacityAfter)
    }

    @Test("a server's reciprocal streams grow to four times what is asked, and keep it")
    func localEditsReserveAhead() {
        var edits = LocalEdits()
        edits.reserveCapacity(changesets: 10, discards: 100, reindexes: 1_000, replacements: 5,
                              shifts: 20)
        #expect(edits.reindexed.capacity >= LocalEdits.growthFactor * 1_000)
        #expect(edits.reindexPositions.capacity >= LocalEdits.growthFactor * 1_000)
        #expect(edits.discards.capacity >= LocalEdits.growthFactor * 100)
        #expect(edits.shifts.capacity >= LocalEdits.growthFactor * 20)
        // The next merge's window is a little larger: the streams keep their memory.
        let capacity = edits.reindexed.capacity
        edits.removeAll()
        edits.reserveCapacity(changesets: 11, discards: 110, reindexes: 1_100, replacements: 5,
                              shifts: 22)
        #expect(edits.reindexed.capacity == capacity)
    }
}
