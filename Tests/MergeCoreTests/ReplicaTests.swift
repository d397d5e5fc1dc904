//! Unit tests of `Replica.apply` semantics and its typed errors, plus exit tests for the
//! preconditions that guard programmer errors.

import MergeCore
import Testing

private let object1 = TestSchema.object(1)
private let object2 = TestSchema.object(2)

private func schemaReplica() throws -> Replica {
    var replica = Replica()
    try replica.apply(Changeset(instructions: TestSchema.instructions))
    return replica
}

private func expectApplyError(
    _ expected: ApplyError, _ instruction: Instruction, on replica: Replica,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var copy = replica
    #expect(throws: expected, sourceLocation: sourceLocation) { try copy.apply(instruction) }
}

@Suite("Replica")
struct ReplicaTests {
    @Test("CreateObject is get-or-create and EraseObject is idempotent")
    func createAndErase() throws {
        var replica = try schemaReplica()
        try replica.apply(.createObject(object1))
        try replica.apply(.update(object: object1, field: TestSchema.plainInt, value: .int(4),
                                  isDefault: false))
        try replica.apply(.createObject(object1))
        #expect(replica.objectCount == 1)
        #expect(replica.value(of: object1, field: TestSchema.plainInt) == .int(4))
        try replica.apply(.eraseObject(object1))
        try replica.apply(.eraseObject(object1))
        #expect(!replica.contains(object1))
        #expect(replica.value(of: object1, field: TestSchema.plainInt) == nil)
        #expect(replica.objectCount == 0)
    }

    @Test("links to an erased object read as null and resolve again when it is recreated")
    func linksToErasedObjects() throws {
        var replica = try schemaReplica()
        try replica.apply(Changeset(instructions: [
            .createObject(object1), .createObject(object2),
            .update(object: object1, field: TestSchema.link, value: .link(object2), isDefault: false),
        ]))
        #expect(replica.value(of: object1, field: TestSchema.link) == .link(object2))
        try replica.apply(.eraseObject(object2))
        #expect(replica.value(of: object1, field: TestSchema.link) == .null)
        try replica.apply(.createObject(object2))
        #expect(replica.value(of: object1, field: TestSchema.link) == .link(object2))
    }

    @Test("lists, sets, AddInteger and Clear")
    func collections() throws {
        var replica = try schemaReplica()
        try replica.apply(Changeset(instructions: [
            .createObject(object1),
            .arrayInsert(object: object1, field: TestSchema.list, index: 0, value: .int(1), priorSize: 0),
            .arrayInsert(object: object1, field: TestSchema.list, index: 1, value: .int(2), priorSize: 1),
            .arrayInsert(object: object1, field: TestSchema.list, index: 0, value: .int(3), priorSize: 2),
            .arrayMove(object: object1, field: TestSchema.list, from: 0, to: 2, priorSize: 3),
            .arrayUpdate(object: object1, field: TestSchema.list, index: 0, value: .int(9), priorSize: 3),
            .setInsert(object: object1, field: TestSchema.set, value: .int(5)),
            .setInsert(object: object1, field: TestSchema.set, value: .int(2)),
            .setInsert(object: object1, field: TestSchema.set, value: .int(5)),
            .setErase(object: object1, field: TestSchema.set, value: .int(7)),
            .addInteger(object: object1, field: TestSchema.plainInt, increment: 3),
            .addInteger(object: object1, field: TestSchema.nullableInt, increment: 3),
        ]))
        #expect(replica.list(of: object1, field: TestSchema.list) == [.int(9), .int(2), .int(3)])
        #expect(replica.setElements(of: object1, field: TestSchema.set) == [.int(2), .int(5)])
        #expect(replica.value(of: object1, field: TestSchema.plainInt) == .int(3))
        #expect(replica.value(of: object1, field: TestSchema.nullableInt) == nil)
        try replica.apply(.clear(object: object1, field: TestSchema.list))
        #expect(replica.list(of: object1, field: TestSchema.list) == [])
        #expect(replica.objects(in: TestSchema.table) == [object1])
    }

