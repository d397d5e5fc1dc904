//! The client-reset recovery rules (REALM-SEMANTICS §4.4), rule by rule, plus a randomized
//! check that local-only list edits recover exactly.

import MergeCore
import Randomness
import Testing

private let item = TestSchema.object(1)
private let other = TestSchema.object(2)

private func schemaReplica() throws -> Replica {
    var replica = Replica()
    try replica.apply(Changeset(instructions: TestSchema.instructions))
    return replica
}

/// A replica holding `item` with list `list` (and `other` when asked).
private func state(list: [Int64] = [], withOther: Bool = false) throws -> Replica {
    var replica = try schemaReplica()
    var instructions: ContiguousArray<Instruction> = [.createObject(item)]
    for (index, value) in list.enumerated() {
        instructions.append(
            .arrayInsert(
                object: item, field: TestSchema.list, index: UInt32(index), value: .int(value),
                priorSize: UInt32(index)))
    }
    if withOther { instructions.append(.createObject(other)) }
    try replica.apply(Changeset(instructions: instructions))
    return replica
}

private func ints(_ replica: Replica, _ object: ObjectRef = item) -> [Int64]? {
    replica.list(of: object, field: TestSchema.list)?.map { value -> Int64 in
        guard case .int(let int) = value else { return -1 }
        return int
    }
}

/// Applies `instructions` to `base` as one local changeset; returns the pre-reset state and the
/// changeset.
private func local(_ base: Replica, _ instructions: ContiguousArray<Instruction>) throws -> (
    Replica, Changeset
) {
    var replica = base
    let changeset = Changeset(version: 1, originTimestamp: 5, instructions: instructions)
    try replica.apply(changeset)
    return (replica, changeset)
}

@Suite("Client reset recovery")
struct ClientResetRecoveryTests {
    @Test("an object created offline is recreated although the server erased one with its key")
    func createdOfflineIsRecreated() throws {
        let base = try schemaReplica()
        let (preReset, changeset) = try local(
            base,
            [
                .createObject(item),
                .update(object: item, field: TestSchema.plainInt, value: .int(7), isDefault: false),
            ])
        let recovery = try preReset.recover([changeset], onto: base)
        #expect(recovery.state.value(of: item, field: TestSchema.plainInt) == .int(7))
        #expect(recovery.changesets[0].changeset.instructions.count == 2)
        #expect(recovery.changesets[0].droppedCount == 0)
        #expect(recovery.changesets[0].changeset.originTimestamp == 5)
    }

    @Test("edits of an object the server deleted are dropped; a local erase of it is a no-op")
    func serverDeleteWins() throws {
        let base = try state()
        let (preReset, changeset) = try local(
            base,
            [
                .update(object: item, field: TestSchema.plainInt, value: .int(3), isDefault: false),
                .addInteger(object: item, field: TestSchema.nullableInt, increment: 1),
                .arrayInsert(
                    object: item, field: TestSchema.list, index: 0, value: .int(1), priorSize: 0),
                .eraseObject(item),
            ])
        let fresh = try schemaReplica()  // the server erased item
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(!recovery.state.contains(item))
        #expect(recovery.changesets[0].changeset.instructions.isEmpty)
        #expect(recovery.drops[RecoveryDropReason.objectDeleted.rawValue] == 3)
        #expect(recovery.drops[RecoveryDropReason.eraseOfMissingObject.rawValue] == 1)
        #expect(recovery.changesets[0].droppedCount == 4)
    }

    @Test("the client's update wins over the server's value, and a local erase is replayed")
    func localUpdateAndEraseApplied() throws {
        let base = try state(withOther: true)
        var fresh = base
        try fresh.apply(
            .update(object: item, field: TestSchema.plainInt, value: .int(100), isDefault: false))
        let (preReset, changeset) = try local(
            base,
            [
                .update(object: item, field: TestSchema.plainInt, value: .int(1), isDefault: false),
                .eraseObject(other),
            ])
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(recovery.state.value(of: item, field: TestSchema.plainInt) == .int(1))
        #expect(!recovery.state.contains(other))
        #expect(recovery.drops.allSatisfy { $0 == 0 })
    }

