import MergeCore
import Randomness
import Testing

/// Round trips of the changeset codec: every instruction, every payload type, random changesets.
@Suite("Codec round trips")
struct CodecRoundTripTests {
    @Test("every instruction and payload type survives encode then decode")
    func everyInstructionAndPayload() throws {
        let changeset = CodecSamples.everyInstruction()
        let bytes = changeset.encoded()
        let decoded = try Changeset(decoding: bytes)
        #expect(decoded == changeset)
        // Every payload type appears in at least one instruction.
        #expect(CodecSamples.everyValue.count == 10)
    }

    @Test("each instruction alone round-trips", arguments: CodecSamples.everyInstruction().instructions)
    func singleInstruction(_ instruction: Instruction) throws {
        let changeset = Changeset(version: 7, lastIntegratedRemoteVersion: 3,
                                  originTimestamp: 1_700, originFileIdent: 2,
                                  instructions: [instruction])
        #expect(try Changeset(decoding: changeset.encoded()) == changeset)
    }

    @Test("empty changeset and extreme header values")
    func headers() throws {
        for value in [UInt64(0), 1, 127, 128, 16_383, 16_384, UInt64.max - 1, UInt64.max] {
            let changeset = Changeset(version: value, lastIntegratedRemoteVersion: value,
                                      originTimestamp: value, originFileIdent: value)
            #expect(try Changeset(decoding: changeset.encoded()) == changeset)
        }
    }

    @Test("2,000 random changesets round-trip")
    func randomChangesets() throws {
        let random = RandomStream(seed: 11, id: StreamID(domain: 0xC0DEC, index: 1))
        for _ in 0..<2_000 {
            let changeset = CodecSamples.randomChangeset(random)
            let bytes = changeset.encoded()
            #expect(try Changeset(decoding: bytes) == changeset)
            #expect(try Changeset(decoding: bytes[...]) == changeset)  // non-Array collection
        }
    }

    @Test("batches round-trip")
    func batches() throws {
        let random = RandomStream(seed: 12, id: StreamID(domain: 0xC0DEC, index: 2))
        for count in [0, 1, 2, 17] {
            let changesets = ContiguousArray((0..<count).map { _ in CodecSamples.randomChangeset(random) })
            let bytes = Changeset.encodeBatch(changesets)
            #expect(try Changeset.decodeBatch(bytes) == changesets)
        }
    }

    @Test("a map update with an integer key costs at most 16 bytes")
    func mapUpdateSize() throws {
        let random = RandomStream(seed: 13, id: StreamID(domain: 0xC0DEC, index: 3))
        var instructions = ContiguousArray<Instruction>()
        for _ in 0..<100 {
            let key = Int64(random.uniformInt(below: 10_000))
            instructions.append(.update(
                object: ObjectRef(table: 1, key: .int(key)),
                field: UInt32(1 + random.uniformInt(below: 4)),
                value: .int(Int64(random.uniformInt(below: 1 << 31))), isDefault: false))
        }
        let changeset = Changeset(version: 100_000, lastIntegratedRemoteVersion: 50_000,
                                  originTimestamp: 1_700_000_000_000, originFileIdent: 77,
                                  instructions: instructions)
        let bytes = changeset.encoded()
        #expect(bytes.count <= 16 * instructions.count)
        // The worst case of one instruction: a 5-byte key delta and a 5-byte value.
        #expect(bytes.count - 20 <= 11 * instructions.count)
    }

    @Test("strings are interned once per changeset")
    func stringInterning() throws {
        let long = String(repeating: "é", count: 40)
        let object = ObjectRef(table: 1, key: .string(long))
        let instructions: ContiguousArray<Instruction> = [
            .createObject(object),
            .update(object: object, field: 1, value: .string(long), isDefault: false),
            .update(object: object, field: 2, value: .string(long), isDefault: false),
        ]
        let changeset = Changeset(instructions: instructions)
        let bytes = changeset.encoded()
        #expect(bytes.count < 80 + 20)  // one 80-byte literal, the rest are references
        #expect(try Changeset(decoding: bytes) == changeset)
    }
}

/// Hand-crafted malformed inputs: each must throw its own typed error.
@Suite("Codec errors")
struct CodecErrorTests {
    static let header: [UInt8] = [1, 0, 0, 0, 0]

