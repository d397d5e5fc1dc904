import Foundation
import Testing

@testable import Measurement

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory: ~Copyable {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/syncsim-measurement-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory, sorted.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    deinit {
        _ = chmod(path, 0o755)
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs `body`, which must throw a `MeasurementError`, and returns it (nil otherwise).
func measurementError(_ body: () throws -> Void) -> MeasurementError? {
    do {
        try body()
        return nil
    } catch {
        return error as? MeasurementError
    }
}

func bytes(at path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// The run used by the golden tests. Its options JSON needs quoting in CSV.
func sampleRun(seed: UInt64 = 42) -> RunRecord {
    RunRecord(
        seed: seed,
        scenarioName: "baseline",
        scenarioHash: "ab12",
        optionsJSON: #"{"clientsCount":2,"dropRatio":"1/10"}"#,
        gitCommit: "c1ebcc0",
        toolchain: "Swift 6.3.1",
        traceDigest: "00ff",
        simulatedDurationNs: 5_000_000_000,
        clientsCount: 2,
        eventsCount: 1234,
        metrics: [
            .integer("mergesCount", 17),
            .real("latencyNsMean", 1234.5),
            .integer("changesetBytesMax", 512),
        ],
        timings: [
            .real("wallSecondsTotal", 0.25),
            .integer("wallNsPerEvent", 2026),
        ],
        clients: [
            ClientRecord(clientIndex: 0, metrics: [.integer("uploadsCount", 5), .real("latencyNsP95", 1500.25)]),
            ClientRecord(clientIndex: 1, metrics: [.integer("uploadsCount", 7), .real("latencyNsP95", 99.125)]),
        ])
}
