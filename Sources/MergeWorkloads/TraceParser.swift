//! Line-by-line parsing of the JSON-lines trace format (documented on `TraceReader`).

import Foundation
import MergeCore

/// A JSON value, decoded strictly: booleans, integers and doubles stay distinct.
enum JSONValue: Decodable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case object([String: JSONValue])
    case array([JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            self = .int(int)
        } else if let unsigned = try? container.decode(UInt64.self) {
            self = .unsigned(unsigned)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .int, .unsigned: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .object: "an object"
        case .array: "an array"
        }
    }
}

/// Accumulates changesets from trace lines.
struct TraceParser {
    let file: String
    private let decoder = JSONDecoder()
    private var trace = Trace()
    /// Changesets per client, keyed by client; turned into a sorted list at the end.
    private var changesetsByClient: [UInt64: ContiguousArray<Changeset>] = [:]
    private var base = ContiguousArray<Changeset>()

    init(file: String) { self.file = file }

    mutating func parseLine(_ bytes: Data, number: Int) throws(TraceError) {
        let trimmed = bytes.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#")
            || trimmed.allSatisfy({ $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: " ") })
        {
            return
        }
        let value: JSONValue
        do {
            value = try decoder.decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw TraceError(file: file, line: number, field: nil,
                             message: "not valid JSON; each line must be one JSON object")
        }
        guard case .object(let members) = value else {
            throw TraceError(file: file, line: number, field: nil,
                             message: "expected a JSON object, found \(value.kindName)")
        }
        var line = TraceLine(members: members, file: file, number: number)
        let client = try line.unsigned("client")
        let sequence = try line.unsigned("changeset")
        let timestamp = client == 0 ? try line.optionalUnsigned("ts") ?? 0 : try line.unsigned("ts")
        let instruction = try line.instruction()
        try line.rejectUnknownMembers()
        try append(instruction, client: client, sequence: sequence, timestamp: timestamp,
                   number: number)
        trace.instructionCount += 1
    }

    private mutating func append(_ instruction: Instruction, client: UInt64, sequence: UInt64,
                                 timestamp: UInt64, number: Int) throws(TraceError)
    {
        var changesets = client == 0 ? base : changesetsByClient[client] ?? []
        if client == 0 { base = [] } else { changesetsByClient[client] = nil }
        defer {
            if client == 0 { base = changesets } else { changesetsByClient[client] = changesets }
        }
        if let last = changesets.last, last.version == sequence {
            guard last.originTimestamp == timestamp else {
                throw TraceError(file: file, line: number, field: "ts",
                                 message: "\(timestamp) differs from \(last.originTimestamp) on "
                                    + "earlier lines of changeset \(sequence) of client \(client)")
            }
            changesets[changesets.count - 1].instructions.append(instruction)
            return
        }
        if let last = changesets.last, last.version > sequence {
            throw TraceError(file: file, line: number, field: "changeset",
                             message: "changeset numbers of client \(client) go back from "
                                + "\(last.version) to \(sequence); they must not decrease")
        }
        changesets.append(Changeset(version: sequence, lastIntegratedRemoteVersion: 1,
                                    originTimestamp: timestamp,
                                    originFileIdent: client == 0 ? 1 : client + 1,
                                    instructions: [instruction]))
    }

    mutating func finish() throws(TraceError) -> Trace {
        trace.base = base
        // Sorted keys, so the order never depends on hashing.
        trace.clients = changesetsByClient.keys.sorted().map { ($0, changesetsByClient[$0]!) }
        return trace
    }
}

/// The members of one trace line, consumed field by field.
struct TraceLine {
    var members: [String: JSONValue]
    let file: String
    let number: Int

    func error(_ field: String?, _ message: String) -> TraceError {
        TraceError(file: file, line: number, field: field, message: message)
    }

    mutating func take(_ field: String) throws(TraceError) -> JSONValue {
        guard let value = members.removeValue(forKey: field) else {
            throw error(field, "missing; see docs/bench-merge.md for the fields of each op")
        }
        return value
    }

    mutating func unsigned(_ field: String) throws(TraceError) -> UInt64 {
        switch try take(field) {
        case .int(let value) where value >= 0: return UInt64(value)
        case .unsigned(let value): return value
        case let other: throw error(field, "expected an unsigned integer, found \(other.kindName)")
        }
    }

