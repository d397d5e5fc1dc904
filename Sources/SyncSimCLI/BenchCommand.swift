import ArgumentParser
import CAllocationCount
import Foundation
import Measurement
import MergeCore
import MergeWorkloads
import Simulation

/// `syncsim bench`: performance measurements without the benchmark harness.
public struct BenchCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract:
            "Measure merge throughput and judge it against the merge targets; measure the simulator's speed.",
        subcommands: [BenchMergeCommand.self, BenchTargetsCommand.self, BenchRunCommand.self]
    )

    public init() {}
}

/// `syncsim bench merge`: runs the merge workloads (or a trace) and prints their figures.
///
/// Inputs are generated before the timed region; only `Transformer.merge` is timed, in process
/// CPU time. See docs/bench-merge.md for the workloads, the columns and the trace format.
public struct BenchMergeCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Measure merge throughput on generated workloads or a trace.",
        discussion: """
            Rates are instructions merged per CPU second of the merge alone. Build with -c \
            release for meaningful numbers. With --repetitions, each row is the run with the \
            median merge time. Digests are deterministic for a seed; times are not. CSV follows \
            RFC 4180 (CRLF line ends, one header row); docs/bench-merge.md lists the columns.
            """
    )

    /// A workload name, or all of them.
    public enum WorkloadChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
        case mapUniform = "map-uniform"
        case mapZipf = "map-zipf"
        case churn
        case list
        case textLike = "text-like"
        case all

        var kinds: [WorkloadKind] {
            self == .all ? WorkloadKind.allCases : [WorkloadKind(rawValue: rawValue)!]
        }
    }

    public enum RoleChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
        case server, client
        var role: MergeRole { self == .server ? .server : .client }
    }

    @Option(help: "The workload to run.")
    public var workload: WorkloadChoice = .all

    @Option(help: "Clients K: uploaders (server role) or authors of the download plus one (client role).")
    public var clients: Int = 10

    @Option(help: "Instructions merged: all uploads (server role) or the download D (client role).")
    public var instructions: Int = 100_000

    @Option(help: "Unsynced local instructions L in the client role (default: same as --instructions).")
    public var localInstructions: Int?

    @Option(help: "Objects N of the map and churn workloads.")
    public var objects: Int = 10_000

    @Option(help: "Which peer merges: the server integrating K uploads, or a client integrating a download.")
    public var role: RoleChoice = .server

    @Option(help: "The seed of every random draw.")
    public var seed: UInt64 = 1

    @Option(help: "Runs per row; the row reported is the one with the median merge time.")
    public var repetitions: Int = 1

    @Option(help: ArgumentHelp("Replay a JSON-lines trace instead of a generated workload.", valueName: "path"))
    public var trace: String?

    @Option(help: ArgumentHelp("Also write the rows as CSV to this file, atomically.", valueName: "path"))
    public var csv: String?

    @Flag(help: "Run 10^4, 10^5, ... instructions up to --growth-max and fit the growth exponent of merge time.")
    public var growth: Bool = false

    @Option(help: "The largest size of --growth (a power of ten, at least 10^5).")
    public var growthMax: Int = 1_000_000

    public init() {}

    public func validate() throws {
        guard (1...WorkloadLimits.clientsMax).contains(clients) else {
            throw ValidationError("--clients must be between 1 and \(WorkloadLimits.clientsMax).")
        }
        guard (1...WorkloadLimits.instructionsMax).contains(instructions) else {
            throw ValidationError("--instructions must be between 1 and \(WorkloadLimits.instructionsMax).")
        }
        if let localInstructions, !(0...WorkloadLimits.instructionsMax).contains(localInstructions) {
            throw ValidationError("--local-instructions must be between 0 and \(WorkloadLimits.instructionsMax).")
        }
        guard (1...WorkloadLimits.objectsMax).contains(objects) else {
            throw ValidationError("--objects must be between 1 and \(WorkloadLimits.objectsMax).")
        }
        guard (1...99).contains(repetitions) else {
            throw ValidationError("--repetitions must be between 1 and 99.")
        }
        guard [100_000, 1_000_000, 10_000_000].contains(growthMax) else {
            throw ValidationError("--growth-max must be 100000, 1000000 or 10000000.")
        }
        if trace != nil && growth {
            throw ValidationError("--growth generates its inputs, so it cannot replay a --trace.")
        }
    }

    public func run() throws {
        print("seed=\(seed) role=\(role.rawValue) clients=\(clients) instructions=\(instructions)")
        var rows = [BenchRow]()
        var failure: (any Error)?
        do {
            if let trace {
                rows.append(try runTrace(path: trace))
            } else if growth {
                rows = try runGrowth()
            } else {
                for kind in workload.kinds {
                    rows.append(try runMedian { MergeInputs.generate(parameters(kind), role: role.role) })
                }
            }
        } catch {
            failure = error
        }
        print(BenchRow.table(rows))
        if let csv, !rows.isEmpty {
            try BenchCSV.write(rows, seed: seed, to: csv)
            print("wrote \(csv)")
        }
        if let failure {
            printError("error: \(failure)")
            printError("reproduce: syncsim bench merge \(reproduction)")
            throw ExitCode.failure
        }
    }

    private var reproduction: String {
        var arguments = ["--workload \(workload.rawValue)", "--role \(role.rawValue)",
                         "--clients \(clients)", "--instructions \(instructions)",
                         "--objects \(objects)", "--seed \(seed)"]
        if let localInstructions { arguments.append("--local-instructions \(localInstructions)") }
        if let trace { arguments.append("--trace \(trace)") }
        if growth { arguments.append("--growth --growth-max \(growthMax)") }
        return arguments.joined(separator: " ")
    }

    private func parameters(_ kind: WorkloadKind, instructions count: Int? = nil) -> WorkloadParameters {
        WorkloadParameters(kind: kind, clients: clients, objects: objects,
                           instructions: count ?? instructions,
                           localInstructions: count == nil ? localInstructions : count,
                           seed: seed)
    }

    /// Runs `repetitions` times on fresh inputs and keeps the run with the median merge time.
    private func runMedian(_ makeInputs: () throws -> MergeInputs) throws -> BenchRow {
        var runs = [MergeMeasurement]()
        for _ in 0..<repetitions {
            let inputs = try makeInputs()
            runs.append(try MergeBenchmark.run(inputs, allocations: Self.allocationCounter))
        }
        precondition(runs.allSatisfy { $0.replicaDigest == runs[0].replicaDigest },
                     "repeated runs of one workload gave different digests")
        runs.sort { $0.mergeCpuNs < $1.mergeCpuNs }
        return BenchRow(measurement: runs[runs.count / 2], repetitions: repetitions)
    }

    /// The process's allocation counter (`CAllocationCount`), where it counts (glibc).
    static let allocationCounter: AllocationCounter? =
        syncsim_allocation_counting_available() == 0 ? nil : AllocationCounter(
            start: { syncsim_allocation_counting_start() },
            stop: { syncsim_allocation_counting_stop() },
            read: { syncsim_allocation_count() })

    private func runTrace(path: String) throws -> BenchRow {
        let trace = try TraceReader.read(path: path)
        let name = URL(fileURLWithPath: path).lastPathComponent
        return try runMedian { try MergeInputs.fromTrace(trace, name: name, role: role.role) }
    }

    private func runGrowth() throws -> [BenchRow] {
        var rows = [BenchRow]()
        for kind in workload.kinds {
            var kindRows = [BenchRow]()
            for size in [10_000, 100_000, 1_000_000, 10_000_000] where size <= growthMax {
                kindRows.append(try runMedian {
                    MergeInputs.generate(parameters(kind, instructions: size), role: role.role)
                })
            }
            // The growth exponent: the least-squares slope of log(time) on log(size) (GSL).
            let fit = LinearFit.logLog(
                kindRows.map { Double($0.measurement.instructionsMerged) },
                kindRows.map { Double(max($0.measurement.mergeCpuNs, 1)) })
            for index in kindRows.indices { kindRows[index].growthExponent = fit?.slope }
            rows += kindRows
        }
        return rows
    }
}

