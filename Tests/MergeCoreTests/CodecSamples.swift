import MergeCore
import Randomness

/// Changesets for the codec tests: one of every instruction and payload, and random ones.
enum CodecSamples {
    static let everyValue: [Value] = [
        .null, .int(-42), .bool(true), .string("héllo, 世界"), .double(-0.0),
        .timestamp(-1_700_000_000_123_456_789), .objectId(ObjectID(high: 0xDEAD_BEEF, low: 42)),
        .uuid(UUIDValue(high: .max, low: 1)),
        .link(ObjectRef(table: 3, key: .string("target"))), .double(.nan),
    ]

    static let everyKey: [PrimaryKey] = [
        .null, .int(.min), .int(.max), .string(""), .objectId(ObjectID(high: 1, low: 2)),
        .uuid(UUIDValue(high: 3, low: 4)),
    ]

    static func everyInstruction() -> Changeset {
        var instructions = ContiguousArray<Instruction>()
        for type in PrimaryKeyType.allCases {
            instructions.append(.addTable(table: UInt32(type.rawValue), primaryKeyField: 0,
                                          primaryKeyType: type, primaryKeyNullable: type == .string))
        }
        for type in ValueType.allCases {
            for collection in CollectionKind.allCases {
                instructions.append(.addColumn(
                    table: 1, field: UInt32(type.rawValue) * 4 + UInt32(collection.rawValue),
                    type: type, nullable: collection == .single,
                    collection: collection, linkTarget: type == .link ? 2 : nil))
            }
        }
        instructions.append(.eraseColumn(table: .max, field: .max))
        for key in everyKey {
            let object = ObjectRef(table: 1, key: key)
            instructions.append(.createObject(object))
            for value in everyValue {
                instructions.append(.update(object: object, field: 1, value: value, isDefault: false))
                instructions.append(.update(object: object, field: 2, value: value, isDefault: true))
                instructions.append(.arrayUpdate(object: object, field: 3, index: 1, value: value,
                                                 priorSize: 2))
                instructions.append(.arrayInsert(object: object, field: 3, index: .max,
                                                 value: value, priorSize: .max))
                instructions.append(.setInsert(object: object, field: 4, value: value))
                instructions.append(.setErase(object: object, field: 4, value: value))
            }
            instructions.append(.addInteger(object: object, field: 5, increment: .min))
            instructions.append(.addInteger(object: object, field: 5, increment: .max))
            instructions.append(.arrayMove(object: object, field: 3, from: 0, to: 7, priorSize: 8))
            instructions.append(.arrayErase(object: object, field: 3, index: 0, priorSize: 8))
            instructions.append(.clear(object: object, field: 3))
            instructions.append(.eraseObject(ObjectRef(table: 2, key: key)))
            instructions.append(.eraseObject(object))
        }
        return Changeset(version: 1, lastIntegratedRemoteVersion: 2, originTimestamp: 3,
                         originFileIdent: 4, instructions: instructions)
    }

    static func randomChangeset(_ random: RandomStream) -> Changeset {
        let count = Int(random.uniformInt(below: 24))
        var instructions = ContiguousArray<Instruction>()
        for _ in 0..<count { instructions.append(randomInstruction(random)) }
        return Changeset(version: random.uniformInt(below: 1 << 20),
                         lastIntegratedRemoteVersion: random.uniformInt(below: 300),
                         originTimestamp: random.uniformInt(below: 0xFFFF_FFFF),
                         originFileIdent: random.uniformInt(below: 100),
                         instructions: instructions)
    }

    static func small(_ random: RandomStream) -> UInt32 {
        random.chance(1, outOf: 10) ? UInt32(random.uniformInt(below: 0xFFFF_FFFF)) :
            UInt32(random.uniformInt(below: 8))
    }

    static func randomKey(_ random: RandomStream) -> PrimaryKey {
        switch random.uniformInt(below: 6) {
        case 0: .null
        case 1: .string(["a", "bb", "ζ", "long key with spaces"][Int(random.uniformInt(below: 4))])
        case 2: .objectId(ObjectID(high: UInt32(random.uniformInt(below: 0xFFFF_FFFF)),
                                   low: random.uniformInt(below: 0xFFFF_FFFF)))
        case 3: .uuid(UUIDValue(high: random.uniformInt(below: 0xFFFF_FFFF), low: 5))
        default: .int(Int64(random.uniformInt(below: 20)) - 10)
        }
    }

    static func randomValue(_ random: RandomStream) -> Value {
        switch random.uniformInt(below: 9) {
        case 0: .null
        case 1: .int(Int64(bitPattern: random.uniformInt(below: 0xFFFF_FFFF) << 31))
        case 2: .bool(random.chance(1, outOf: 2))
        case 3: .string(["", "x", "yy", "ζ", "😀"][Int(random.uniformInt(below: 5))])
        case 4: .double(random.uniform() * 1e6 - 5e5)
        case 5: .timestamp(Int64(random.uniformInt(below: 0xFFFF_FFFF)) - (1 << 31))
        case 6: .objectId(ObjectID(high: 9, low: random.uniformInt(below: 0xFFFF_FFFF)))
        case 7: .uuid(UUIDValue(high: random.uniformInt(below: 0xFFFF_FFFF), low: .max))
        default: .link(ObjectRef(table: small(random), key: randomKey(random)))
        }
    }

    static func randomInstruction(_ random: RandomStream) -> Instruction {
        let object = ObjectRef(table: UInt32(random.uniformInt(below: 3)), key: randomKey(random))
        let field = small(random)
        switch random.uniformInt(below: 15) {
        case 0:
            return .addTable(table: small(random), primaryKeyField: field,
                             primaryKeyType: PrimaryKeyType.allCases[Int(random.uniformInt(below: 4))],
                             primaryKeyNullable: random.chance(1, outOf: 2))
        case 1:
            return .addColumn(table: small(random), field: field,
                              type: ValueType.allCases[Int(random.uniformInt(below: 9))],
                              nullable: random.chance(1, outOf: 2),
                              collection: CollectionKind.allCases[Int(random.uniformInt(below: 3))],
                              linkTarget: random.chance(1, outOf: 2) ? small(random) : nil)
        case 2: return .eraseColumn(table: small(random), field: field)
        case 3: return .createObject(object)
        case 4: return .eraseObject(object)
        case 5:
            return .update(object: object, field: field, value: randomValue(random),
                           isDefault: random.chance(1, outOf: 4))
        case 6:
            return .arrayUpdate(object: object, field: field, index: small(random),
                                value: randomValue(random), priorSize: small(random))
        case 7:
            return .addInteger(object: object, field: field,
                               increment: Int64(random.uniformInt(below: 0xFFFF_FFFF)) - (1 << 31))
        case 8:
            return .arrayInsert(object: object, field: field, index: small(random),
                                value: randomValue(random), priorSize: small(random))
        case 9:
            return .arrayMove(object: object, field: field, from: small(random), to: small(random),
                              priorSize: small(random))
        case 10:
            return .arrayErase(object: object, field: field, index: small(random),
                               priorSize: small(random))
        case 11: return .clear(object: object, field: field)
        case 12: return .setInsert(object: object, field: field, value: randomValue(random))
        case 13: return .setErase(object: object, field: field, value: randomValue(random))
        default:
            // The same object again, to exercise the "same object" reference mode.
            return .update(object: ObjectRef(table: 1, key: .int(3)), field: 1, value: .int(-1),
                           isDefault: false)
        }
    }
}
