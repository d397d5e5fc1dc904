//! The records a run produces: what the `run` command hands to `ResultStore.insert(_:)`.
//!
//! Deterministic figures (`metrics`, client metrics) and wall-clock figures (`timings`) are kept
//! in separate fields, separate tables and separate CSV files, so that the deterministic CSV of a
//! seed is byte-identical from one run to the next.

import Foundation

/// The value of one metric: an exact integer or a real number.
///
/// Reals must not be NaN (SQLite cannot store NaN; it becomes NULL). ±infinity is allowed.
public enum MetricValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
}

/// One named figure. Names are lowerCamelCase with units and qualifiers last
/// (`latencyNsMax`, `changesetBytesP95`); CSV headers spell them in snake_case
/// (`latency_ns_max`).
public struct Metric: Sendable, Equatable {
    public var name: String
    public var value: MetricValue

    public init(name: String, value: MetricValue) {
        self.name = name
        self.value = value
    }

    /// An integer metric.
    public static func integer(_ name: String, _ value: Int64) -> Metric {
        Metric(name: name, value: .integer(value))
    }

    /// A real metric.
    public static func real(_ name: String, _ value: Double) -> Metric {
        Metric(name: name, value: .real(value))
    }
}

/// The per-client figures of a run. All clients of a run should share the same metric names in
/// the same order; the CSV export copes with differences (see `docs/results.md`).
public struct ClientRecord: Sendable, Equatable {
    public var clientIndex: UInt32
    public var metrics: [Metric]

    public init(clientIndex: UInt32, metrics: [Metric]) {
        self.clientIndex = clientIndex
        self.metrics = metrics
    }
}

/// Everything recorded about one simulation run.
public struct RunRecord: Sendable, Equatable {
    /// The master seed. Stored in SQLite as the Int64 with the same bits; exported unsigned.
    public var seed: UInt64
    public var scenarioName: String
    /// Hex digest of the scenario's content.
    public var scenarioHash: String
    /// The run's options as canonical JSON (see `RunRecord.canonicalJSON(_:)`).
    public var optionsJSON: String
    public var gitCommit: String
    public var toolchain: String
    /// Hex digest of the run's event trace.
    public var traceDigest: String
    public var simulatedDurationNs: UInt64
    public var clientsCount: UInt32
    public var eventsCount: UInt64
    /// Deterministic run metrics, in the producer's fixed order.
    public var metrics: [Metric]
    /// Wall-clock figures (never part of the deterministic CSV).
    public var timings: [Metric]
    /// Deterministic per-client metrics, usually in client order.
    public var clients: [ClientRecord]

    public init(
        seed: UInt64,
        scenarioName: String,
        scenarioHash: String,
        optionsJSON: String,
        gitCommit: String,
        toolchain: String,
        traceDigest: String,
        simulatedDurationNs: UInt64,
        clientsCount: UInt32,
        eventsCount: UInt64,
        metrics: [Metric] = [],
        timings: [Metric] = [],
        clients: [ClientRecord] = []
    ) {
        self.seed = seed
        self.scenarioName = scenarioName
        self.scenarioHash = scenarioHash
        self.optionsJSON = optionsJSON
        self.gitCommit = gitCommit
        self.toolchain = toolchain
        self.traceDigest = traceDigest
        self.simulatedDurationNs = simulatedDurationNs
        self.clientsCount = clientsCount
        self.eventsCount = eventsCount
        self.metrics = metrics
        self.timings = timings
        self.clients = clients
    }

    /// Canonical JSON for `optionsJSON`: keys sorted, no whitespace, slashes unescaped.
    ///
    /// Equal options give equal strings, so the string can be compared and hashed.
    /// - Throws: whatever `JSONEncoder` throws for the value (for example a non-finite `Double`).
    public static func canonicalJSON<Options: Encodable>(_ options: Options) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(options)
        return String(decoding: data, as: UTF8.self)
    }
}

/// A run as read back from the database, with the identifier the database gave it.
public struct StoredRun: Sendable, Equatable {
    /// `run.id`: increases with insertion order.
    public var runId: Int64
    public var record: RunRecord

    public init(runId: Int64, record: RunRecord) {
        self.runId = runId
        self.record = record
    }
}

// MARK: - Metric name rules

public enum MetricName {
    /// True for lowerCamelCase ASCII names: a lowercase letter, then letters and digits.
    /// Such names map one-to-one onto snake_case column names.
    public static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z")
        else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
    }

    /// `latencyNsMax` → `latency_ns_max`. Injective on valid names (they contain no `_`).
    public static func snakeCase(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count + 4)
        for character in name {
            if character.isASCII, character.isUppercase {
                result.append("_")
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}