/// One reported row: a measurement and, in growth mode, the fitted exponent.
struct BenchRow {
    var measurement: MergeMeasurement
    var repetitions: Int
    var growthExponent: Double?

    static let columns = [
        "workload", "role", "clients", "instructions_merged", "instructions_against",
        "merge_cpu_seconds", "scan_cpu_seconds", "index_cpu_seconds", "walk_cpu_seconds",
        "write_back_cpu_seconds", "instructions_per_second", "encoded_bytes_per_instruction",
        "peak_memory_bytes_per_instruction", "peak_resident_bytes",
        "allocations_per_instruction", "growth_exponent",
        "repetitions", "seed", "replica_digest", "changeset_digest",
    ]

    func fields(seed: UInt64) -> [String] {
        let m = measurement
        return [
            m.name, m.role.rawValue, String(m.clients), String(m.instructionsMerged),
            String(m.instructionsAgainst), format(Double(m.mergeCpuNs) / 1e9, digits: 6),
            format(Double(m.phases.scanNs) / 1e9, digits: 6),
            format(Double(m.phases.indexNs) / 1e9, digits: 6),
            format(Double(m.phases.walkNs) / 1e9, digits: 6),
            format(Double(m.phases.writeBackNs) / 1e9, digits: 6),
            format(m.instructionsPerSecond, digits: 0), format(m.encodedBytesPerInstruction, digits: 2),
            m.peakMemoryBytesPerInstruction.map { format($0, digits: 1) } ?? "",
            String(m.peakResidentBytes), m.allocationsPerInstruction.map { format($0, digits: 4) } ?? "",
            growthExponent.map { format($0, digits: 3) } ?? "",
            String(repetitions), String(seed), hexDigits(m.replicaDigest), hexDigits(m.changesetDigest),
        ]
    }