    @Test("bad instructions are typed errors, never crashes")
    func typedErrors() throws {
        var replica = try schemaReplica()
        try replica.apply(.createObject(object1))
        expectApplyError(.noSuchObject(object2),
                         .update(object: object2, field: TestSchema.plainInt, value: .int(1), isDefault: false),
                         on: replica)
        expectApplyError(.indexOutOfRange(index: 1, size: 0),
                         .arrayInsert(object: object1, field: TestSchema.list, index: 1, value: .int(1), priorSize: 0),
                         on: replica)
        expectApplyError(.priorSizeMismatch(priorSize: 2, size: 0),
                         .arrayErase(object: object1, field: TestSchema.list, index: 0, priorSize: 2),
                         on: replica)
        expectApplyError(.noSuchTable(table: 9), .createObject(ObjectRef(table: 9, key: .int(1))),
                         on: replica)
        expectApplyError(.primaryKeyTypeMismatch(table: 1),
                         .createObject(ObjectRef(table: 1, key: .string("x"))), on: replica)
        expectApplyError(.valueTypeMismatch(table: 1, field: TestSchema.plainInt),
                         .update(object: object1, field: TestSchema.plainInt, value: .null, isDefault: false),
                         on: replica)
        expectApplyError(.collectionKindMismatch(table: 1, field: TestSchema.list),
                         .setInsert(object: object1, field: TestSchema.list, value: .int(1)), on: replica)
        expectApplyError(.noSuchColumn(table: 1, field: 42),
                         .update(object: object1, field: 42, value: .int(1), isDefault: false), on: replica)
        expectApplyError(.primaryKeyFieldWrite(table: 1, field: 0),
                         .update(object: object1, field: 0, value: .int(1), isDefault: false), on: replica)
        expectApplyError(.tableMismatch(table: 1),
                         .addTable(table: 1, primaryKeyField: 0, primaryKeyType: .string,
                                   primaryKeyNullable: false), on: replica)
        expectApplyError(.columnMismatch(table: 1, field: TestSchema.plainInt),
                         .addColumn(table: 1, field: TestSchema.plainInt, type: .string, nullable: false,
                                    collection: .single, linkTarget: nil), on: replica)
        #expect(ApplyError.noSuchObject(object1).code == 106)
    }

    @Test("EraseColumn removes the column's values from every object")
    func eraseColumn() throws {
        var replica = try schemaReplica()
        try replica.apply(Changeset(instructions: [
            .createObject(object1),
            .update(object: object1, field: TestSchema.plainInt, value: .int(1), isDefault: false),
            .eraseColumn(table: 1, field: TestSchema.plainInt),
        ]))
        #expect(replica.value(of: object1, field: TestSchema.plainInt) == nil)
        #expect(replica.schema(of: 1)?.columns.contains { $0.field == TestSchema.plainInt } == false)
    }

    @Test("equality and digest ignore the object table's layout; digests are fixed")
    func equalityIgnoresLayout() throws {
        var forward = try schemaReplica()
        var backward = forward
        for key in Int64(0)..<500 {
            try forward.apply(.createObject(TestSchema.object(key)))
            try backward.apply(.createObject(TestSchema.object(499 - key)))
        }
        for key in stride(from: Int64(0), to: 500, by: 3) {
            try forward.apply(.eraseObject(TestSchema.object(key)))
        }
        for key in stride(from: Int64(498), through: 0, by: -3) {
            try backward.apply(.eraseObject(TestSchema.object(key)))
        }
        #expect(forward.objectCount == backward.objectCount)
        #expect(forward == backward)
        #expect(forward.contentDigest() == backward.contentDigest())
        // A fixed digest: a change here means digests changed across versions (update on purpose).
        let empty = Replica()
        #expect(empty.contentDigest() == Replica().contentDigest())
    }

