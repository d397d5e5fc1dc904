//! Suite files: a named list of sweeps that run together (`syncsim suite`), the benchmark and
//! regression suites kept in `Data/suites/`.
//!
//! A suite is JSON, decoded as strictly as a scenario (the same `ScenarioError`s, naming the
//! file, the field and the fix). Each sweep of a suite takes the options of `syncsim sweep`,
//! as JSON fields with the same names (`seeds`, `resetModes`, `backupIntervals`, `vary`, `set`,
//! `clients`, `duration`) and the same text; the command checks that text as `sweep` checks
//! its command line. A scenario path is relative to the suite file's directory.

import Foundation

/// A suite file, decoded (see the file's documentation).
public struct SuiteSpec: Sendable, Equatable {
    /// One sweep of the suite: its name and the `syncsim sweep` options it runs with.
    public struct Sweep: Sendable, Equatable {
        /// Unique in the suite; letters, digits, `.`, `_` and `-` (it names files).
        public var name: String
        /// The field path of this sweep in the file, e.g. `sweeps[2]`, for messages.
        public var field: String
        /// The scenario file, resolved against the suite's directory; nil: the embedded default.
        public var scenario: String?
        /// `sweep`'s options, as text: `--seeds` (default "10"), `--reset-modes`,
        /// `--backup-intervals`, each `--vary` and `--set`, `--clients`, `--duration`.
        public var seeds: String = "10"
        public var resetModes: String?
        public var backupIntervals: String?
        public var vary: [String] = []
        public var set: [String] = []
        public var clients: UInt32?
        public var duration: String?

        public init(name: String, field: String) {
            self.name = name
            self.field = field
        }
    }

    public var name: String
    public var description: String
    public var sweeps: [Sweep]

    /// At most this many sweeps in one suite.
    public static let sweepsMax = 100
    /// The longest sweep name.
    public static let nameLengthMax = 64

    /// Reads and checks a suite file.
    public static func load(path: String) throws(ScenarioError) -> (
        suite: SuiteSpec, bytes: [UInt8]
    ) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(
                code: .unreadable, file: path, field: "",
                problem: "the file does not exist or cannot be read",
                fix: "pass the path of a readable suite file (see Data/suites/)")
        }
        let bytes = [UInt8](data)
        let directory = (path as NSString).deletingLastPathComponent
        return (try decode(bytes: bytes, file: path, directory: directory), bytes)
    }

    /// Decodes suite JSON; `directory` resolves the sweeps' relative scenario paths.
    public static func decode(bytes: [UInt8], file: String, directory: String)
        throws(ScenarioError) -> SuiteSpec
    {
        let root = try Scenario.parse(bytes: bytes, file: file, what: "a suite file")
        var reader = try FieldReader(root, path: "", file: file, section: "Suite format")
        let name = try Self.name(&reader, of: "suite")
        let description = try reader.string("description", default: "")
        guard let items = try reader.array("sweeps"), !items.isEmpty else {
            throw ScenarioError(
                code: .wrongType, file: file, field: "sweeps",
                problem: "the suite has no sweeps",
                fix: "add \"sweeps\": [ { \"name\": ..., \"seeds\": ... }, ... ]")
        }
        guard items.count <= sweepsMax else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: "sweeps",
                problem: "\(items.count) sweeps, more than \(sweepsMax)",
                fix: "split the suite into several files")
        }
        try reader.finish()
        var sweeps: [Sweep] = []
        for (index, item) in items.enumerated() {
            let field = "sweeps[\(index)]"
            var sub = try FieldReader(item, path: field, file: file, section: "Suite format")
            let sweepName = try Self.name(&sub, of: "sweep")
            if let earlier = sweeps.first(where: { $0.name == sweepName }) {
                throw ScenarioError(
                    code: .inconsistent, file: file, field: "\(field).name",
                    problem: "\"\(sweepName)\" already names \(earlier.field)",
                    fix: "give every sweep of the suite its own name")
            }
            var sweep = Sweep(name: sweepName, field: field)
            // Every field is read, given or not, so that an unknown one's message lists them.
            if let path = try sub.optionalString("scenario") {
                guard !path.isEmpty else { throw sub.wrongType("scenario", "a file path") }
                sweep.scenario =
                    path.hasPrefix("/") || directory.isEmpty
                    ? path : (directory as NSString).appendingPathComponent(path)
            }
            sweep.seeds = try sub.wordOrWholeNumber("seeds", default: sweep.seeds)
            sweep.resetModes = try sub.optionalString("resetModes")
            sweep.backupIntervals = try sub.optionalString("backupIntervals")
            sweep.vary = try sub.strings("vary")
            sweep.set = try sub.strings("set")
            let clients = try sub.unsigned(
                "clients", default: 0, range: 1...UInt64(Limits.clientsMax))
            sweep.clients = clients == 0 ? nil : UInt32(clients)
            let duration = try sub.wordOrWholeNumber("duration", default: "")
            if duration.isEmpty && sub.has("duration") {
                throw sub.wrongType("duration", "a duration, e.g. \"6h\" or 21600")
            }
            sweep.duration = duration.isEmpty ? nil : duration
            try sub.finish()
            sweeps.append(sweep)
        }
        return SuiteSpec(name: name, description: description, sweeps: sweeps)
    }

    /// Letters, digits, `.`, `_` and `-`, not starting with `.`, at most `nameLengthMax`.
    public static func isName(_ text: String) -> Bool {
        let punctuation = "._-".unicodeScalars
        return !text.isEmpty && text.count <= nameLengthMax && !text.hasPrefix(".")
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || punctuation.contains(scalar))
            }
    }

    /// The `name` field `reader` holds (the suite's or a sweep's, `what`), checked.
    private static func name(_ reader: inout FieldReader, of what: String)
        throws(ScenarioError) -> String
    {
        let name = try reader.string("name", default: "")
        guard isName(name) else {
            throw ScenarioError(
                code: name.isEmpty ? .wrongType : .outOfRange, file: reader.file,
                field: reader.name("name"),
                problem: name.isEmpty
                    ? "the field is required" : "\"\(name)\" is not a usable \(what) name",
                fix:
                    "give a name of letters, digits, '.', '_' and '-' (at most \(nameLengthMax), not starting with '.'); it names files"
            )
        }
        return name
    }
}

extension FieldReader {
    /// A string field, or nil when absent.
    mutating func optionalString(_ key: String) throws(ScenarioError) -> String? {
        let value = try string(key, default: "")
        return has(key) ? value : nil
    }

    /// A field given as a string or a whole number (`"1-20"` or `20`, `"6h"` or `21600`), as
    /// text.
    mutating func wordOrWholeNumber(_ key: String, default fallback: String)
        throws(ScenarioError) -> String
    {
        guard let value = raw(key) else { return fallback }
        switch value {
        case .string(let string): return string
        case .number(let number) where number >= 0 && number.rounded() == number && number < 1e18:
            return formatNumber(number)
        default: throw wrongType(key, "a string or a whole number")
        }
    }

    /// An array of strings (empty when absent).
    mutating func strings(_ key: String) throws(ScenarioError) -> [String] {
        guard let items = try array(key) else { return [] }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let string) = item else {
                throw ScenarioError(
                    code: .wrongType, file: file, field: "\(name(key))[\(index)]",
                    problem: "expected a string",
                    fix:
                        "give each item as the text of one option, e.g. \"workload.listPercent=0,20\""
                )
            }
            strings.append(string)
        }
        return strings
    }
}