    mutating func optionalUnsigned(_ field: String) throws(TraceError) -> UInt64? {
        members[field] == nil ? nil : try unsigned(field)
    }

    mutating func uint32(_ field: String) throws(TraceError) -> UInt32 {
        let value = try unsigned(field)
        guard value <= UInt64(UInt32.max) else { throw error(field, "\(value) is above 2^32 - 1") }
        return UInt32(value)
    }

    mutating func signed(_ field: String) throws(TraceError) -> Int64 {
        switch try take(field) {
        case .int(let value): return value
        case let other: throw error(field, "expected a signed 64-bit integer, found \(other.kindName)")
        }
    }

    mutating func bool(_ field: String, default defaultValue: Bool) throws(TraceError) -> Bool {
        guard members[field] != nil else { return defaultValue }
        switch try take(field) {
        case .bool(let value): return value
        case let other: throw error(field, "expected true or false, found \(other.kindName)")
        }
    }

    mutating func string(_ field: String) throws(TraceError) -> String {
        switch try take(field) {
        case .string(let value): return value
        case let other: throw error(field, "expected a string, found \(other.kindName)")
        }
    }

    mutating func rejectUnknownMembers() throws(TraceError) {
        if let name = members.keys.sorted().first {
            throw error(name, "unknown member for this op; check its spelling")
        }
    }

    mutating func object() throws(TraceError) -> ObjectRef {
        let table = try uint32("table")
        return ObjectRef(table: table, key: try key(take("pk"), field: "pk"))
    }

    func key(_ value: JSONValue, field: String) throws(TraceError) -> PrimaryKey {
        switch value {
        case .null: return .null
        case .int(let int): return .int(int)
        case .string(let string): return .string(string)
        case .object(let members) where members.count == 1:
            if case .string(let hex)? = members["object_id"] {
                guard let id = parseObjectID(hex) else {
                    throw error(field, "object_id must be 24 hexadecimal digits")
                }
                return .objectId(id)
            }
            if case .string(let hex)? = members["uuid"] {
                guard let uuid = parseUUID(hex) else {
                    throw error(field, "uuid must be 32 hexadecimal digits (dashes allowed)")
                }
                return .uuid(uuid)
            }
            fallthrough
        default:
            throw error(field, "expected an integer, a string, null, {\"object_id\":…} or {\"uuid\":…}")
        }
    }

    func value(_ json: JSONValue, field: String) throws(TraceError) -> Value {
        guard case .object(let members) = json else {
            if case .null = json { return .null }
            throw error(field, "expected null or an object with one member such as {\"int\":7}")
        }
        guard members.count == 1, let (type, payload) = members.first else {
            throw error(field, "expected exactly one member such as {\"int\":7}")
        }
        switch (type, payload) {
        case ("null", .null): return .null
        case ("int", .int(let int)): return .int(int)
        case ("bool", .bool(let bool)): return .bool(bool)
        case ("string", .string(let string)): return .string(string)
        case ("double", .double(let double)): return .double(double)
        case ("double", .int(let int)): return .double(Double(int))
        case ("timestamp", .int(let int)): return .timestamp(int)
        case ("object_id", .string(let hex)):
            guard let id = parseObjectID(hex) else { throw error(field, "bad object_id \"\(hex)\"") }
            return .objectId(id)
        case ("uuid", .string(let hex)):
            guard let uuid = parseUUID(hex) else { throw error(field, "bad uuid \"\(hex)\"") }
            return .uuid(uuid)
        case ("link", .object(var link)):
            guard let table = link.removeValue(forKey: "table"), let pk = link.removeValue(forKey: "pk"),
                  link.isEmpty, case .int(let tableID) = table, tableID >= 0, tableID <= Int64(UInt32.max)
            else {
                throw error(field, "a link is {\"table\":<table>,\"pk\":<primary key>}")
            }
            return .link(ObjectRef(table: UInt32(tableID), key: try key(pk, field: field)))
        default:
            throw error(field, "\"\(type)\" with \(payload.kindName) is not a value; "
                            + "use int, bool, string, double, timestamp, object_id, uuid, link or null")
        }
    }

