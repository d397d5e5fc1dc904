//! The application workload: which write a client makes next. All draws come from the client's
//! own workload stream.

import MergeCore
import Randomness

/// The fixed schema every replica starts with: one table of items keyed by an integer.
public enum WorkloadSchema {
    public static let itemTable: TableID = 1
    public static let primaryKeyField: FieldID = 0
    public static let numberField: FieldID = 1
    public static let rankField: FieldID = 2
    public static let titleField: FieldID = 3
    public static let counterField: FieldID = 4
    /// A list of strings (`workload.listPercent` edits it).
    public static let tagsField: FieldID = 5

    public static let titles: [String] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
    ]

    /// The schema as a changeset; server and clients apply it to an empty replica at start.
    public static func changeset() -> Changeset {
        Changeset(
            version: 0,
            instructions: [
                .addTable(
                    table: itemTable, primaryKeyField: primaryKeyField, primaryKeyType: .int,
                    primaryKeyNullable: false),
                .addColumn(
                    table: itemTable, field: numberField, type: .int, nullable: true,
                    collection: .single, linkTarget: nil),
                .addColumn(
                    table: itemTable, field: rankField, type: .int, nullable: true,
                    collection: .single, linkTarget: nil),
                .addColumn(
                    table: itemTable, field: titleField, type: .string, nullable: true,
                    collection: .single, linkTarget: nil),
                .addColumn(
                    table: itemTable, field: counterField, type: .int, nullable: true,
                    collection: .single, linkTarget: nil),
                .addColumn(
                    table: itemTable, field: tagsField, type: .string, nullable: false,
                    collection: .list, linkTarget: nil),
            ])
    }

    public static func initialReplica() -> Replica {
        var replica = Replica()
        do {
            try replica.apply(changeset())
        } catch {
            preconditionFailure("the workload schema does not apply to an empty replica: \(error)")
        }
        return replica
    }
}

/// Picks keys and builds write transactions for one scenario.
public struct WorkloadGenerator: Sendable {
    let spec: WorkloadSpec
    let zipf: DiscreteDistribution?

    public init(spec: WorkloadSpec) {
        self.spec = spec
        zipf =
            spec.keyDistribution == .zipf
            ? DiscreteDistribution.zipf(
                count: Int(spec.objectsPerPartition), exponent: spec.zipfExponent)
            : nil
    }

    /// The next write of a client whose replica is `replica`.
    /// - Complexity: O(1) draws and one lookup in the replica.
    public func nextWrite(replica: Replica, stream: RandomStream) -> ContiguousArray<Instruction> {
        let key: Int64
        if let zipf {
            key = Int64(stream.discrete(zipf))
        } else {
            key = Int64(stream.uniformInt(below: UInt64(spec.objectsPerPartition)))
        }
        let object = ObjectRef(table: WorkloadSchema.itemTable, key: .int(key))
        if !replica.contains(object) {
            return [
                .createObject(object),
                .update(
                    object: object, field: WorkloadSchema.numberField,
                    value: .int(Int64(stream.uniformInt(below: 1_000_000))), isDefault: false),
                .update(
                    object: object, field: WorkloadSchema.titleField,
                    value: .string(title(stream)), isDefault: false),
                .update(
                    object: object, field: WorkloadSchema.counterField, value: .int(0),
                    isDefault: false),
            ]
        }
        let roll = UInt32(stream.uniformInt(below: 100))
        if roll < spec.erasePercent {
            return [.eraseObject(object)]
        }
        if roll < spec.erasePercent + spec.addIntegerPercent {
            return [.addInteger(object: object, field: WorkloadSchema.counterField, increment: 1)]
        }
        if roll < spec.erasePercent + spec.addIntegerPercent + spec.listPercent {
            return [listEdit(object, replica: replica, stream: stream)]
        }
        var instructions: ContiguousArray<Instruction> = [
            .update(
                object: object, field: WorkloadSchema.numberField,
                value: .int(Int64(stream.uniformInt(below: 1_000_000))), isDefault: false)
        ]
        if stream.chance(1, outOf: 2) {
            instructions.append(
                .update(
                    object: object, field: WorkloadSchema.titleField,
                    value: .string(title(stream)), isDefault: false))
        }
        return instructions
    }

    /// One edit of the object's `tags` list: an insert at a uniform position (60 %, or 30 %
    /// once the list holds 10 elements, so lists stay short), a move (15 %), a set (10 %) or an
    /// erase (the rest) of a uniform element.
    /// - Complexity: O(1) apart from the draws.
    private func listEdit(_ object: ObjectRef, replica: Replica, stream: RandomStream)
        -> Instruction
    {
        let field = WorkloadSchema.tagsField
        let size = UInt32(replica.listCount(of: object, field: field))
        let roll = UInt32(stream.uniformInt(below: 100))
        let insertShare: UInt32 = size < 10 ? 60 : 30
        if size == 0 || roll < insertShare || (size < 2 && roll < insertShare + 15) {
            return .arrayInsert(
                object: object, field: field,
                index: UInt32(stream.uniformInt(below: UInt64(size) + 1)),
                value: .string(title(stream)), priorSize: size)
        }
        let index = UInt32(stream.uniformInt(below: UInt64(size)))
        if roll < insertShare + 15 {
            var to = UInt32(stream.uniformInt(below: UInt64(size)))
            if to == index { to = (index + 1) % size }
            return .arrayMove(object: object, field: field, from: index, to: to, priorSize: size)
        }
        if roll < insertShare + 25 {
            return .arrayUpdate(
                object: object, field: field, index: index, value: .string(title(stream)),
                priorSize: size)
        }
        return .arrayErase(object: object, field: field, index: index, priorSize: size)
    }

    private func title(_ stream: RandomStream) -> String {
        WorkloadSchema.titles[Int(stream.uniformInt(below: UInt64(WorkloadSchema.titles.count)))]
    }
}
