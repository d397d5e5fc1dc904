//! The merge targets of the MergeCore issue as a suite: which runs measure them, and how the
//! runs are judged against them (`syncsim bench targets`).
//!
//! Every cell is one `syncsim bench merge` run. A round runs every cell once, in a fixed
//! order, so that a slow stretch of the machine falls on all cells alike; a cell's figure is
//! the median over the rounds, with the slowest and the fastest round beside it. The targets
//! are set at 10^6 merged instructions and N = 10^4 objects; at any other size the suite
//! still runs and reports, but judges nothing.

import Foundation
import Measurement
import MergeWorkloads

/// One run of the suite: a workload, a role, a size.
struct TargetCell: Hashable, Sendable {
    /// Which column of the merge table the cell is (or a smaller point of a growth fit).
    enum Column: String, CaseIterable, Sendable {
        case serverK10 = "server K=10"
        case serverK100 = "server K=100"
        case clientLD = "client K=10, L=D"
        case clientL10k = "client K=10, L=10^4"

        /// The column's name in CSV files.
        var id: String {
            switch self {
            case .serverK10: "server-k10"
            case .serverK100: "server-k100"
            case .clientLD: "client-ld"
            case .clientL10k: "client-l10k"
            }
        }
    }

    var kind: WorkloadKind
    var column: Column
    /// Instructions merged (D in the client role).
    var instructions: Int
    var objects: Int
    var seed: UInt64

    var role: MergeRole { column == .serverK10 || column == .serverK100 ? .server : .client }
    var clients: Int { column == .serverK100 ? 100 : 10 }
    /// L in the client role: D, or 10^4 (never more than D).
    var localInstructions: Int? {
        switch column {
        case .serverK10, .serverK100: nil
        case .clientLD: instructions
        case .clientL10k: min(10_000, instructions)
        }
    }

    /// The arguments of `syncsim bench merge` that make this run.
    var benchArguments: [String] {
        var arguments = [
            "--workload", kind.rawValue, "--role", role.rawValue,
            "--clients", String(clients), "--instructions", String(instructions),
            "--objects", String(objects), "--seed", String(seed),
        ]
        if let localInstructions {
            arguments += ["--local-instructions", String(localInstructions)]
        }
        return arguments
    }

    /// The cell as the console names it, e.g. "list server K=100 N=1000000".
    var title: String { "\(kind.rawValue) \(column.rawValue) N=\(instructions)" }

    var parameters: WorkloadParameters {
        WorkloadParameters(
            kind: kind, clients: clients, objects: objects,
            instructions: instructions, localInstructions: localInstructions,
            seed: seed)
    }
}

/// What one run of a cell measured (the columns of `bench merge`'s CSV the suite reads).
struct TargetSample: Equatable, Sendable {
    var mergeCpuSeconds: Double
    var instructionsMerged: Int
    var encodedBytesPerInstruction: Double
    var peakMemoryBytesPerInstruction: Double?
    var replicaDigest: String
    var changesetDigest: String

    /// Instructions merged per CPU second of the merge.
    var rate: Double { mergeCpuSeconds > 0 ? Double(instructionsMerged) / mergeCpuSeconds : 0 }

    /// The columns read, by name, from a `bench merge` CSV row.
    static let columns = [
        "merge_cpu_seconds", "instructions_merged",
        "encoded_bytes_per_instruction", "peak_memory_bytes_per_instruction",
        "replica_digest", "changeset_digest",
    ]

    /// Reads the sample from `bench merge --csv` output: a header and one row, read as RFC
    /// 4180 (`CSV.records`: a quoted cell, such as a trace file's name with a comma, is one
    /// cell).
    static func parse(csv text: String) -> TargetSample? {
        guard let records = CSV.records(text), records.count == 2,
            records[0].count == records[1].count
        else { return nil }
        var value = [String: String]()
        for (name, cell) in zip(records[0], records[1]) { value[name] = cell }
        guard let seconds = value["merge_cpu_seconds"].flatMap(Double.init),
            let merged = value["instructions_merged"].flatMap(Int.init),
            let encoded = value["encoded_bytes_per_instruction"].flatMap(Double.init),
            let peak = value["peak_memory_bytes_per_instruction"],
            let replica = value["replica_digest"], let changesets = value["changeset_digest"]
        else { return nil }
        return TargetSample(
            mergeCpuSeconds: seconds, instructionsMerged: merged,
            encodedBytesPerInstruction: encoded,
            peakMemoryBytesPerInstruction: Double(peak),
            replicaDigest: replica, changesetDigest: changesets)
    }
}