    mutating func instruction() throws(TraceError) -> Instruction {
        let op = try string("op")
        switch op {
        case "add_table":
            let table = try uint32("table")
            let field = try uint32("pk_field")
            let typeName = try string("pk_type")
            let types: [String: PrimaryKeyType] = [
                "int": .int, "string": .string, "object_id": .objectId, "uuid": .uuid,
            ]
            guard let type = types[typeName] else {
                throw error("pk_type", "\"\(typeName)\" is not int, string, object_id or uuid")
            }
            return .addTable(table: table, primaryKeyField: field, primaryKeyType: type,
                             primaryKeyNullable: try bool("pk_nullable", default: false))
        case "add_column":
            let table = try uint32("table")
            let field = try uint32("field")
            let typeName = try string("type")
            let types: [String: ValueType] = [
                "int": .int, "bool": .bool, "string": .string, "timestamp": .timestamp,
                "double": .double, "link": .link, "object_id": .objectId, "uuid": .uuid,
                "mixed": .mixed,
            ]
            guard let type = types[typeName] else {
                throw error("type", "\"\(typeName)\" is not a column type")
            }
            let nullable = try bool("nullable", default: false)
            var collection = CollectionKind.single
            if members["collection"] != nil {
                let name = try string("collection")
                let kinds: [String: CollectionKind] = ["single": .single, "list": .list, "set": .set]
                guard let kind = kinds[name] else {
                    throw error("collection", "\"\(name)\" is not single, list or set")
                }
                collection = kind
            }
            let linkTarget = members["link_target"] == nil ? nil : try uint32("link_target")
            return .addColumn(table: table, field: field, type: type, nullable: nullable,
                              collection: collection, linkTarget: linkTarget)
        case "erase_column":
            return .eraseColumn(table: try uint32("table"), field: try uint32("field"))
        case "create_object":
            return .createObject(try object())
        case "erase_object":
            return .eraseObject(try object())
        case "update":
            let object = try object()
            let field = try uint32("field")
            let value = try value(take("value"), field: "value")
            return .update(object: object, field: field, value: value,
                           isDefault: try bool("default", default: false))
        case "array_update", "array_insert":
            let object = try object()
            let field = try uint32("field")
            let index = try uint32("index")
            let value = try value(take("value"), field: "value")
            let priorSize = try uint32("prior_size")
            return op == "array_update"
                ? .arrayUpdate(object: object, field: field, index: index, value: value,
                               priorSize: priorSize)
                : .arrayInsert(object: object, field: field, index: index, value: value,
                               priorSize: priorSize)
        case "array_move":
            let object = try object()
            let field = try uint32("field")
            let from = try uint32("from")
            let to = try uint32("to")
            return .arrayMove(object: object, field: field, from: from, to: to,
                              priorSize: try uint32("prior_size"))
        case "array_erase":
            let object = try object()
            let field = try uint32("field")
            let index = try uint32("index")
            return .arrayErase(object: object, field: field, index: index,
                               priorSize: try uint32("prior_size"))
        case "add_integer":
            let object = try object()
            let field = try uint32("field")
            return .addInteger(object: object, field: field, increment: try signed("increment"))
        case "clear":
            return .clear(object: try object(), field: try uint32("field"))
        case "set_insert", "set_erase":
            let object = try object()
            let field = try uint32("field")
            let value = try value(take("value"), field: "value")
            return op == "set_insert"
                ? .setInsert(object: object, field: field, value: value)
                : .setErase(object: object, field: field, value: value)
        default:
            throw error("op", "\"\(op)\" is not an instruction; see docs/bench-merge.md")
        }
    }
}

private func parseHex(_ text: Substring) -> UInt64? {
    guard !text.isEmpty, text.count <= 16 else { return nil }
    return UInt64(text, radix: 16)
}

func parseObjectID(_ text: String) -> ObjectID? {
    guard text.count == 24, let high = parseHex(text.prefix(8)), let low = parseHex(text.suffix(16))
    else { return nil }
    return ObjectID(high: UInt32(high), low: low)
}

func parseUUID(_ text: String) -> UUIDValue? {
    let digits = text.filter { $0 != "-" }
    guard digits.count == 32, let high = parseHex(digits.prefix(16)),
          let low = parseHex(digits.suffix(16))
    else { return nil }
    return UUIDValue(high: high, low: low)
}
