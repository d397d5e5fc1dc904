//! The encoder of the changeset codec (format in `Codec.swift`).

/// Encoder state for one changeset: the string table and the previous object reference.
struct ChangesetWriter {
    /// Interned strings, by their index in the table. Only looked up, never iterated.
    private var stringIndices: [String: UInt64] = [:]
    private var previousObject: ObjectRef?
    private var previousIntKey: Int64 = 0

    init() {}

    mutating func write<Sink: ByteSink>(_ changeset: Changeset, into bytes: inout Sink) {
        writeHeader(
            version: changeset.version,
            lastIntegratedRemoteVersion: changeset.lastIntegratedRemoteVersion,
            originTimestamp: changeset.originTimestamp, originFileIdent: changeset.originFileIdent,
            instructionCount: changeset.instructions.count, into: &bytes)
        for instruction in changeset.instructions {
            write(instruction, into: &bytes)
        }
    }

    /// A changeset's header; `instructionCount` instructions must follow (`write(_:into:)`).
    func writeHeader<Sink: ByteSink>(
        version: UInt64, lastIntegratedRemoteVersion: UInt64, originTimestamp: UInt64,
        originFileIdent: UInt64, instructionCount: Int, into bytes: inout Sink
    ) {
        bytes.append(CodecLimits.formatVersion)
        appendVarint(version, to: &bytes)
        appendVarint(lastIntegratedRemoteVersion, to: &bytes)
        appendVarint(originTimestamp, to: &bytes)
        appendVarint(originFileIdent, to: &bytes)
        precondition(
            UInt64(instructionCount) <= CodecLimits.instructionsPerChangesetMax,
            "changeset has more instructions than the codec allows")
        appendVarint(UInt64(instructionCount), to: &bytes)
    }