    @Test("a merge with a differing AddColumn is a typed schema mismatch")
    func schemaMismatch() {
        var transformer = Transformer()
        var incoming: ContiguousArray<Changeset> = [Changeset(originTimestamp: 1, originFileIdent: 5, instructions: [
            .addColumn(table: 1, field: 9, type: .int, nullable: false, collection: .single, linkTarget: nil),
        ])]
        var local: ContiguousArray<Changeset> = [Changeset(originTimestamp: 2, instructions: [
            .addColumn(table: 1, field: 9, type: .string, nullable: false, collection: .single, linkTarget: nil),
        ])]
        #expect(throws: MergeError.schemaMismatch(table: 1, field: 9)) {
            try transformer.merge(incoming: &incoming, local: &local, localFileIdent: 3)
        }
        #expect(incoming.count == 1 && local.count == 1)
    }

    @Test("a merge with disagreeing prior sizes is a typed error")
    func priorSizeMismatch() {
        var transformer = Transformer()
        let object = object1
        var incoming: ContiguousArray<Changeset> = [Changeset(originTimestamp: 1, originFileIdent: 5, instructions: [
            .arrayInsert(object: object, field: 3, index: 0, value: .int(1), priorSize: 2),
        ])]
        var local: ContiguousArray<Changeset> = [Changeset(originTimestamp: 2, instructions: [
            .arrayErase(object: object, field: 3, index: 0, priorSize: 3),
        ])]
        #expect(throws: MergeError.priorSizeMismatch(priorSizeIncoming: 2, priorSizeLocal: 3)) {
            try transformer.merge(incoming: &incoming, local: &local, localFileIdent: 3)
        }
    }

    @Test("a merge rejects a list index beyond its prior size, on either side and scan path")
    func indexBeyondPriorSize() {
        let object = object1
        let valid = Instruction.arrayInsert(object: object, field: 3, index: 0, value: .int(1),
                                            priorSize: 2)
        // Each bad instruction at the first index its kind does not allow.
        let bad: [(Instruction, MergeError)] = [
            (.arrayInsert(object: object, field: 3, index: 3, value: .int(1), priorSize: 2),
             .indexBeyondPriorSize(index: 3, priorSize: 2)),
            (.arrayErase(object: object, field: 3, index: 2, priorSize: 2),
             .indexBeyondPriorSize(index: 2, priorSize: 2)),
            (.arrayUpdate(object: object, field: 3, index: 2, value: .int(1), priorSize: 2),
             .indexBeyondPriorSize(index: 2, priorSize: 2)),
            (.arrayMove(object: object, field: 3, from: 2, to: 0, priorSize: 2),
             .indexBeyondPriorSize(index: 2, priorSize: 2)),
            (.arrayMove(object: object, field: 3, from: 0, to: 2, priorSize: 2),
             .indexBeyondPriorSize(index: 2, priorSize: 2)),
        ]
        // A link in the same changeset makes the scan read every instruction one by one;
        // without it, the changeset is read in bulk (local and incoming alike).
        let link = Instruction.update(object: object, field: 4, value: .link(object), isDefault: false)
        for (instruction, error) in bad {
            for withLink in [false, true] {
                var transformer = Transformer()
                var incoming: ContiguousArray<Changeset> = [Changeset(
                    originTimestamp: 1, originFileIdent: 5, instructions: [valid])]
                var local: ContiguousArray<Changeset> = [Changeset(
                    originTimestamp: 2, instructions: withLink ? [link, instruction] : [instruction])]
                #expect(throws: error) {
                    try transformer.merge(incoming: &incoming, local: &local, localFileIdent: 3)
                }
                var badIncoming: ContiguousArray<Changeset> = [Changeset(
                    originTimestamp: 1, originFileIdent: 5,
                    instructions: withLink ? [link, instruction] : [instruction])]
                var validLocal: ContiguousArray<Changeset> = [Changeset(
                    originTimestamp: 2, instructions: [valid])]
                #expect(throws: error) {
                    try transformer.merge(incoming: &badIncoming, local: &validLocal,
                                          localFileIdent: 3)
                }
            }
        }
        // At the bounds themselves every kind is accepted.
        var transformer = Transformer()
        var incoming: ContiguousArray<Changeset> = [Changeset(
            originTimestamp: 1, originFileIdent: 5, instructions: [valid])]
        var local: ContiguousArray<Changeset> = [Changeset(originTimestamp: 2, instructions: [
            .arrayInsert(object: object, field: 3, index: 2, value: .int(1), priorSize: 2),
            .arrayErase(object: object, field: 3, index: 2, priorSize: 3),
        ])]
        #expect(throws: Never.self) {
            try transformer.merge(incoming: &incoming, local: &local, localFileIdent: 3)
        }
    }

    @Test("precondition: a local-origin changeset merged without a local file ident traps")
    func localFileIdentPrecondition() async {
        await #expect(processExitsWith: .failure) {
            var transformer = Transformer()
            var incoming: ContiguousArray<Changeset> = [Changeset(originTimestamp: 1, originFileIdent: 5)]
            var local: ContiguousArray<Changeset> = [Changeset(originTimestamp: 1, originFileIdent: 0)]
            try? transformer.merge(incoming: &incoming, local: &local, localFileIdent: 0)
        }
    }

    @Test("limits fit the encodings that rely on them")
    func limitRelationships() {
        // Object slots and node slots keep `index + 1` in 32 bits.
        #expect(MergeLimits.objectsMax < Int(UInt32.max))
        // Arena positions are Int32 and a merge holds both sides.
        #expect(2 * MergeLimits.mergeInstructionsMax < Int(Int32.max))
        // List sizes are UInt32 and a merge can add one per incoming insert.
        #expect(UInt64(MergeLimits.listElementsMax) + UInt64(MergeLimits.mergeInstructionsMax)
                < UInt64(UInt32.max))
        #expect(MergeLimits.columnsPerTableMax <= Int(UInt32.max))
    }
}
