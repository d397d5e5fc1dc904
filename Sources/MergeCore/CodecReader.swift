//! The decoder of the changeset codec (format in `Codec.swift`).
//!
//! Every read is bounds-checked against `end`; every loop is bounded by a count that was first
//! checked against the bytes left; so malformed input throws and never traps or hangs.

/// A bounds-checked cursor over a byte buffer, with the per-changeset decoding state.
struct ByteReader {
    private let buffer: UnsafeBufferPointer<UInt8>
    var position: Int
    private let end: Int
    private var strings: ContiguousArray<String> = []
    private var previousObject: ObjectRef?
    private var previousIntKey: Int64 = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>, position: Int = 0, end: Int? = nil) {
        self.buffer = buffer
        self.position = position
        self.end = end ?? buffer.count
        precondition(self.end <= buffer.count, "reader end beyond its buffer")
        precondition(position <= self.end, "reader start beyond its end")
    }

    var isAtEnd: Bool { position == end }
    var remaining: Int { end - position }

    // MARK: Primitives

    @inline(__always)
    mutating func readByte() throws(DecodeError) -> UInt8 {
        guard position < end else { throw .truncated(offset: position) }
        let byte = buffer[position]
        position += 1
        return byte
    }

    /// An unsigned LEB128 varint of at most 10 bytes whose value fits in 64 bits.
    @inline(__always)
    mutating func readVarint() throws(DecodeError) -> UInt64 {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw .truncated(offset: start) }
            let byte = buffer[position]
            position += 1
            if shift == 63 && byte > 1 { throw .varintOverflow(offset: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    @inline(__always)
    mutating func readUInt32() throws(DecodeError) -> UInt32 {
        let start = position
        let value = try readVarint()
        guard value <= UInt64(UInt32.max) else {
            throw .integerOutOfRange(value: value, offset: start)
        }
        return UInt32(value)
    }

    @inline(__always)
    mutating func readSigned() throws(DecodeError) -> Int64 {
        zigZagDecode(try readVarint())
    }

    mutating func readFixed(byteCount: Int) throws(DecodeError) -> UInt64 {
        guard remaining >= byteCount else { throw .truncated(offset: position) }
        var value: UInt64 = 0
        for index in 0..<byteCount {
            value |= UInt64(buffer[position + index]) << (UInt64(index) * 8)
        }
        position += byteCount
        return value
    }

    mutating func readFormatVersion() throws(DecodeError) {
        let start = position
        let version = try readByte()
        guard version == CodecLimits.formatVersion else {
            throw .unsupportedFormatVersion(version: version, offset: start)
        }
    }

    // MARK: Changeset

    mutating func readChangeset() throws(DecodeError) -> Changeset {
        strings.removeAll(keepingCapacity: true)
        previousObject = nil
        previousIntKey = 0
        try readFormatVersion()
        var changeset = Changeset()
        changeset.version = try readVarint()
        changeset.lastIntegratedRemoteVersion = try readVarint()
        changeset.originTimestamp = try readVarint()
        changeset.originFileIdent = try readVarint()
        let countOffset = position
        let count = try readVarint()
        // Every instruction takes at least one byte, so the bytes left bound the count.
        let limit = min(CodecLimits.instructionsPerChangesetMax, UInt64(remaining))
        guard count <= limit else {
            throw .instructionCountExceeded(count: count, limit: limit, offset: countOffset)
        }
        changeset.instructions.reserveCapacity(Int(count))
        for _ in 0..<count {
            changeset.instructions.append(try readInstruction())
        }
        return changeset
    }

    // MARK: Instructions

    private mutating func readInstruction() throws(DecodeError) -> Instruction {
        typealias Code = InstructionCode
        let tagOffset = position
        let tag = try readByte()
        let code = tag & 0x0F
        let flagA = tag & Code.flagA != 0
        let flagB = tag & Code.flagB != 0
        let mode = (tag & Code.objectModeMask) >> Code.objectModeShift
        switch code {
        case Code.addTable:
            guard mode == 0, !flagB else { throw .reservedFlagsSet(tag: tag, offset: tagOffset) }
            let table = try readUInt32()
            let field = try readUInt32()
            let typeOffset = position
            let typeByte = try readByte()
            guard let type = PrimaryKeyType(rawValue: typeByte) else {
                throw .invalidEnumValue(value: typeByte, offset: typeOffset)
            }
            return .addTable(table: table, primaryKeyField: field, primaryKeyType: type,
                             primaryKeyNullable: flagA)
        case Code.addColumn:
            guard mode == 0 else { throw .reservedFlagsSet(tag: tag, offset: tagOffset) }
            let table = try readUInt32()
            let field = try readUInt32()
            let typeOffset = position
            let typeByte = try readByte()
            guard let type = ValueType(rawValue: typeByte) else {
                throw .invalidEnumValue(value: typeByte, offset: typeOffset)
            }
            let collectionOffset = position
            let collectionByte = try readByte()
            guard let collection = CollectionKind(rawValue: collectionByte) else {
                throw .invalidEnumValue(value: collectionByte, offset: collectionOffset)
            }
            let linkTarget: TableID? = flagB ? try readUInt32() : nil
            return .addColumn(table: table, field: field, type: type, nullable: flagA,
                              collection: collection, linkTarget: linkTarget)
        case Code.eraseColumn:
            guard mode == 0, !flagA, !flagB else {
                throw .reservedFlagsSet(tag: tag, offset: tagOffset)
            }
            return .eraseColumn(table: try readUInt32(), field: try readUInt32())
        case Code.createObject, Code.eraseObject, Code.addInteger, Code.arrayInsert,
            Code.arrayMove, Code.arrayErase, Code.clear, Code.setInsert, Code.setErase:
            guard !flagA, !flagB else { throw .reservedFlagsSet(tag: tag, offset: tagOffset) }
            let object = try readObject(mode: mode, tagOffset: tagOffset)
            return try readObjectInstruction(code: code, object: object)
        case Code.update:
            guard !(flagA && flagB) else { throw .reservedFlagsSet(tag: tag, offset: tagOffset) }
            let object = try readObject(mode: mode, tagOffset: tagOffset)
            let field = try readUInt32()
            if flagB {
                let index = try readUInt32()
                let value = try readValue()
                return .arrayUpdate(object: object, field: field, index: index, value: value,
                                    priorSize: try readUInt32())
            }
            return .update(object: object, field: field, value: try readValue(), isDefault: flagA)
        default:
            throw .unknownInstructionCode(code: code, offset: tagOffset)
        }
    }

    private mutating func readObjectInstruction(code: UInt8, object: ObjectRef) throws(DecodeError)
        -> Instruction
    {
        typealias Code = InstructionCode
        switch code {
        case Code.createObject:
            return .createObject(object)
        case Code.eraseObject:
            return .eraseObject(object)
        case Code.addInteger:
            let field = try readUInt32()
            return .addInteger(object: object, field: field, increment: try readSigned())
        case Code.arrayInsert:
            let field = try readUInt32()
            let index = try readUInt32()
            let value = try readValue()
            return .arrayInsert(object: object, field: field, index: index, value: value,
                                priorSize: try readUInt32())
        case Code.arrayMove:
            let field = try readUInt32()
            let from = try readUInt32()
            let to = try readUInt32()
            return .arrayMove(object: object, field: field, from: from, to: to,
                              priorSize: try readUInt32())
        case Code.arrayErase:
            let field = try readUInt32()
            let index = try readUInt32()
            return .arrayErase(object: object, field: field, index: index,
                               priorSize: try readUInt32())
        case Code.clear:
            return .clear(object: object, field: try readUInt32())
        case Code.setInsert:
            let field = try readUInt32()
            return .setInsert(object: object, field: field, value: try readValue())
        case Code.setErase:
            let field = try readUInt32()
            return .setErase(object: object, field: field, value: try readValue())
        default:
            preconditionFailure("readObjectInstruction called with a non-object code")
        }
    }

    // MARK: Objects, keys, values

    private mutating func readObject(mode: UInt8, tagOffset: Int) throws(DecodeError) -> ObjectRef {
        let object: ObjectRef
        if mode == ObjectMode.full {
            let table = try readUInt32()
            object = ObjectRef(table: table, key: try readKey())
        } else {
            guard let previous = previousObject else {
                throw .missingPreviousObject(offset: tagOffset)
            }
            switch mode {
            case ObjectMode.same:
                object = previous
            case ObjectMode.sameTableIntDelta:
                let delta = try readSigned()
                object = ObjectRef(table: previous.table, key: .int(previousIntKey &+ delta))
            default:
                object = ObjectRef(table: previous.table, key: try readKey())
            }
        }
        previousObject = object
        if case .int(let key) = object.key { previousIntKey = key }
        return object
    }

    private mutating func readKey() throws(DecodeError) -> PrimaryKey {
        let typeOffset = position
        let type = try readByte()
        switch type {
        case PayloadCode.null: return .null
        case PayloadCode.int: return .int(try readSigned())
        case PayloadCode.string: return .string(try readString())
        case PayloadCode.objectId: return .objectId(try readObjectID())
        case PayloadCode.uuid: return .uuid(try readUUID())
        default: throw .unknownPayloadType(code: type, offset: typeOffset)
        }
    }

    private mutating func readValue() throws(DecodeError) -> Value {
        let typeOffset = position
        let type = try readByte()
        switch type {
        case PayloadCode.null: return .null
        case PayloadCode.int: return .int(try readSigned())
        case PayloadCode.bool:
            let boolOffset = position
            let byte = try readByte()
            guard byte <= 1 else { throw .invalidEnumValue(value: byte, offset: boolOffset) }
            return .bool(byte == 1)
        case PayloadCode.string: return .string(try readString())
        case PayloadCode.timestamp: return .timestamp(try readSigned())
        case PayloadCode.double: return .double(Double(bitPattern: try readFixed(byteCount: 8)))
        case PayloadCode.objectId: return .objectId(try readObjectID())
        case PayloadCode.uuid: return .uuid(try readUUID())
        case PayloadCode.link:
            let table = try readUInt32()
            return .link(ObjectRef(table: table, key: try readKey()))
        default: throw .unknownPayloadType(code: type, offset: typeOffset)
        }
    }

    private mutating func readString() throws(DecodeError) -> String {
        let referenceOffset = position
        let reference = try readVarint()
        if reference != 0 {
            guard reference <= UInt64(strings.count) else {
                throw .invalidStringReference(reference: reference, offset: referenceOffset)
            }
            return strings[Int(reference - 1)]
        }
        guard UInt64(strings.count) < CodecLimits.stringsPerChangesetMax else {
            throw .stringCountExceeded(limit: CodecLimits.stringsPerChangesetMax,
                                       offset: referenceOffset)
        }
        let lengthOffset = position
        let length = try readVarint()
        let limit = min(CodecLimits.stringBytesMax, UInt64(remaining))
        guard length <= limit else {
            if length <= CodecLimits.stringBytesMax { throw .truncated(offset: lengthOffset) }
            throw .stringTooLong(length: length, limit: CodecLimits.stringBytesMax,
                                 offset: lengthOffset)
        }
        let bytes = UnsafeBufferPointer(rebasing: buffer[position..<position + Int(length)])
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidUTF8(offset: position)
        }
        position += Int(length)
        strings.append(string)
        return string
    }

    private mutating func readObjectID() throws(DecodeError) -> ObjectID {
        let high = UInt32(try readFixed(byteCount: 4))
        return ObjectID(high: high, low: try readFixed(byteCount: 8))
    }

    private mutating func readUUID() throws(DecodeError) -> UUIDValue {
        let high = try readFixed(byteCount: 8)
        return UUIDValue(high: high, low: try readFixed(byteCount: 8))
    }
}