    /// One instruction of the changeset whose header was written last.
    mutating func write<Sink: ByteSink>(_ instruction: Instruction, into bytes: inout Sink) {
        typealias Code = InstructionCode
        switch instruction {
        case let .addTable(table, primaryKeyField, primaryKeyType, primaryKeyNullable):
            bytes.append(Code.addTable | (primaryKeyNullable ? Code.flagA : 0))
            appendVarint(UInt64(table), to: &bytes)
            appendVarint(UInt64(primaryKeyField), to: &bytes)
            bytes.append(primaryKeyType.rawValue)
        case let .addColumn(table, field, type, nullable, collection, linkTarget):
            var tag = Code.addColumn
            if nullable { tag |= Code.flagA }
            if linkTarget != nil { tag |= Code.flagB }
            bytes.append(tag)
            appendVarint(UInt64(table), to: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            bytes.append(type.rawValue)
            bytes.append(collection.rawValue)
            if let linkTarget { appendVarint(UInt64(linkTarget), to: &bytes) }
        case let .eraseColumn(table, field):
            bytes.append(Code.eraseColumn)
            appendVarint(UInt64(table), to: &bytes)
            appendVarint(UInt64(field), to: &bytes)
        case let .createObject(object):
            writeObject(Code.createObject, object, into: &bytes)
        case let .eraseObject(object):
            writeObject(Code.eraseObject, object, into: &bytes)
        case let .update(object, field, value, isDefault):
            writeObject(Code.update | (isDefault ? Code.flagA : 0), object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            writeValue(value, into: &bytes)
        case let .arrayUpdate(object, field, index, value, priorSize):
            writeObject(Code.update | Code.flagB, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            appendVarint(UInt64(index), to: &bytes)
            writeValue(value, into: &bytes)
            appendVarint(UInt64(priorSize), to: &bytes)
        case let .addInteger(object, field, increment):
            writeObject(Code.addInteger, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            appendVarint(zigZagEncode(increment), to: &bytes)
        case let .arrayInsert(object, field, index, value, priorSize):
            writeObject(Code.arrayInsert, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            appendVarint(UInt64(index), to: &bytes)
            writeValue(value, into: &bytes)
            appendVarint(UInt64(priorSize), to: &bytes)
        case let .arrayMove(object, field, from, to, priorSize):
            writeObject(Code.arrayMove, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            appendVarint(UInt64(from), to: &bytes)
            appendVarint(UInt64(to), to: &bytes)
            appendVarint(UInt64(priorSize), to: &bytes)
        case let .arrayErase(object, field, index, priorSize):
            writeObject(Code.arrayErase, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            appendVarint(UInt64(index), to: &bytes)
            appendVarint(UInt64(priorSize), to: &bytes)
        case let .clear(object, field):
            writeObject(Code.clear, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
        case let .setInsert(object, field, value):
            writeObject(Code.setInsert, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            writeValue(value, into: &bytes)
        case let .setErase(object, field, value):
            writeObject(Code.setErase, object, into: &bytes)
            appendVarint(UInt64(field), to: &bytes)
            writeValue(value, into: &bytes)
        }
    }

    /// Writes the tag (with the object mode chosen here) and the object reference.
    private mutating func writeObject<Sink: ByteSink>(
        _ tag: UInt8, _ object: ObjectRef, into bytes: inout Sink
    ) {
        precondition(tag & InstructionCode.objectModeMask == 0, "object mode bits already set")
        let shift = InstructionCode.objectModeShift
        defer {
            previousObject = object
            if case .int(let key) = object.key { previousIntKey = key }
        }
        guard let previous = previousObject, previous.table == object.table else {
            bytes.append(tag | ObjectMode.full << shift)
            appendVarint(UInt64(object.table), to: &bytes)
            writeKey(object.key, into: &bytes)
            return
        }
        if previous.key == object.key {
            bytes.append(tag | ObjectMode.same << shift)
        } else if case .int(let key) = object.key {
            bytes.append(tag | ObjectMode.sameTableIntDelta << shift)
            appendVarint(zigZagEncode(key &- previousIntKey), to: &bytes)
        } else {
            bytes.append(tag | ObjectMode.sameTable << shift)
            writeKey(object.key, into: &bytes)
        }
    }

    private mutating func writeKey<Sink: ByteSink>(_ key: PrimaryKey, into bytes: inout Sink) {
        switch key {
        case .null:
            bytes.append(PayloadCode.null)
        case .int(let value):
            bytes.append(PayloadCode.int)
            appendVarint(zigZagEncode(value), to: &bytes)
        case .string(let value):
            bytes.append(PayloadCode.string)
            writeString(value, into: &bytes)
        case .objectId(let value):
            bytes.append(PayloadCode.objectId)
            writeObjectID(value, into: &bytes)
        case .uuid(let value):
            bytes.append(PayloadCode.uuid)
            writeUUID(value, into: &bytes)
        }
    }

    private mutating func writeValue<Sink: ByteSink>(_ value: Value, into bytes: inout Sink) {
        switch value {
        case .null:
            bytes.append(PayloadCode.null)
        case .int(let int):
            bytes.append(PayloadCode.int)
            appendVarint(zigZagEncode(int), to: &bytes)
        case .bool(let bool):
            bytes.append(PayloadCode.bool)
            bytes.append(bool ? 1 : 0)
        case .string(let string):
            bytes.append(PayloadCode.string)
            writeString(string, into: &bytes)
        case .double(let double):
            bytes.append(PayloadCode.double)
            appendFixed(double.bitPattern, byteCount: 8, to: &bytes)
        case .timestamp(let nanoseconds):
            bytes.append(PayloadCode.timestamp)
            appendVarint(zigZagEncode(nanoseconds), to: &bytes)
        case .objectId(let id):
            bytes.append(PayloadCode.objectId)
            writeObjectID(id, into: &bytes)
        case .uuid(let uuid):
            bytes.append(PayloadCode.uuid)
            writeUUID(uuid, into: &bytes)
        case .link(let target):
            bytes.append(PayloadCode.link)
            appendVarint(UInt64(target.table), to: &bytes)
            writeKey(target.key, into: &bytes)
        }
    }

    private mutating func writeString<Sink: ByteSink>(_ string: String, into bytes: inout Sink) {
        if let index = stringIndices[string] {
            appendVarint(index + 1, to: &bytes)
            return
        }
        let index = UInt64(stringIndices.count)
        precondition(index < CodecLimits.stringsPerChangesetMax, "too many strings in a changeset")
        stringIndices[string] = index
        var utf8 = string
        utf8.withUTF8 { buffer in
            precondition(UInt64(buffer.count) <= CodecLimits.stringBytesMax, "string too long")
            bytes.append(0)
            appendVarint(UInt64(buffer.count), to: &bytes)
            bytes.append(bytes: buffer)
        }
    }

    private func writeObjectID<Sink: ByteSink>(_ id: ObjectID, into bytes: inout Sink) {
        appendFixed(UInt64(id.high), byteCount: 4, to: &bytes)
        appendFixed(id.low, byteCount: 8, to: &bytes)
    }

    private func writeUUID<Sink: ByteSink>(_ uuid: UUIDValue, into bytes: inout Sink) {
        appendFixed(uuid.high, byteCount: 8, to: &bytes)
        appendFixed(uuid.low, byteCount: 8, to: &bytes)
    }
}

@inline(__always)
func appendFixed<Sink: ByteSink>(_ value: UInt64, byteCount: Int, to bytes: inout Sink) {
    for index in 0..<byteCount {
        bytes.append(UInt8(truncatingIfNeeded: value >> (UInt64(index) * 8)))
    }
}

/// Where the encoder writes: a byte array, or `ByteCounter`, which only measures.
protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: ByteSink where Element == UInt8 {
    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

/// Counts what the encoder would write, without storing it.
struct ByteCounter: ByteSink {
    var count = 0
    @inline(__always)
    mutating func append(_ byte: UInt8) { count += 1 }
    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) { count += bytes.count }
}
