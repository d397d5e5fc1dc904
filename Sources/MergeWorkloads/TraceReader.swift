//! The JSON-lines workload trace format, for replaying merges recorded elsewhere.
//!
//! One instruction per line, one JSON object per instruction; blank lines and lines starting
//! with `#` are ignored. The full format is documented on `TraceReader` and in
//! docs/bench-merge.md.

import Foundation
import MergeCore

/// A problem in a trace file, located by file, line and field.
public struct TraceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// 1-based line number; 0 when the problem is the file as a whole.
    public var line: Int
    /// The JSON field at fault, if one is.
    public var field: String?
    public var message: String

    public var description: String {
        let location = line > 0 ? "\(file):\(line)" : file
        let fieldText = field.map { " field \"\($0)\":" } ?? ""
        return "\(location):\(fieldText) \(message)"
    }
}

/// A parsed trace: the base changesets (client 0) and each client's changesets.
public struct Trace: Sendable {
    public var base: ContiguousArray<Changeset> = []
    /// Clients ≥ 1 in ascending order, each with its changesets in file order.
    public var clients: [(client: UInt64, changesets: ContiguousArray<Changeset>)] = []
    public var instructionCount: Int = 0
}

/// Reads workload traces in the SyncSim JSON-lines format.
///
/// ## Lines
///
/// Each non-blank line that does not start with `#` is one JSON object describing one
/// instruction:
///
/// ```
/// {"client":3,"ts":1700,"changeset":12,"op":"update","table":1,"pk":42,"field":2,"value":{"int":7}}
/// ```
///
/// Common fields, required on every line:
/// - `client` (unsigned integer): the client that made the instruction. Client 0 is the
///   *base*: its changesets are applied to every replica before the merge and are not merged
///   or timed (use it for the schema and initial objects). Clients ≥ 1 made their changesets
///   concurrently, all against the base; client `c` has file ident `c + 1` (the server is 1).
/// - `changeset` (unsigned integer): the changeset number within the client, which becomes
///   the changeset's client version. Consecutive lines of one client with the same number form
///   one changeset; a client's numbers must not decrease. Lines of different clients may
///   interleave.
/// - `ts` (unsigned integer, milliseconds): the changeset's origin timestamp, which decides
///   last-writer-wins conflicts. It must be the same on every line of a changeset. Optional for
///   client 0 (default 0).
/// - `op` (string): the instruction, one of the names below.
///
/// Instruction fields, by `op` (all integers unsigned 32-bit unless said otherwise):
/// - `add_table`: `table`, `pk_field`, `pk_type` (`"int"`, `"string"`, `"object_id"`,
///   `"uuid"`), optional `pk_nullable` (bool, default false).
/// - `add_column`: `table`, `field`, `type` (`"int"`, `"bool"`, `"string"`, `"timestamp"`,
///   `"double"`, `"link"`, `"object_id"`, `"uuid"`, `"mixed"`), optional `nullable` (bool,
///   default false), optional `collection` (`"single"` default, `"list"`, `"set"`), optional
///   `link_target` (table).
/// - `erase_column`: `table`, `field`.
/// - `create_object`, `erase_object`: `table`, `pk`.
/// - `update`: `table`, `pk`, `field`, `value`, optional `default` (bool, default false).
/// - `array_update`, `array_insert`: `table`, `pk`, `field`, `index`, `value`, `prior_size`.
/// - `array_move`: `table`, `pk`, `field`, `from`, `to`, `prior_size`.
/// - `array_erase`: `table`, `pk`, `field`, `index`, `prior_size`.
/// - `add_integer`: `table`, `pk`, `field`, `increment` (signed 64-bit).
/// - `clear`: `table`, `pk`, `field`.
/// - `set_insert`, `set_erase`: `table`, `pk`, `field`, `value`.
///
/// A primary key `pk` is a JSON integer (signed 64-bit), a string, `null`,
/// `{"object_id":"<24 hex digits>"}` or `{"uuid":"<32 hex digits, dashes allowed>"}`.
/// A `value` is `null` or an object with exactly one member: `{"int":7}`, `{"bool":true}`,
/// `{"string":"x"}`, `{"double":1.5}`, `{"timestamp":<ns, signed 64-bit>}`,
/// `{"object_id":"…"}`, `{"uuid":"…"}`, `{"link":{"table":2,"pk":5}}` or `{"null":null}`.
///
/// Unknown members are errors, so a misspelt field is reported rather than ignored. Every error
/// names the file, the line and the field.
public enum TraceReader {
    /// Reads and parses the trace at `path`.
    public static func read(path: String) throws(TraceError) -> Trace {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TraceError(file: path, line: 0, field: nil,
                             message: "cannot read the file (\(error.localizedDescription)); check the path")
        }
        return try parse(data, file: path)
    }

    /// Parses trace text; `file` names it in errors.
    public static func parse(_ data: Data, file: String) throws(TraceError) -> Trace {
        var parser = TraceParser(file: file)
        var lineNumber = 0
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: UInt8(ascii: "\n")) ?? data.endIndex
            lineNumber += 1
            guard lineNumber <= WorkloadLimits.traceLinesMax else {
                throw TraceError(file: file, line: lineNumber, field: nil,
                                 message: "more than \(WorkloadLimits.traceLinesMax) lines")
            }
            try parser.parseLine(data[start..<end], number: lineNumber)
            start = end < data.endIndex ? data.index(after: end) : end
        }
        return try parser.finish()
    }
}

extension MergeInputs {
    /// The inputs of a trace for a role.
    ///
    /// Server role: every client ≥ 1 uploads its changesets, in ascending client order. Client
    /// role: the lowest client ≥ 1 is the local client with its changesets unsynced; the
    /// download is the server history of all the other clients, built by integrating them
    /// (untimed preparation).
    public static func fromTrace(_ trace: Trace, name: String, role: MergeRole)
        throws(MergeBenchmarkError) -> MergeInputs
    {
        let uploads = trace.clients.map(\.changesets)
        switch role {
        case .server:
            return MergeInputs(name: name, role: .server, clients: trace.clients.count,
                               base: trace.base, uploads: uploads)
        case .client:
            guard let first = trace.clients.first else {
                return MergeInputs(name: name, role: .client, clients: 0, base: trace.base)
            }
            var others = Array(uploads.dropFirst())
            var cpuNs: UInt64 = 0
            var against = 0
            var phases = MergePhaseTimes()
            var allocations: UInt64 = 0
            var download = try MergeBenchmark.integrate(uploads: &others, cpuNs: &cpuNs,
                                                        against: &against, phases: &phases,
                                                        allocationCount: &allocations)
            for index in download.indices { download[index].version = 2 + UInt64(index) }
            var local = first.changesets
            for index in local.indices { local[index].originFileIdent = 0 }
            return MergeInputs(name: name, role: .client, clients: trace.clients.count,
                               base: trace.base, download: download, local: local,
                               localFileIdent: first.client + 1)
        }
    }
}
