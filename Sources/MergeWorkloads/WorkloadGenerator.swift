//! Deterministic generators of the five workloads: the common base state, and changesets that
//! a client makes against its own view of that state.

import MergeCore
import Randomness

/// What one editing peer believes the state to be, so every instruction it makes is valid on
/// its own replica (list indices within the list, `priorSize` exact, no edits of objects it
/// erased).
struct EditorView {
    /// Churn: keys of the objects this peer sees alive (a pool with swap-remove).
    var alive: [Int64] = []
    /// Churn: the next key this peer gives a created object (disjoint ranges per peer).
    var nextCreatedKey: Int64 = 0
    /// List: the size of each list.
    var listSizes: [UInt32] = []
    /// Text-like: the document's size and the typing cursor (an insertion position).
    var documentSize: UInt32 = 0
    var cursor: UInt32 = 0
}

/// Makes the base state and the concurrent changesets of one workload.
struct WorkloadGenerator {
    let parameters: WorkloadParameters
    /// Zipf(0.99) over object ranks (map-zipf only); immutable and shareable.
    let zipf: DiscreteDistribution?

    init(_ parameters: WorkloadParameters) {
        self.parameters = parameters
        self.zipf = parameters.kind == .mapZipf
            ? DiscreteDistribution.zipf(count: parameters.objects, exponent: 0.99) : nil
    }

    func stream(author: Int) -> RandomStream {
        RandomStream(seed: parameters.seed,
                     id: StreamID(domain: parameters.kind.streamDomain, index: UInt64(author)))
    }

    /// The base state every peer starts from: the schema and the workload's initial objects.
    /// Server version 1; applied to replicas before the merge and never merged itself.
    func baseChangeset() -> Changeset {
        var instructions = WorkloadSchema.schemaInstructions()
        switch parameters.kind {
        case .mapUniform, .mapZipf, .churn:
            instructions.reserveCapacity(instructions.count + parameters.objects)
            for key in 0..<parameters.objects {
                instructions.append(.createObject(objectRef(Int64(key))))
            }
        case .list:
            for list in 0..<WorkloadSchema.listCount {
                let object = ObjectRef(table: WorkloadSchema.listTable, key: .int(Int64(list)))
                instructions.append(.createObject(object))
                for index in 0..<WorkloadSchema.listLengthInitial {
                    instructions.append(.arrayInsert(
                        object: object, field: WorkloadSchema.listField, index: UInt32(index),
                        value: .int(Int64(index)), priorSize: UInt32(index)))
                }
            }
        case .textLike:
            let object = documentRef
            instructions.append(.createObject(object))
            for index in 0..<WorkloadSchema.documentLengthInitial {
                instructions.append(.arrayInsert(
                    object: object, field: WorkloadSchema.listField, index: UInt32(index),
                    value: .int(97 + Int64(index % 26)), priorSize: UInt32(index)))
            }
        }
        return Changeset(version: 1, lastIntegratedRemoteVersion: 0, originTimestamp: 1,
                         originFileIdent: 1, instructions: instructions)
    }

    /// The view of the base state, for the peer `author` (which decides created-key ranges).
    func initialView(author: Int, random: RandomStream) -> EditorView {
        var view = EditorView()
        switch parameters.kind {
        case .mapUniform, .mapZipf:
            break
        case .churn:
            view.alive = (0..<parameters.objects).map { Int64($0) }
            view.nextCreatedKey = Int64(parameters.objects) + (Int64(author) + 1) << 32
        case .list:
            view.listSizes = Array(repeating: UInt32(WorkloadSchema.listLengthInitial),
                                   count: WorkloadSchema.listCount)
        case .textLike:
            view.documentSize = UInt32(WorkloadSchema.documentLengthInitial)
            view.cursor = UInt32(random.uniformInt(below: UInt64(view.documentSize) + 1))
        }
        return view
    }

    /// Appends `count` instructions made on `view` to `instructions`, updating the view.
    func makeInstructions(count: Int, view: inout EditorView, random: RandomStream,
                          into instructions: inout ContiguousArray<Instruction>)
    {
        instructions.reserveCapacity(instructions.count + count)
        for _ in 0..<count {
            switch parameters.kind {
            case .mapUniform, .mapZipf: instructions.append(makeMapInstruction(random))
            case .churn: instructions.append(makeChurnInstruction(&view, random))
            case .list: instructions.append(makeListInstruction(&view, random))
            case .textLike: instructions.append(makeTextInstruction(&view, random))
            }
        }
    }

