//! `Replica.snapshotChangesets`: the changesets a fresh copy carries, and `varintByteCount`.

import Randomness
import Testing

@testable import MergeCore

@Suite("Snapshot")
struct SnapshotTests {
    /// A replica after `edits` random edits of every kind (lists, sets, links to erased
    /// objects, counters, schema changes), from `seed`.
    private func randomReplica(seed: UInt64, edits: Int) throws -> Replica {
        var replica = Replica()
        try replica.apply(Changeset(instructions: TestSchema.instructions))
        let random = RandomStream(seed: seed, id: StreamID(domain: 0x534E_4150))
        let mix = EditMix(keySpace: 12, schemaChanges: seed % 3 == 0)
        for step in 0..<edits {
            _ = try randomEdit(&replica, random, mix: mix, tag: Int64(step % 7))
        }
        return replica
    }

    @Test("applied to an empty replica, the snapshot rebuilds the replica (300 random states)")
    func snapshotRebuildsTheReplica() throws {
        var listElements = 0
        var setElements = 0
        for seed in UInt64(0)..<300 {
            let replica = try randomReplica(seed: seed, edits: Int(seed % 120))
            var rebuilt = Replica()
            for changeset in replica.snapshotChangesets(version: 9) {
                #expect(changeset.version == 9)
                try rebuilt.apply(changeset)
            }
            #expect(rebuilt == replica, "seed \(seed)")
            #expect(
                replica.snapshotEncodedByteCount(version: 9)
                    == replica.snapshotChangesets(version: 9).reduce(0) { $0 + $1.encodedByteCount },
                "seed \(seed)")
            #expect(rebuilt.contentDigest() == replica.contentDigest(), "seed \(seed)")
            for object in replica.objects(in: TestSchema.table) {
                listElements += replica.listCount(of: object, field: TestSchema.list)
                setElements += replica.setElements(of: object, field: TestSchema.set)?.count ?? 0
            }
        }
        // The states held lists and sets, so their instructions were exercised.
        #expect(listElements > 500)
        #expect(setElements > 100)
    }

    @Test("equal replicas give byte-identical snapshots, whatever order built them")
    func snapshotDependsOnContentOnly() throws {
        var forward = Replica()
        var backward = Replica()
        try forward.apply(Changeset(instructions: TestSchema.instructions))
        try backward.apply(Changeset(instructions: TestSchema.instructions))
        let keys = Array(Int64(0)..<50)
        for key in keys {
            try forward.apply(.createObject(TestSchema.object(key)))
            try forward.apply(
                .update(
                    object: TestSchema.object(key), field: TestSchema.plainInt,
                    value: .int(key * 3), isDefault: false))
        }
        for key in keys.reversed() {
            try backward.apply(.createObject(TestSchema.object(key)))
            try backward.apply(
                .update(
                    object: TestSchema.object(key), field: TestSchema.plainInt,
                    value: .int(key * 3), isDefault: false))
        }
        // Erase and recreate some objects, so the object tables' layouts differ.
        for key in stride(from: Int64(0), to: 50, by: 7) {
            try backward.apply(.eraseObject(TestSchema.object(key)))
            try backward.apply(.createObject(TestSchema.object(key)))
            try backward.apply(
                .update(
                    object: TestSchema.object(key), field: TestSchema.plainInt,
                    value: .int(key * 3), isDefault: false))
        }
        #expect(forward == backward)
        let a = forward.snapshotChangesets().map { $0.encoded() }
        let b = backward.snapshotChangesets().map { $0.encoded() }
        #expect(a == b)
        #expect(a.count == 1)
    }

    @Test(
        "a snapshot split into changesets of a few instructions rebuilds the replica and counts its bytes"
    )
    func splitSnapshots() throws {
        for seed in UInt64(0)..<40 {
            let replica = try randomReplica(seed: seed, edits: 60)
            for limit in [1, 2, 7, 50] {
                let changesets = replica.snapshotChangesets(
                    version: 3, originTimestamp: 4, originFileIdent: 5, limit: limit)
                #expect(changesets.dropLast().allSatisfy { $0.instructions.count == limit })
                #expect(
                    changesets.reduce(0) { $0 + $1.instructions.count }
                        == replica.snapshotInstructionCount())
                var rebuilt = Replica()
                for changeset in changesets { try rebuilt.apply(changeset) }
                #expect(rebuilt == replica, "seed \(seed), limit \(limit)")
                #expect(
                    replica.snapshotEncodedByteCount(
                        version: 3, originTimestamp: 4, originFileIdent: 5, limit: limit)
                        == changesets.reduce(0) { $0 + $1.encoded().count },
                    "seed \(seed), limit \(limit)")
            }
        }
    }

    @Test("an empty replica's snapshot is one empty changeset")
    func emptySnapshot() {
        let snapshot = Replica().snapshotChangesets()
        #expect(snapshot.count == 1)
        #expect(snapshot[0].instructions.isEmpty)
        #expect(Replica().snapshotEncodedByteCount() == snapshot[0].encoded().count)
    }

    @Test("varintByteCount is the length the codec writes (every power-of-two boundary)")
    func varintLengths() {
        var values: [UInt64] = [0, 1, 127, 128, .max]
        for bit in 0..<64 {
            let power = UInt64(1) << UInt64(bit)
            values += [power - 1, power, power + 1]
        }
        for value in values {
            let changeset = Changeset(lastIntegratedRemoteVersion: value)
            let base = Changeset(lastIntegratedRemoteVersion: 0)
            // The header's other fields are equal, so the lengths differ by the varint's.
            #expect(
                changeset.encoded().count - base.encoded().count
                    == varintByteCount(value) - varintByteCount(0), "value \(value)")
        }
        #expect(varintByteCount(0) == 1)
        #expect(varintByteCount(127) == 1)
        #expect(varintByteCount(128) == 2)
        #expect(varintByteCount(.max) == 10)
    }
}

@Suite("Encoded byte count")
struct EncodedByteCountTests {
    @Test(
        "encodedByteCount is the length of encoded(): every instruction and value, and 500 random changesets"
    )
    func countMatchesTheEncoding() {
        let every = CodecSamples.everyInstruction()
        #expect(every.encodedByteCount == every.encoded().count)
        let random = RandomStream(seed: 11, id: StreamID(domain: 0x4243_4E54))
        for index in 0..<500 {
            let changeset = CodecSamples.randomChangeset(random)
            #expect(changeset.encodedByteCount == changeset.encoded().count, "changeset \(index)")
        }
    }
}
