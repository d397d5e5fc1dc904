//! Exhaustive small-scope convergence: for every small base state and every pair of
//! instructions valid on it (all 14 types), in both discriminant orders,
//! `base · a · T(b, a) == base · b · T(a, b)` (TP1).

import MergeCore
import Testing

/// The test schema: table 1 (int primary key, field 0) with
/// 1: int?  2: int  3: [int]  4: Set<int>  5: link → table 1 (nullable).
enum TestSchema {
    static let table: TableID = 1
    static let nullableInt: FieldID = 1
    static let plainInt: FieldID = 2
    static let list: FieldID = 3
    static let set: FieldID = 4
    static let link: FieldID = 5

    static var instructions: ContiguousArray<Instruction> {
        [
            .addTable(table: table, primaryKeyField: 0, primaryKeyType: .int,
                      primaryKeyNullable: false),
            .addColumn(table: table, field: nullableInt, type: .int, nullable: true,
                       collection: .single, linkTarget: nil),
            .addColumn(table: table, field: plainInt, type: .int, nullable: false,
                       collection: .single, linkTarget: nil),
            .addColumn(table: table, field: list, type: .int, nullable: false,
                       collection: .list, linkTarget: nil),
            .addColumn(table: table, field: set, type: .int, nullable: false,
                       collection: .set, linkTarget: nil),
            .addColumn(table: table, field: link, type: .link, nullable: true,
                       collection: .single, linkTarget: table),
        ]
    }

    static func object(_ key: Int64) -> ObjectRef { ObjectRef(table: table, key: .int(key)) }
}

/// A small base state, described so that a failure message can name it.
struct SmallState: CustomStringConvertible {
    var objectsPresent: [Bool]  // objects 1 and 2
    var listCount: Int  // list of object 1
    var setHasOne: Bool  // set of object 1
    var fieldSet: Bool  // field 1 of object 1

    var description: String {
        "objects=\(objectsPresent) list=\(listCount) set=\(setHasOne) field=\(fieldSet)"
    }

    func replica() throws -> Replica {
        var replica = Replica()
        var instructions = TestSchema.instructions
        for (offset, present) in objectsPresent.enumerated() where present {
            instructions.append(.createObject(TestSchema.object(Int64(offset + 1))))
        }
        if objectsPresent[0] {
            let object = TestSchema.object(1)
            for index in 0..<listCount {
                instructions.append(.arrayInsert(object: object, field: TestSchema.list,
                                                 index: UInt32(index), value: .int(Int64(10 + index)),
                                                 priorSize: UInt32(index)))
            }
            if setHasOne {
                instructions.append(.setInsert(object: object, field: TestSchema.set, value: .int(1)))
            }
            if fieldSet {
                instructions.append(.update(object: object, field: TestSchema.nullableInt,
                                            value: .int(5), isDefault: false))
            }
        }
        try replica.apply(Changeset(instructions: instructions))
        return replica
    }

    static var all: [SmallState] {
        var states: [SmallState] = []
        for second in [false, true] {
            states.append(SmallState(objectsPresent: [false, second], listCount: 0,
                                     setHasOne: false, fieldSet: false))
            for listCount in 0...3 {
                for setHasOne in [false, true] {
                    for fieldSet in [false, true] {
                        states.append(SmallState(objectsPresent: [true, second],
                                                 listCount: listCount, setHasOne: setHasOne,
                                                 fieldSet: fieldSet))
                    }
                }
            }
        }
        return states
    }

    /// Every instruction valid on this state; `tag` (1 or 2) makes inserted values distinct
    /// per side so that orderings are observable.
    func instructions(tag: Int64) -> [Instruction] {
        let table = TestSchema.table
        var result: [Instruction] = [
            .addTable(table: table, primaryKeyField: 0, primaryKeyType: .int, primaryKeyNullable: false),
            .addColumn(table: table, field: TestSchema.nullableInt, type: .int, nullable: true,
                       collection: .single, linkTarget: nil),
            .addColumn(table: table, field: 9, type: .int, nullable: false, collection: .single,
                       linkTarget: nil),
            .eraseColumn(table: table, field: TestSchema.nullableInt),
            .eraseColumn(table: table, field: TestSchema.list),
        ]
        for key in [Int64(1), 2] {
            let object = TestSchema.object(key)
            result.append(.createObject(object))
            result.append(.eraseObject(object))
            guard objectsPresent[Int(key - 1)] else { continue }
            for value in [Value.null, .int(100 * tag)] {
                for isDefault in [false, true] {
                    result.append(.update(object: object, field: TestSchema.nullableInt,
                                          value: value, isDefault: isDefault))
                }
            }
            result.append(.update(object: object, field: TestSchema.plainInt, value: .int(7 * tag),
                                  isDefault: false))
            result.append(.addInteger(object: object, field: TestSchema.nullableInt, increment: tag))
            result.append(.addInteger(object: object, field: TestSchema.plainInt, increment: 3 * tag))
            result.append(.update(object: object, field: TestSchema.link,
                                  value: .link(TestSchema.object(3 - key)), isDefault: false))
            let count = key == 1 ? UInt32(listCount) : 0
            let field = TestSchema.list
            for index in 0...count {
                result.append(.arrayInsert(object: object, field: field, index: index,
                                           value: .int(100 * tag + Int64(index)), priorSize: count))
            }
            for index in 0..<count {
                result.append(.arrayErase(object: object, field: field, index: index, priorSize: count))
                result.append(.arrayUpdate(object: object, field: field, index: index,
                                           value: .int(1000 * tag + Int64(index)), priorSize: count))
                for to in 0..<count where to != index {
                    result.append(.arrayMove(object: object, field: field, from: index, to: to,
                                             priorSize: count))
                }
            }
            result.append(.clear(object: object, field: field))
            for value in [Int64(1), 2] {
                result.append(.setInsert(object: object, field: TestSchema.set, value: .int(value)))
                result.append(.setErase(object: object, field: TestSchema.set, value: .int(value)))
            }
            result.append(.clear(object: object, field: TestSchema.set))
        }
        return result
    }
}