    /// The originating timestamp of a peer's changeset number `sequence`: changesets are
    /// about 1 s apart, with up to 1 s of per-peer jitter, so concurrent peers interleave.
    func timestamp(sequence: Int, random: RandomStream) -> UInt64 {
        1_000_000 + UInt64(sequence) * 1_000 + random.uniformInt(below: 1_000)
    }

    // MARK: Instruction makers

    private var documentRef: ObjectRef {
        ObjectRef(table: WorkloadSchema.documentTable, key: .int(0))
    }

    private func objectRef(_ key: Int64) -> ObjectRef {
        ObjectRef(table: WorkloadSchema.objectTable, key: .int(key))
    }

    private func randomField(_ random: RandomStream) -> FieldID {
        1 + FieldID(random.uniformInt(below: UInt64(WorkloadSchema.objectFields)))
    }

    private func randomValue(_ random: RandomStream) -> Value {
        .int(Int64(random.uniformInt(below: 1 << 20)))
    }

    private func makeMapInstruction(_ random: RandomStream) -> Instruction {
        let key: Int64
        if let zipf {
            key = Int64(random.discrete(zipf))
        } else {
            key = Int64(random.uniformInt(below: UInt64(parameters.objects)))
        }
        return .update(object: objectRef(key), field: randomField(random),
                       value: randomValue(random), isDefault: false)
    }

    private func makeChurnInstruction(_ view: inout EditorView, _ random: RandomStream) -> Instruction {
        let roll = random.uniformInt(below: 100)
        if roll < 15 || view.alive.isEmpty {
            let key = view.nextCreatedKey
            view.nextCreatedKey += 1
            view.alive.append(key)
            return .createObject(objectRef(key))
        }
        let index = Int(random.uniformInt(below: UInt64(view.alive.count)))
        let key = view.alive[index]
        if roll < 25 {
            view.alive.swapAt(index, view.alive.count - 1)
            view.alive.removeLast()
            return .eraseObject(objectRef(key))
        }
        return .update(object: objectRef(key), field: randomField(random),
                       value: randomValue(random), isDefault: false)
    }

    private func makeListInstruction(_ view: inout EditorView, _ random: RandomStream) -> Instruction {
        let list = Int(random.uniformInt(below: UInt64(WorkloadSchema.listCount)))
        let object = ObjectRef(table: WorkloadSchema.listTable, key: .int(Int64(list)))
        let size = view.listSizes[list]
        if size == 0 || random.chance(70, outOf: 100) {
            let index = UInt32(random.uniformInt(below: UInt64(size) + 1))
            view.listSizes[list] = size + 1
            return .arrayInsert(object: object, field: WorkloadSchema.listField, index: index,
                                value: randomValue(random), priorSize: size)
        }
        let index = UInt32(random.uniformInt(below: UInt64(size)))
        view.listSizes[list] = size - 1
        return .arrayErase(object: object, field: WorkloadSchema.listField, index: index,
                           priorSize: size)
    }

    private func makeTextInstruction(_ view: inout EditorView, _ random: RandomStream) -> Instruction {
        let size = view.documentSize
        if random.chance(1, outOf: 50) {
            view.cursor = UInt32(random.uniformInt(below: UInt64(size) + 1))
        }
        precondition(view.cursor <= size, "cursor beyond the document")
        if size == 0 || random.chance(70, outOf: 100) {
            let character = 97 + Int64(random.uniformInt(below: 26))
            let index = view.cursor
            view.cursor += 1
            view.documentSize = size + 1
            return .arrayInsert(object: documentRef, field: WorkloadSchema.listField, index: index,
                                value: .int(character), priorSize: size)
        }
        // Backspace; at the start of the document, delete forward instead.
        let index = view.cursor > 0 ? view.cursor - 1 : 0
        if view.cursor > 0 { view.cursor -= 1 }
        view.documentSize = size - 1
        return .arrayErase(object: documentRef, field: WorkloadSchema.listField, index: index,
                           priorSize: size)
    }
}