/// One target of the issue, judged on the suite's samples.
struct TargetCheck: Equatable, Sendable {
    enum Verdict: String, Sendable {
        case met
        case notMet = "not met"
        /// The suite ran at another size than the targets'.
        case notJudged = "not judged"
    }

    /// What is checked, e.g. "rate-server-k100".
    var target: String
    var workload: String
    /// The figure judged (the median over the rounds), and the rounds' range.
    var median: Double
    var low: Double
    var high: Double
    /// The threshold and its sense: `atLeast` true for "≥".
    var threshold: Double
    var atLeast: Bool
    var unit: String
    var verdict: Verdict
    /// Whether every round alone meets the threshold (nil when not judged).
    var everyRound: Bool?

    static let csvColumns = [
        "target", "workload", "median", "low", "high", "comparison",
        "threshold", "unit", "verdict", "every_round_meets",
    ]

    var csvFields: [String] {
        [
            target, workload, Self.number(median), Self.number(low), Self.number(high),
            atLeast ? ">=" : "<=", Self.number(threshold), unit, verdict.rawValue,
            everyRound.map { $0 ? "true" : "false" } ?? "",
        ]
    }

    static func number(_ value: Double) -> String { String(format: "%.4f", value) }
}

/// The cells of the suite and the judging of their samples.
enum TargetSuite {
    /// The size the targets are set at.
    static let targetInstructions = 1_000_000
    static let targetObjects = 10_000

    /// The rate target per workload, in instructions per second (server role).
    static func rateTarget(_ kind: WorkloadKind) -> Double {
        switch kind {
        case .mapUniform, .mapZipf, .textLike: 5e6
        case .churn: 3e6
        case .list: 1e6
        }
    }

    /// The sizes of a growth fit: N/100, N/10 and N.
    static func growthSizes(_ instructions: Int) -> [Int] {
        [max(instructions / 100, 1), max(instructions / 10, 1), instructions]
    }

    /// Every run of a round, in the order they run: per workload, the four columns at full
    /// size, then the smaller points of the growth fits (server K = 10 and client L = D).
    static func cells(instructions: Int, objects: Int, seed: UInt64) -> [TargetCell] {
        var cells = [TargetCell]()
        for kind in WorkloadKind.allCases {
            for column in TargetCell.Column.allCases {
                cells.append(
                    TargetCell(
                        kind: kind, column: column, instructions: instructions,
                        objects: objects, seed: seed))
            }
            for size in growthSizes(instructions).dropLast() {
                for column in [TargetCell.Column.serverK10, .clientLD] {
                    cells.append(
                        TargetCell(
                            kind: kind, column: column, instructions: size,
                            objects: objects, seed: seed))
                }
            }
        }
        return cells
    }

