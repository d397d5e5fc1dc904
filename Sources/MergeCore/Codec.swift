//! A compact binary encoding of changesets (format version 1).
//!
//! The format follows realm-core's wire format in spirit (REALM-SEMANTICS §1.2: LEB128 varints,
//! the same instruction and payload type codes, interned strings) and adds delta coding of
//! object references, so that a typical map write — an `Update` of an integer field of an object
//! with an integer primary key — costs 6 to 10 bytes.
//!
//! ## Changeset
//!
//! ```
//! changeset   := format(1 byte = 1) version lastIntegratedRemoteVersion originTimestamp
//!                originFileIdent instructionCount instruction*
//! ```
//! The five header fields are unsigned LEB128 varints. Nothing may follow the last instruction.
//!
//! ## Instruction
//!
//! ```
//! instruction := tag(1 byte) body
//! tag         := bits 0-3: instruction code; bits 4-5: object mode; bit 6: flag A; bit 7: flag B
//! ```
//!
//! | code | instruction | flag A | flag B | body |
//! |---|---|---|---|---|
//! | 0 | AddTable | pk nullable | – | table pkField pkType(byte) |
//! | 2 | CreateObject | – | – | object |
//! | 3 | EraseObject | – | – | object |
//! | 4 | Update | isDefault | 0 | object field value |
//! | 4 | ArrayUpdate | 0 | 1 | object field index value priorSize |
//! | 5 | AddInteger | – | – | object field increment(zig-zag) |
//! | 6 | AddColumn | nullable | has link target | table field type(byte) collection(byte) [linkTarget] |
//! | 7 | EraseColumn | – | – | table field |
//! | 8 | ArrayInsert | – | – | object field index value priorSize |
//! | 9 | ArrayMove | – | – | object field from to priorSize |
//! | 10 | ArrayErase | – | – | object field index priorSize |
//! | 11 | Clear | – | – | object field |
//! | 12 | SetInsert | – | – | object field value |
//! | 13 | SetErase | – | – | object field value |
//!
//! Code 1 (EraseTable) and codes 14-15 are not modelled and are rejected. Flag bits marked "–"
//! and the object-mode bits of schema instructions must be zero. Tables, fields, indices and
//! sizes are unsigned varints that must fit in `UInt32`.
//!
//! ## Object references (bits 4-5 of an object instruction's tag)
//!
//! The decoder remembers the previous object instruction's object and the last integer primary
//! key seen in any object reference (initially 0).
//!
//! | mode | meaning | bytes |
//! |---|---|---|
//! | 0 | full reference | table(varint) key |
//! | 1 | same object as the previous object instruction | none |
//! | 2 | same table as the previous object; integer key | zig-zag delta to the last integer key |
//! | 3 | same table as the previous object; any key | key |
//!
//! ## Keys and values
//!
//! A key is a payload type byte and its data: 0 null; 1 int (zig-zag varint); 3 string (string
//! reference); 10 ObjectId (4 + 8 bytes little-endian); 11 UUID (8 + 8 bytes little-endian).
//! A value is a payload type byte and its data: the key types above, plus 2 bool (one byte, 0 or
//! 1), 5 timestamp (zig-zag varint, nanoseconds), 7 double (8 bytes little-endian bit pattern),
//! 9 link (table varint, then a key).
//!
//! ## Strings
//!
//! A string reference is a varint `r`. `r = 0` introduces a literal (byte length varint, then
//! UTF-8 bytes) and interns it as the next entry of the changeset's string table; `r ≥ 1` reuses
//! entry `r - 1`. Each distinct string is therefore written once per changeset.
//!
//! ## Batch
//!
//! ```
//! batch := format(1 byte = 1) count(varint) (length(varint) changeset)*
//! ```