    func decodeError(_ bytes: [UInt8]) -> DecodeError? {
        do {
            _ = try Changeset(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("empty input is truncated")
    func empty() {
        #expect(decodeError([])?.code == 1)
    }

    @Test("unknown format version")
    func formatVersion() {
        #expect(decodeError([2, 0, 0, 0, 0, 0]) == .unsupportedFormatVersion(version: 2, offset: 0))
    }

    @Test("varint longer than 64 bits")
    func varintOverflow() {
        let overlong: [UInt8] = [1] + Array(repeating: 0xFF, count: 9) + [0x02, 0, 0, 0, 0]
        #expect(decodeError(overlong) == .varintOverflow(offset: 1))
        let eleven: [UInt8] = [1] + Array(repeating: 0x80, count: 10) + [0]
        #expect(decodeError(eleven) == .varintOverflow(offset: 1))
        let max: [UInt8] = [1] + Array(repeating: 0xFF, count: 9) + [0x01, 0, 0, 0, 0]
        #expect(decodeError(max) == nil)
    }

    @Test("instruction count above the bytes left or the limit")
    func countLimits() {
        #expect(decodeError(Self.header + [5, 2]) ==
            .instructionCountExceeded(count: 5, limit: 1, offset: 5))
        var huge = Self.header
        huge += [0x80, 0x80, 0x80, 0x80, 0x10]  // 2^32 instructions
        huge += Array(repeating: 0x12, count: 64)
        #expect(decodeError(huge)?.code == 5)
    }

    @Test("unknown instruction codes 1, 14 and 15")
    func unknownInstruction() {
        for code: UInt8 in [1, 14, 15] {
            #expect(decodeError(Self.header + [1, code, 0, 0]) ==
                .unknownInstructionCode(code: code, offset: 6))
        }
    }

    @Test("unknown payload types")
    func unknownPayload() {
        for type: UInt8 in [4, 6, 8, 12, 0xFF] {
            // CreateObject, full reference, table 1, key of `type`.
            #expect(decodeError(Self.header + [1, 0x02, 1, type]) ==
                .unknownPayloadType(code: type, offset: 8))
        }
        // Bool is a value type but not a key type.
        #expect(decodeError(Self.header + [1, 0x02, 1, 2, 1])?.code == 4)
    }

    @Test("trailing bytes after the last instruction")
    func trailing() {
        #expect(decodeError(Self.header + [0, 0]) == .trailingBytes(offset: 6))
    }

    @Test("invalid UTF-8 in a string literal")
    func invalidUTF8() {
        // CreateObject(table 1, string key literal of 2 bytes: 0xC3 0x28).
        #expect(decodeError(Self.header + [1, 0x02, 1, 3, 0, 2, 0xC3, 0x28]) ==
            .invalidUTF8(offset: 11))
    }

    @Test("string references, lengths and previous objects")
    func references() {
        #expect(decodeError(Self.header + [1, 0x02, 1, 3, 1]) ==
            .invalidStringReference(reference: 1, offset: 9))
        #expect(decodeError(Self.header + [1, 0x02, 1, 3, 0, 0x80, 0x80, 0x80, 0x01] + [0, 0])?
            .code == 14)
        #expect(decodeError(Self.header + [1, 0x02, 1, 3, 0, 5, 0x41])?.code == 1)
        #expect(decodeError(Self.header + [1, 0x12]) == .missingPreviousObject(offset: 6))
    }

    @Test("reserved flags, enumeration bytes and integer ranges")
    func flagsAndRanges() {
        #expect(decodeError(Self.header + [1, 0x42, 1, 1, 0]) ==
            .reservedFlagsSet(tag: 0x42, offset: 6))
        #expect(decodeError(Self.header + [1, 0xC4, 1, 1, 0, 1, 1, 0]) ==
            .reservedFlagsSet(tag: 0xC4, offset: 6))
        #expect(decodeError(Self.header + [1, 0x00, 1, 0, 2]) == .invalidEnumValue(value: 2, offset: 9))
        #expect(decodeError(Self.header + [1, 0x02, 0x80, 0x80, 0x80, 0x80, 0x10, 0]) ==
            .integerOutOfRange(value: 1 << 32, offset: 7))
        // Update of a bool field with a bool byte of 2.
        #expect(decodeError(Self.header + [1, 0x04, 1, 1, 0, 1, 2, 2]) ==
            .invalidEnumValue(value: 2, offset: 12))
    }

    @Test("batch errors")
    func batchErrors() {
        func batchError(_ bytes: [UInt8]) -> DecodeError? {
            do {
                _ = try Changeset.decodeBatch(bytes)
                return nil
            } catch {
                return error
            }
        }
        #expect(batchError([1, 3, 0]) == .changesetCountExceeded(count: 3, limit: 1, offset: 1))
        #expect(batchError([1, 1, 9, 1, 0, 0, 0, 0, 0])?.code == 1)
        #expect(batchError([1, 1, 7, 1, 0, 0, 0, 0, 0, 0]) == .lengthMismatch(offset: 9))
        #expect(batchError([1, 0, 0]) == .trailingBytes(offset: 2))
        #expect(batchError([1, 0]) == nil)
    }

    @Test("error codes are stable and distinct")
    func stableCodes() {
        let errors: [DecodeError] = [
            .truncated(offset: 0), .varintOverflow(offset: 0),
            .unknownInstructionCode(code: 1, offset: 0), .unknownPayloadType(code: 4, offset: 0),
            .instructionCountExceeded(count: 1, limit: 0, offset: 0), .trailingBytes(offset: 0),
            .invalidUTF8(offset: 0), .unsupportedFormatVersion(version: 0, offset: 0),
            .reservedFlagsSet(tag: 0, offset: 0), .integerOutOfRange(value: 0, offset: 0),
            .invalidEnumValue(value: 0, offset: 0), .invalidStringReference(reference: 0, offset: 0),
            .missingPreviousObject(offset: 0), .stringTooLong(length: 0, limit: 0, offset: 0),
            .stringCountExceeded(limit: 0, offset: 0),
            .changesetCountExceeded(count: 0, limit: 0, offset: 0), .lengthMismatch(offset: 0),
        ]
        #expect(errors.map(\.code) == Array(1...17))
        #expect(errors.allSatisfy { $0.description.contains("decode error \($0.code)") })
    }
}