    @Test("AddInteger applies to a non-null integer only")
    func addIntegerNeedsAnInteger() throws {
        let base = try state()
        let (preReset, changeset) = try local(
            base,
            [
                .addInteger(object: item, field: TestSchema.nullableInt, increment: 2),
                .addInteger(object: item, field: TestSchema.plainInt, increment: 2),
            ])
        var fresh = base
        try fresh.apply(
            .update(object: item, field: TestSchema.plainInt, value: .int(10), isDefault: false))
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(recovery.state.value(of: item, field: TestSchema.plainInt) == .int(12))
        #expect(recovery.state.value(of: item, field: TestSchema.nullableInt) == nil)
        #expect(recovery.drops[RecoveryDropReason.addIntegerOnNonInteger.rawValue] == 1)
        #expect(recovery.changesets[0].changeset.instructions.count == 1)
    }

    @Test("a link to an object that is gone becomes null where null is allowed")
    func linkToDeletedObject() throws {
        let base = try state(withOther: true)
        let (preReset, changeset) = try local(
            base,
            [.update(object: item, field: TestSchema.link, value: .link(other), isDefault: false)])
        var fresh = base
        try fresh.apply(.eraseObject(other))
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(
            recovery.changesets[0].changeset.instructions == [
                .update(object: item, field: TestSchema.link, value: .null, isDefault: false)
            ])
        #expect(recovery.state.value(of: item, field: TestSchema.link) == .null)
    }