/// Whether a merge error is the expected schema mismatch of two differing AddColumns.
private func isExpectedSchemaMismatch(_ a: Instruction, _ b: Instruction) -> Bool {
    guard case .addColumn(let tableA, let fieldA, _, _, _, _) = a,
          case .addColumn(let tableB, let fieldB, _, _, _, _) = b
    else { return false }
    return tableA == tableB && fieldA == fieldB && a != b
}

@Suite("Pairwise convergence (exhaustive small scope)")
struct PairwiseConvergenceTests {
    @Test("every pair of instructions on every small state converges in both orders")
    func everyPairConverges() throws {
        var pairCount = 0
        var failures: [String] = []
        for state in SmallState.all {
            let base = try state.replica()
            let localInstructions = state.instructions(tag: 1)
            let incomingInstructions = state.instructions(tag: 2)
            for a in localInstructions {
                for b in incomingInstructions {
                    for localWins in [false, true] {
                        pairCount += 1
                        let local = Changeset(originTimestamp: localWins ? 20 : 10,
                                              originFileIdent: 0, instructions: [a])
                        let incoming = Changeset(originTimestamp: 15, originFileIdent: 7,
                                                 instructions: [b])
                        switch mergeTwoWays(base: base, local: [local], incoming: [incoming]) {
                        case .converged:
                            break
                        case .mergeFailed(let error):
                            if !isExpectedSchemaMismatch(a, b) && !isExpectedSchemaMismatch(b, a) {
                                failures.append("\(state) a=\(a) b=\(b) localWins=\(localWins): \(error)")
                            }
                        case .applyFailed(let message):
                            failures.append("\(state) a=\(a) b=\(b) localWins=\(localWins): \(message)")
                        case .diverged(let first, let second):
                            failures.append("\(state) a=\(a) b=\(b) localWins=\(localWins): diverged\n\(first.debugDump())\n--\n\(second.debugDump())")
                        }
                        if failures.count > 10 { break }
                    }
                }
            }
        }
        #expect(pairCount > 50_000)
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test("two-instruction local sequences against one incoming instruction converge (lists)")
    func listSequencesConverge() throws {
        var failures: [String] = []
        for listCount in 0...3 {
            let state = SmallState(objectsPresent: [true, false], listCount: listCount,
                                   setHasOne: false, fieldSet: false)
            let base = try state.replica()
            let firsts = state.instructions(tag: 1).filter(Self.isListEdit(of: 1))
            for first in firsts {
                var afterFirst = base
                try afterFirst.apply(first)
                var follow = state
                follow.listCount = afterFirst.list(of: TestSchema.object(1), field: TestSchema.list)?.count ?? 0
                let seconds = follow.instructions(tag: 3).filter(Self.isListEdit(of: 1))
                for second in seconds {
                    for b in state.instructions(tag: 2).filter(Self.isListEdit(of: 1)) {
                        for localWins in [false, true] {
                            let local = Changeset(originTimestamp: localWins ? 20 : 10,
                                                  instructions: [first, second])
                            let incoming = Changeset(originTimestamp: 15, originFileIdent: 7,
                                                     instructions: [b])
                            let outcome = mergeTwoWays(base: base, local: [local], incoming: [incoming])
                            if case .converged = outcome { continue }
                            failures.append("list=\(listCount) local=[\(first), \(second)] incoming=\(b) localWins=\(localWins): \(outcome)")
                        }
                    }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(5).joined(separator: "\n"))")
    }

    static func isListEdit(of key: Int64) -> (Instruction) -> Bool {
        { instruction in
            guard instruction.object == TestSchema.object(key) else { return false }
            switch instruction {
            case .arrayInsert, .arrayErase, .arrayMove, .arrayUpdate: return true
            case .clear(_, let field): return field == TestSchema.list
            default: return false
            }
        }
    }
}
