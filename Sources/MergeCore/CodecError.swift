//! Errors and limits of the changeset codec (see `Codec.swift` for the format).

/// Why a byte string is not a valid encoded changeset.
///
/// Every case carries the byte offset at which the problem was found, so a corrupt upload can be
/// located in a hex dump. The numeric `code` of each case is stable: codes are never renumbered
/// or reused, and new cases append new codes.
public enum DecodeError: Error, Hashable, Sendable {
    /// The input ended inside a header, an instruction, a varint or a string.
    case truncated(offset: Int)
    /// A LEB128 varint is longer than 10 bytes or does not fit in 64 bits.
    case varintOverflow(offset: Int)
    /// The low four bits of an instruction tag name no instruction SyncSim models
    /// (1 = EraseTable, 14 and 15 are not modelled).
    case unknownInstructionCode(code: UInt8, offset: Int)
    /// A payload (value or primary key) type code is not one SyncSim models.
    case unknownPayloadType(code: UInt8, offset: Int)
    /// The instruction count of a changeset is above `CodecLimits.instructionsPerChangesetMax`
    /// or above the number of bytes left (every instruction takes at least one byte).
    case instructionCountExceeded(count: UInt64, limit: UInt64, offset: Int)
    /// Bytes remain after the last instruction (or after the last changeset of a batch).
    case trailingBytes(offset: Int)
    /// A string literal is not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// The first byte is not a format version this decoder reads.
    case unsupportedFormatVersion(version: UInt8, offset: Int)
    /// An instruction tag sets flag bits that its instruction does not define.
    case reservedFlagsSet(tag: UInt8, offset: Int)
    /// An integer does not fit the field it encodes (a `UInt32` table, field, index or size).
    case integerOutOfRange(value: UInt64, offset: Int)
    /// An enumeration byte (primary-key type, value type, collection kind, Boolean) is invalid.
    case invalidEnumValue(value: UInt8, offset: Int)
    /// A string reference points past the strings interned so far.
    case invalidStringReference(reference: UInt64, offset: Int)
    /// An object reference says "same as previous object", but no object came before it.
    case missingPreviousObject(offset: Int)
    /// A string literal is longer than `CodecLimits.stringBytesMax` or than the bytes left.
    case stringTooLong(length: UInt64, limit: UInt64, offset: Int)
    /// More distinct strings than `CodecLimits.stringsPerChangesetMax` in one changeset.
    case stringCountExceeded(limit: UInt64, offset: Int)
    /// A batch holds more changesets than `CodecLimits.changesetsPerBatchMax` or bytes left.
    case changesetCountExceeded(count: UInt64, limit: UInt64, offset: Int)
    /// A changeset inside a batch is shorter or longer than its length prefix says.
    case lengthMismatch(offset: Int)

    /// The stable numeric code of the error (1 ... 17; never renumbered).
    public var code: UInt16 {
        switch self {
        case .truncated: 1
        case .varintOverflow: 2
        case .unknownInstructionCode: 3
        case .unknownPayloadType: 4
        case .instructionCountExceeded: 5
        case .trailingBytes: 6
        case .invalidUTF8: 7
        case .unsupportedFormatVersion: 8
        case .reservedFlagsSet: 9
        case .integerOutOfRange: 10
        case .invalidEnumValue: 11
        case .invalidStringReference: 12
        case .missingPreviousObject: 13
        case .stringTooLong: 14
        case .stringCountExceeded: 15
        case .changesetCountExceeded: 16
        case .lengthMismatch: 17
        }
    }

    /// The byte offset at which the problem was detected.
    public var offset: Int {
        switch self {
        case .truncated(let offset), .varintOverflow(let offset), .trailingBytes(let offset),
            .invalidUTF8(let offset), .missingPreviousObject(let offset),
            .lengthMismatch(let offset):
            offset
        case .unknownInstructionCode(_, let offset), .unknownPayloadType(_, let offset),
            .unsupportedFormatVersion(_, let offset), .reservedFlagsSet(_, let offset),
            .integerOutOfRange(_, let offset), .invalidEnumValue(_, let offset),
            .invalidStringReference(_, let offset), .stringCountExceeded(_, let offset):
            offset
        case .instructionCountExceeded(_, _, let offset), .stringTooLong(_, _, let offset),
            .changesetCountExceeded(_, _, let offset):
            offset
        }
    }
}

extension DecodeError: CustomStringConvertible {
    public var description: String {
        let remedy = "the bytes are corrupt or come from a newer encoder; re-fetch or re-encode them"
        let what: String
        switch self {
        case .truncated: what = "input ends too early"
        case .varintOverflow: what = "varint longer than 64 bits"
        case .unknownInstructionCode(let code, _): what = "unknown instruction code \(code)"
        case .unknownPayloadType(let code, _): what = "unknown payload type \(code)"
        case .instructionCountExceeded(let count, let limit, _):
            what = "instruction count \(count) above the limit \(limit)"
        case .trailingBytes: what = "trailing bytes after the last instruction"
        case .invalidUTF8: what = "string is not valid UTF-8"
        case .unsupportedFormatVersion(let version, _): what = "unsupported format version \(version)"
        case .reservedFlagsSet(let tag, _): what = "reserved flag bits set in tag \(tag)"
        case .integerOutOfRange(let value, _): what = "integer \(value) out of range"
        case .invalidEnumValue(let value, _): what = "invalid enumeration byte \(value)"
        case .invalidStringReference(let reference, _): what = "string reference \(reference) unknown"
        case .missingPreviousObject: what = "object reference needs a previous object"
        case .stringTooLong(let length, let limit, _):
            what = "string of \(length) bytes above the limit \(limit)"
        case .stringCountExceeded(let limit, _): what = "more than \(limit) strings"
        case .changesetCountExceeded(let count, let limit, _):
            what = "changeset count \(count) above the limit \(limit)"
        case .lengthMismatch: what = "changeset length prefix does not match its contents"
        }
        return "decode error \(code) at byte \(offset): \(what); \(remedy)"
    }
}

/// Limits that bound what a decoder may allocate for hostile input.
///
/// Besides these absolute limits, every count is checked against the bytes left in the input,
/// so a decoder never reserves more elements than the input could possibly describe.
public enum CodecLimits {
    /// The format version written in the first byte of a changeset and of a batch.
    public static let formatVersion: UInt8 = 1
    /// Instructions in one changeset.
    public static let instructionsPerChangesetMax: UInt64 = 1 << 22
    /// Bytes in one string literal.
    public static let stringBytesMax: UInt64 = 1 << 20
    /// Distinct strings interned in one changeset.
    public static let stringsPerChangesetMax: UInt64 = 1 << 20
    /// Changesets in one batch.
    public static let changesetsPerBatchMax: UInt64 = 1 << 22
}