    /// Judges `samples` (every round's sample per cell) against the targets. Nothing
    /// is judged unless the cells are at the targets' size.
    static func checks(
        _ samples: [TargetCell: [TargetSample]], instructions: Int,
        objects: Int, seed: UInt64
    ) -> [TargetCheck] {
        let judged = instructions == targetInstructions && objects == targetObjects
        var checks = [TargetCheck]()
        func cell(
            _ kind: WorkloadKind, _ column: TargetCell.Column,
            size: Int = instructions
        ) -> [TargetSample] {
            samples[
                TargetCell(
                    kind: kind, column: column, instructions: size, objects: objects, seed: seed)]
                ?? []
        }
        func add(
            _ target: String, _ kind: WorkloadKind, values: [Double], median: Double,
            threshold: Double, atLeast: Bool, unit: String
        ) {
            guard !values.isEmpty else { return }
            let meets = { (value: Double) in atLeast ? value >= threshold : value <= threshold }
            checks.append(
                TargetCheck(
                    target: target, workload: kind.rawValue, median: median,
                    low: values.min()!, high: values.max()!, threshold: threshold, atLeast: atLeast,
                    unit: unit, verdict: !judged ? .notJudged : meets(median) ? .met : .notMet,
                    everyRound: judged ? values.allSatisfy(meets) : nil))
        }
        for kind in WorkloadKind.allCases {
            let k10 = cell(kind, .serverK10).map(\.rate)
            let k100 = cell(kind, .serverK100).map(\.rate)
            let target = rateTarget(kind)
            add(
                "rate-server-k10", kind, values: mega(k10), median: mega(median(k10)),
                threshold: target / 1e6, atLeast: true, unit: "M instr/s")
            add(
                "rate-server-k100", kind, values: mega(k100), median: mega(median(k100)),
                threshold: target / 1e6, atLeast: true, unit: "M instr/s")
            if kind == .list, k10.count == k100.count, !k10.isEmpty {
                // Round by round: both cells of a round ran within minutes of each other.
                let ratios = zip(k10, k100).map { $0 / max($1, 1) }
                add(
                    "rate-ratio-server-k10-over-k100", kind, values: ratios,
                    median: median(k10) / max(median(k100), 1), threshold: 2, atLeast: false,
                    unit: "ratio")
            }
            let client = cell(kind, .clientL10k).map(\.rate)
            if client.count == k10.count, !client.isEmpty {
                let ratios = zip(client, k10).map { $0 / max($1, 1) }
                add(
                    "rate-ratio-client-l10k-over-server-k10", kind, values: ratios,
                    median: median(client) / max(median(k10), 1), threshold: 1, atLeast: true,
                    unit: "ratio")
            }
            for column in [TargetCell.Column.serverK10, .clientLD] {
                let points = growthSizes(instructions).map { cell(kind, column, size: $0) }
                guard points.allSatisfy({ !$0.isEmpty }) else { continue }
                let sizes = points.map { Double($0[0].instructionsMerged) }
                let rounds = points.map(\.count).min()!
                let perRound = (0..<rounds).compactMap { round in
                    LinearFit.logLog(sizes, points.map { max($0[round].mergeCpuSeconds, 1e-9) })?
                        .slope
                }
                let ofMedians = LinearFit.logLog(
                    sizes, points.map { max(median($0.map(\.mergeCpuSeconds)), 1e-9) })?.slope
                if let ofMedians {
                    add(
                        "growth-exponent-\(column.id)", kind, values: perRound,
                        median: ofMedians, threshold: 1.1, atLeast: false, unit: "exponent")
                }
            }
            let peaks = TargetCell.Column.allCases.flatMap { cell(kind, $0) }
                .compactMap(\.peakMemoryBytesPerInstruction)
            add(
                "peak-memory-highest-cell", kind, values: peaks, median: peaks.max() ?? 0,
                threshold: 100, atLeast: false, unit: "B/instr")
            if kind == .mapUniform || kind == .mapZipf {
                let encoded = cell(kind, .serverK10).map(\.encodedBytesPerInstruction)
                add(
                    "encoded-bytes-server-k10", kind, values: encoded,
                    median: median(encoded), threshold: 16, atLeast: false, unit: "B/instr")
            }
        }
        return checks
    }

    /// The median (`Summary.p50`, GSL: the mean of the middle two for an even count); 0 when
    /// empty.
    static func median(_ values: [Double]) -> Double { Summary.of(values).p50 }

    private static func mega(_ values: [Double]) -> [Double] { values.map { $0 / 1e6 } }
    private static func mega(_ value: Double) -> Double { value / 1e6 }

    /// The merge table (M instructions/s, median over the rounds, with the rounds' range), as
    /// Markdown: a row per workload, a column per `TargetCell.Column`.
    static func table(
        _ samples: [TargetCell: [TargetSample]], instructions: Int,
        objects: Int, seed: UInt64
    ) -> String {
        let columns = TargetCell.Column.allCases
        var lines = [
            "| workload | " + columns.map(\.rawValue).joined(separator: " | ") + " |",
            "| --- |" + String(repeating: " --- |", count: columns.count),
        ]
        for kind in WorkloadKind.allCases {
            let rates = columns.map { column in
                samples[
                    TargetCell(
                        kind: kind, column: column, instructions: instructions,
                        objects: objects, seed: seed)]?.map { $0.rate / 1e6 }
            }
            if rates.allSatisfy({ $0 == nil }) { continue }
            let cells = rates.map { rates -> String in
                guard let rates, !rates.isEmpty else { return "-" }
                let middle = String(format: "%.2f", median(rates))
                if rates.count == 1 { return middle }
                return middle + String(format: " (%.2f–%.2f)", rates.min()!, rates.max()!)
            }
            lines.append("| \(kind.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}
