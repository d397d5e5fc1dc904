//! Random valid edits of a replica in the manner of realm-core's `test/fuzz_tester.hpp`:
//! a small primary-key space (many collisions), erases racing updates, lists, sets, links and
//! default writes. All randomness comes from `Randomness.RandomStream`.

import MergeCore
import Randomness

/// What kinds of edits a generator may make.
struct EditMix {
    var lists = true
    var sets = true
    var objects = true
    var counters = true
    /// Lists get only ArrayInsert and ArrayErase (the textbook domain of the TP2 puzzle):
    /// inserted values are never rewritten, so a value names its element and its client.
    var listInsertsAndErasesOnly = false
    var keySpace: Int64 = 6
    /// Occasionally erase column 1 (`nullableInt`) or add it back: the all-pairs fallback.
    var schemaChanges = false

    static let everything = EditMix()
    static let noLists = EditMix(lists: false)
    static let listInsertsAndErases = EditMix(listInsertsAndErasesOnly: true)
    static let withSchemaChanges = EditMix(schemaChanges: true)
}

/// Makes one random valid instruction for `replica`, applies it and returns it.
func randomEdit(_ replica: inout Replica, _ random: RandomStream, mix: EditMix,
                tag: Int64) throws -> Instruction {
    let table = TestSchema.table
    let keyCount = UInt64(mix.keySpace)
    let existing = replica.objects(in: table)
    func anyObject() -> ObjectRef { TestSchema.object(Int64(random.uniformInt(below: keyCount))) }
    let choice = random.uniformInt(below: 100)
    let hasNullableInt = replica.schema(of: table)?.columns
        .contains { $0.field == TestSchema.nullableInt } ?? false
    var instruction: Instruction
    if mix.schemaChanges && random.chance(1, outOf: 40) {
        instruction = hasNullableInt
            ? .eraseColumn(table: table, field: TestSchema.nullableInt)
            : TestSchema.instructions[1]
    } else if existing.isEmpty || (mix.objects && choice < 8) {
        instruction = .createObject(anyObject())
    } else if mix.objects && choice < 14 {
        instruction = .eraseObject(existing[Int(random.uniformInt(below: UInt64(existing.count)))])
    } else {
        let object = existing[Int(random.uniformInt(below: UInt64(existing.count)))]
        let listCount = UInt32(replica.list(of: object, field: TestSchema.list)?.count ?? 0)
        let value = Int64(random.uniformInt(below: 1000)) + 1000 * tag
        let sub = random.uniformInt(below: 100)
        if mix.lists && sub < 35 {
            let listChoice = random.uniformInt(below: 20)
            if listCount == 0 || listChoice < 8
                || (mix.listInsertsAndErasesOnly && listChoice < 12)
            {
                instruction = .arrayInsert(object: object, field: TestSchema.list,
                                           index: UInt32(random.uniformInt(below: UInt64(listCount) + 1)),
                                           value: .int(value), priorSize: listCount)
            } else if listChoice < 12 || mix.listInsertsAndErasesOnly {
                instruction = .arrayErase(object: object, field: TestSchema.list,
                                          index: UInt32(random.uniformInt(below: UInt64(listCount))),
                                          priorSize: listCount)
            } else if listChoice < 15 {
                instruction = .arrayUpdate(object: object, field: TestSchema.list,
                                           index: UInt32(random.uniformInt(below: UInt64(listCount))),
                                           value: .int(value), priorSize: listCount)
            } else if listChoice < 19 {
                instruction = .arrayMove(object: object, field: TestSchema.list,
                                         from: UInt32(random.uniformInt(below: UInt64(listCount))),
                                         to: UInt32(random.uniformInt(below: UInt64(listCount))),
                                         priorSize: listCount)
            } else {
                instruction = .clear(object: object, field: TestSchema.list)
            }
        } else if mix.sets && sub < 55 {
            let element = Value.int(Int64(random.uniformInt(below: 4)))
            let setChoice = random.uniformInt(below: 20)
            if setChoice < 11 {
                instruction = .setInsert(object: object, field: TestSchema.set, value: element)
            } else if setChoice < 19 {
                instruction = .setErase(object: object, field: TestSchema.set, value: element)
            } else {
                instruction = .clear(object: object, field: TestSchema.set)
            }
        } else if mix.counters && sub < 70 {
            let field = random.chance(1, outOf: 2) && hasNullableInt
                ? TestSchema.nullableInt : TestSchema.plainInt
            instruction = .addInteger(object: object, field: field,
                                      increment: Int64(random.uniformInt(below: 10)) - 3)
        } else if sub < 78 {
            instruction = .update(object: object, field: TestSchema.link, value: .link(anyObject()),
                                  isDefault: false)
        } else if sub < 88 && hasNullableInt {
            let nullValue = random.chance(1, outOf: 5)
            instruction = .update(object: object, field: TestSchema.nullableInt,
                                  value: nullValue ? .null : .int(value),
                                  isDefault: random.chance(1, outOf: 6))
        } else {
            instruction = .update(object: object, field: TestSchema.plainInt, value: .int(value),
                                  isDefault: random.chance(1, outOf: 6))
        }
    }
    // A move onto itself is legal but dull; keep it (it exercises the from == to discard).
    try replica.apply(instruction)
    return instruction
}

/// A client clock that steps forward and sometimes back, in milliseconds.
struct SkewedClock {
    var now: UInt64

    mutating func tick(_ random: RandomStream) -> UInt64 {
        if random.chance(1, outOf: 8) {
            now = now - min(now, random.uniformInt(below: 6))
        } else {
            now += random.uniformInt(below: 4)
        }
        return now
    }
}

extension ModelClient {
    /// Makes a changeset of `count` random edits and commits it.
    mutating func commitRandom(count: Int, random: RandomStream, mix: EditMix,
                               timestamp: UInt64) throws {
        var scratch = state
        var instructions = ContiguousArray<Instruction>()
        for _ in 0..<count {
            instructions.append(try randomEdit(&scratch, random, mix: mix, tag: Int64(id + 1)))
        }
        try commit(instructions, timestamp: timestamp)
        precondition(state == scratch, "commit disagrees with the generator's scratch state")
    }
}