    @Test("inserts past the end of the server's list are clamped to an append")
    func insertsAreClamped() throws {
        let base = try state(list: [1, 2, 3])
        let (preReset, changeset) = try local(
            base,
            [.arrayInsert(object: item, field: TestSchema.list, index: 3, value: .int(9), priorSize: 3)])
        var fresh = base
        try fresh.apply(.arrayErase(object: item, field: TestSchema.list, index: 0, priorSize: 3))
        try fresh.apply(.arrayErase(object: item, field: TestSchema.list, index: 0, priorSize: 2))
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(ints(recovery.state) == [3, 9])
        #expect(
            recovery.changesets[0].changeset.instructions == [
                .arrayInsert(
                    object: item, field: TestSchema.list, index: 1, value: .int(9), priorSize: 1)
            ])
    }

    /// The reference's own example: list [A, B]; the server moved it to [B, A]; the client
    /// erased index 0 (A). Replaying "erase 0" would erase B, so the list becomes the client's
    /// final [B].
    @Test("an edit of a pre-existing element copies the client's whole list instead")
    func listCopiedOnUnknownIndex() throws {
        let base = try state(list: [10, 20])
        let (preReset, changeset) = try local(
            base,
            [
                .arrayErase(object: item, field: TestSchema.list, index: 0, priorSize: 2),
                .arrayInsert(
                    object: item, field: TestSchema.list, index: 1, value: .int(30), priorSize: 1),
            ])
        #expect(ints(preReset) == [20, 30])
        var fresh = base
        try fresh.apply(
            .arrayMove(object: item, field: TestSchema.list, from: 0, to: 1, priorSize: 2))
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(ints(recovery.state) == [20, 30])
        #expect(recovery.listsCopied == 1)
        #expect(recovery.drops[RecoveryDropReason.listCopied.rawValue] == 2)
        #expect(recovery.changesets[0].copiedCount > 0)
        // The copy keeps the common prefix [20] and rewrites the rest.
        #expect(
            recovery.changesets[0].changeset.instructions == [
                .arrayUpdate(
                    object: item, field: TestSchema.list, index: 1, value: .int(30), priorSize: 2)
            ])
    }

    @Test("a Clear restarts the tracking: later inserts and erases replay")
    func clearRestartsTracking() throws {
        let base = try state(list: [1, 2])
        let (preReset, changeset) = try local(
            base,
            [
                .arrayErase(object: item, field: TestSchema.list, index: 0, priorSize: 2),
                .clear(object: item, field: TestSchema.list),
                .arrayInsert(
                    object: item, field: TestSchema.list, index: 0, value: .int(5), priorSize: 0),
                .arrayInsert(
                    object: item, field: TestSchema.list, index: 0, value: .int(6), priorSize: 1),
                .arrayErase(object: item, field: TestSchema.list, index: 1, priorSize: 2),
            ])
        var fresh = base
        try fresh.apply(
            .arrayInsert(object: item, field: TestSchema.list, index: 2, value: .int(3), priorSize: 2))
        let recovery = try preReset.recover([changeset], onto: fresh)
        #expect(ints(recovery.state) == [6])
        #expect(recovery.listsCopied == 0)
        #expect(recovery.drops[RecoveryDropReason.listCopied.rawValue] == 1)
    }

    @Test("destructive and incompatible schema changes fail the recovery")
    func schemaFailures() throws {
        let base = try state()
        let (erased, eraseColumn) = try local(
            base, [.eraseColumn(table: TestSchema.table, field: TestSchema.set)])
        #expect(throws: RecoveryFailure.self) { try erased.recover([eraseColumn], onto: base) }
        do {
            _ = try erased.recover([eraseColumn], onto: base)
        } catch {
            #expect(error.reason == .destructiveSchemaChange)
        }

        let added = Instruction.addColumn(
            table: TestSchema.table, field: 9, type: .string, nullable: true, collection: .single,
            linkTarget: nil)
        let (preReset, addColumn) = try local(base, [added])
        var fresh = base
        try fresh.apply(
            .addColumn(
                table: TestSchema.table, field: 9, type: .int, nullable: true,
                collection: .single, linkTarget: nil))
        do {
            _ = try preReset.recover([addColumn], onto: fresh)
            Issue.record("an incompatible AddColumn recovered")
        } catch {
            #expect(error.reason == .schemaMismatch)
        }
        // A compatible one is written again, so the server learns of it.
        let recovery = try preReset.recover([addColumn], onto: base)
        #expect(recovery.changesets[0].changeset.instructions == [added])
        #expect(preReset.schemaMissing(from: recovery.state) == nil)
    }

    @Test("the schema check names what the fresh copy lacks")
    func schemaMissing() throws {
        let base = try state()
        var fresh = base
        try fresh.apply(.eraseColumn(table: TestSchema.table, field: TestSchema.set))
        #expect(base.schemaMissing(from: base) == nil)
        #expect(fresh.schemaMissing(from: base) == nil)
        let message = try #require(base.schemaMissing(from: fresh))
        #expect(message.contains("property 1.4"))
        #expect(base.schemaMissing(from: Replica())?.contains("class 1") == true)
    }

    /// A list that starts empty on both sides, edited only locally: every index names an
    /// element the recovery inserted, so the replay must give exactly the client's list,
    /// without copying. This drives the tracker's insert, move, update and erase bookkeeping
    /// through thousands of random sequences.
    @Test("local-only list edits recover exactly", arguments: 0..<40)
    func localOnlyListEditsRecoverExactly(seed: UInt64) throws {
        let stream = RandomStream(seed: 77, id: StreamID(domain: 9, index: seed))
        let base = try state()
        var preReset = base
        var changesets: [Changeset] = []
        var next: Int64 = 1
        for version in 1...Int(stream.uniformInt(below: 6) + 1) {
            var instructions = ContiguousArray<Instruction>()
            for _ in 0..<Int(stream.uniformInt(below: 12) + 1) {
                let size = UInt32(ints(preReset)!.count)
                let roll = stream.uniformInt(below: 100)
                let instruction: Instruction
                if size == 0 || roll < 45 {
                    instruction = .arrayInsert(
                        object: item, field: TestSchema.list,
                        index: UInt32(stream.uniformInt(below: UInt64(size) + 1)),
                        value: .int(next), priorSize: size)
                    next += 1
                } else {
                    let index = UInt32(stream.uniformInt(below: UInt64(size)))
                    if roll < 65 {
                        instruction = .arrayMove(
                            object: item, field: TestSchema.list, from: index,
                            to: UInt32(stream.uniformInt(below: UInt64(size))), priorSize: size)
                    } else if roll < 80 {
                        instruction = .arrayUpdate(
                            object: item, field: TestSchema.list, index: index,
                            value: .int(1000 + next), priorSize: size)
                        next += 1
                    } else {
                        instruction = .arrayErase(
                            object: item, field: TestSchema.list, index: index, priorSize: size)
                    }
                }
                try preReset.apply(instruction)
                instructions.append(instruction)
            }
            changesets.append(Changeset(version: UInt64(version), instructions: instructions))
        }
        let recovery = try preReset.recover(changesets, onto: base)
        #expect(ints(recovery.state) == ints(preReset), "seed \(seed)")
        #expect(recovery.listsCopied == 0, "seed \(seed)")
        #expect(recovery.drops.allSatisfy { $0 == 0 }, "seed \(seed)")
    }

    /// Lists edited on both sides, with pre-existing elements: whatever the replay decides, it
    /// never fails or traps, a copied list ends as the client's, and the result always applies.
    @Test("lists edited on both sides recover without failing", arguments: 0..<60)
    func listsEditedOnBothSides(seed: UInt64) throws {
        let stream = RandomStream(seed: 78, id: StreamID(domain: 9, index: seed))
        let start = (0..<Int(stream.uniformInt(below: 5))).map { Int64($0 + 1) }
        let base = try state(list: start)
        var next: Int64 = 100
        func randomEdits(_ replica: inout Replica, count: Int) throws -> ContiguousArray<Instruction> {
            var edits = ContiguousArray<Instruction>()
            for _ in 0..<count {
                let size = UInt32(ints(replica)!.count)
                let roll = stream.uniformInt(below: 100)
                let edit: Instruction
                if size == 0 || roll < 50 {
                    edit = .arrayInsert(
                        object: item, field: TestSchema.list,
                        index: UInt32(stream.uniformInt(below: UInt64(size) + 1)),
                        value: .int(next), priorSize: size)
                    next += 1
                } else if roll < 70 {
                    edit = .arrayMove(
                        object: item, field: TestSchema.list,
                        from: UInt32(stream.uniformInt(below: UInt64(size))),
                        to: UInt32(stream.uniformInt(below: UInt64(size))), priorSize: size)
                } else {
                    edit = .arrayErase(
                        object: item, field: TestSchema.list,
                        index: UInt32(stream.uniformInt(below: UInt64(size))), priorSize: size)
                }
                try replica.apply(edit)
                edits.append(edit)
            }
            return edits
        }
        var fresh = base
        _ = try randomEdits(&fresh, count: Int(stream.uniformInt(below: 6)))
        var preReset = base
        var changesets: [Changeset] = []
        for version in 1...3 {
            let edits = try randomEdits(&preReset, count: Int(stream.uniformInt(below: 8)))
            changesets.append(Changeset(version: UInt64(version), instructions: edits))
        }
        let recovery = try preReset.recover(changesets, onto: fresh)
        if recovery.listsCopied > 0 {
            #expect(ints(recovery.state) == ints(preReset), "seed \(seed)")
        }
        var replayed = fresh
        for changeset in recovery.changesets { try replayed.apply(changeset.changeset) }
        #expect(replayed == recovery.state, "seed \(seed)")
    }
}