    /// A readable fixed-width table of the main figures.
    static func table(_ rows: [BenchRow]) -> String {
        let header = ["workload", "role", "K", "merged", "against", "cpu s",
                      "scan/index/walk/write %", "M instr/s",
                      "B/instr", "peak B/instr", "peak RSS MiB", "allocs/instr", "exponent",
                      "replica digest"]
        var lines = [header]
        for row in rows {
            let m = row.measurement
            lines.append([
                m.name, m.role.rawValue, String(m.clients), String(m.instructionsMerged),
                String(m.instructionsAgainst), format(Double(m.mergeCpuNs) / 1e9, digits: 3),
                phaseShares(m.phases),
                format(m.instructionsPerSecond / 1e6, digits: 2),
                format(m.encodedBytesPerInstruction, digits: 2),
                m.peakMemoryBytesPerInstruction.map { format($0, digits: 1) } ?? "-",
                format(Double(m.peakResidentBytes) / 1_048_576, digits: 1),
                m.allocationsPerInstruction.map { format($0, digits: 3) } ?? "-",
                row.growthExponent.map { format($0, digits: 3) } ?? "-", hexDigits(m.replicaDigest),
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { line in
            line.indices.map { column in
                let text = line[column]
                let padding = String(repeating: " ", count: widths[column] - text.count)
                return column < 2 ? text + padding : padding + text
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// The phases' shares of their sum, in whole percent ("41/3/33/23"), or "-" without a clock.
func phaseShares(_ phases: MergePhaseTimes) -> String {
    let parts = [phases.scanNs, phases.indexNs, phases.walkNs, phases.writeBackNs]
    let total = parts.reduce(0, +)
    guard total > 0 else { return "-" }
    return parts.map { String(Int((Double($0) * 100 / Double(total)).rounded())) }
        .joined(separator: "/")
}

/// RFC 4180 CSV of bench rows (Measurement's `CSV`), written atomically (`AtomicFile`).
enum BenchCSV {
    static func render(_ rows: [BenchRow], seed: UInt64) -> String {
        CSV.line(BenchRow.columns) + rows.map { CSV.line($0.fields(seed: seed)) }.joined()
    }

    static func write(_ rows: [BenchRow], seed: UInt64, to path: String) throws {
        do {
            try AtomicFile.write(render(rows, seed: seed), to: path)
        } catch {
            printError("\(error)")
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
    }
}

private func format(_ value: Double, digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}

private func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