extension Changeset {
    /// The changeset in the compact binary format (version 1).
    ///
    /// Builds with `SYNCSIM_INTERNAL_CHECKS` decode the result again and check that it gives the
    /// identical changeset (a paired check).
    ///
    /// - Complexity: O(n) in the number of instructions and string bytes.
    public func encoded() -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(16 + instructions.count * 10)
        encode(into: &bytes)
        return bytes
    }

    /// Appends the changeset's encoding to `bytes`.
    ///
    /// - Complexity: O(n) in the number of instructions and string bytes.
    public func encode(into bytes: inout [UInt8]) {
        let start = bytes.count
        var writer = ChangesetWriter()
        writer.write(self, into: &bytes)
        checkRoundTrip(bytes[start...])
    }

    /// The length of `encoded()`, computed without storing the bytes.
    ///
    /// - Complexity: O(n) in the number of instructions and string bytes.
    public var encodedByteCount: Int {
        var counter = ByteCounter()
        var writer = ChangesetWriter()
        writer.write(self, into: &counter)
        return counter.count
    }

    @inline(__always)
    private func checkRoundTrip(_ bytes: ArraySlice<UInt8>) {
        #if SYNCSIM_INTERNAL_CHECKS
            let decoded: Changeset
            do {
                decoded = try Changeset(decoding: bytes)
            } catch {
                preconditionFailure("encoded changeset does not decode: \(error)")
            }
            precondition(decoded == self, "encoded changeset decodes to a different changeset")
        #endif
    }

    /// Decodes a changeset written by `encoded()`.
    ///
    /// Never traps on malformed input: every problem is reported as a `DecodeError`, and the
    /// memory reserved is bounded by the input's length.
    ///
    /// - Throws: `DecodeError` when the bytes are not exactly one valid changeset.
    /// - Complexity: O(n) in the length of `bytes`.
    public init(decoding bytes: some Collection<UInt8>) throws(DecodeError) {
        let result: Result<Changeset, DecodeError>? = bytes.withContiguousStorageIfAvailable {
            Self.decodeWhole($0)
        }
        if let result {
            self = try result.get()
        } else {
            let copy = ContiguousArray(bytes)
            self = try copy.withUnsafeBufferPointer { Self.decodeWhole($0) }.get()
        }
    }

    private static func decodeWhole(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<
        Changeset, DecodeError
    > {
        var reader = ByteReader(buffer)
        do throws(DecodeError) {
            let changeset = try reader.readChangeset()
            guard reader.isAtEnd else { throw .trailingBytes(offset: reader.position) }
            return .success(changeset)
        } catch {
            return .failure(error)
        }
    }

    /// Encodes many changesets into one batch (for a download or an upload message).
    ///
    /// - Complexity: O(n) in the total number of instructions and string bytes.
    public static func encodeBatch(_ changesets: some Collection<Changeset>) -> [UInt8] {
        var bytes: [UInt8] = [CodecLimits.formatVersion]
        appendVarint(UInt64(changesets.count), to: &bytes)
        var scratch = [UInt8]()
        for changeset in changesets {
            scratch.removeAll(keepingCapacity: true)
            changeset.encode(into: &scratch)
            appendVarint(UInt64(scratch.count), to: &bytes)
            bytes.append(contentsOf: scratch)
        }
        return bytes
    }

    /// Decodes a batch written by `encodeBatch(_:)`.
    ///
    /// - Throws: `DecodeError` when the bytes are not exactly one valid batch.
    /// - Complexity: O(n) in the length of `bytes`.
    public static func decodeBatch(_ bytes: some Collection<UInt8>) throws(DecodeError)
        -> ContiguousArray<Changeset>
    {
        let result: Result<ContiguousArray<Changeset>, DecodeError>? =
            bytes.withContiguousStorageIfAvailable { decodeBatchWhole($0) }
        if let result { return try result.get() }
        let copy = ContiguousArray(bytes)
        return try copy.withUnsafeBufferPointer { decodeBatchWhole($0) }.get()
    }

    private static func decodeBatchWhole(_ buffer: UnsafeBufferPointer<UInt8>)
        -> Result<ContiguousArray<Changeset>, DecodeError>
    {
        var reader = ByteReader(buffer)
        do throws(DecodeError) {
            try reader.readFormatVersion()
            let countOffset = reader.position
            let count = try reader.readVarint()
            let limit = min(CodecLimits.changesetsPerBatchMax, UInt64(reader.remaining))
            guard count <= limit else {
                throw .changesetCountExceeded(count: count, limit: limit, offset: countOffset)
            }
            var changesets = ContiguousArray<Changeset>()
            changesets.reserveCapacity(Int(count))
            for _ in 0..<count {
                let lengthOffset = reader.position
                let length = try reader.readVarint()
                guard length <= UInt64(reader.remaining) else {
                    throw .truncated(offset: lengthOffset)
                }
                let end = reader.position + Int(length)
                var inner = ByteReader(buffer, position: reader.position, end: end)
                changesets.append(try inner.readChangeset())
                guard inner.isAtEnd else { throw .lengthMismatch(offset: inner.position) }
                reader.position = end
            }
            guard reader.isAtEnd else { throw .trailingBytes(offset: reader.position) }
            return .success(changesets)
        } catch {
            return .failure(error)
        }
    }
}

/// Instruction codes of REALM-SEMANTICS §1.2 (protocol-breaking if changed).
@usableFromInline
enum InstructionCode {
    static let addTable: UInt8 = 0
    static let createObject: UInt8 = 2
    static let eraseObject: UInt8 = 3
    static let update: UInt8 = 4
    static let addInteger: UInt8 = 5
    static let addColumn: UInt8 = 6
    static let eraseColumn: UInt8 = 7
    static let arrayInsert: UInt8 = 8
    static let arrayMove: UInt8 = 9
    static let arrayErase: UInt8 = 10
    static let clear: UInt8 = 11
    static let setInsert: UInt8 = 12
    static let setErase: UInt8 = 13

    static let flagA: UInt8 = 0x40
    static let flagB: UInt8 = 0x80
    static let objectModeShift: UInt8 = 4
    static let objectModeMask: UInt8 = 0x30
}

/// Object-reference modes (tag bits 4-5).
enum ObjectMode {
    static let full: UInt8 = 0
    static let same: UInt8 = 1
    static let sameTableIntDelta: UInt8 = 2
    static let sameTable: UInt8 = 3
}

/// Payload type codes of REALM-SEMANTICS §1.2.
enum PayloadCode {
    static let null: UInt8 = 0
    static let int: UInt8 = 1
    static let bool: UInt8 = 2
    static let string: UInt8 = 3
    static let timestamp: UInt8 = 5
    static let double: UInt8 = 7
    static let link: UInt8 = 9
    static let objectId: UInt8 = 10
    static let uuid: UInt8 = 11
}

@inline(__always)
func zigZagEncode(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value &<< 1) ^ (value >> 63))
}

@inline(__always)
func zigZagDecode(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}

/// The number of bytes the codec's varint takes for `value` (1 … 10): what a changeset's
/// encoding grows or shrinks by when one of its header fields changes, so a size known for one
/// header can be adjusted for another without encoding again.
public func varintByteCount(_ value: UInt64) -> Int {
    value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
}

@inline(__always)
func appendVarint<Sink: ByteSink>(_ value: UInt64, to bytes: inout Sink) {
    var rest = value
    while rest >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
    }
    bytes.append(UInt8(rest))
}
