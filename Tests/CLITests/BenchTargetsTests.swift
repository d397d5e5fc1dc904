import ArgumentParser
import Foundation
import MergeWorkloads
import Testing

@testable import SyncSimCLI

/// `syncsim bench targets`: the suite's cells, the judging of samples against the targets
/// (on made-up samples: tests never judge timings), and the command end to end, in process
/// and through stand-in executables.
@Suite("bench targets")
struct BenchTargetsTests {
    static let full = TargetSuite.targetInstructions
    static let objects = TargetSuite.targetObjects

    func sample(
        rate: Double, instructions: Int = full, peak: Double? = 50,
        encoded: Double = 8, digest: String = "d"
    ) -> TargetSample {
        TargetSample(
            mergeCpuSeconds: Double(instructions) / rate,
            instructionsMerged: instructions, encodedBytesPerInstruction: encoded,
            peakMemoryBytesPerInstruction: peak, replicaDigest: digest,
            changesetDigest: digest)
    }

    func cell(
        _ kind: WorkloadKind, _ column: TargetCell.Column, instructions: Int = full,
        objects: Int = objects
    ) -> TargetCell {
        TargetCell(
            kind: kind, column: column, instructions: instructions, objects: objects,
            seed: 1)
    }

    @Test("a round holds the four columns and the growth points of every workload")
    func cells() {
        let cells = TargetSuite.cells(instructions: Self.full, objects: Self.objects, seed: 1)
        #expect(cells.count == WorkloadKind.allCases.count * 8)
        #expect(Set(cells).count == cells.count)
        let list = cells.filter { $0.kind == .list }
        #expect(
            list.map(\.instructions) == [
                Self.full, Self.full, Self.full, Self.full,
                10_000, 10_000, 100_000, 100_000,
            ])
        let clientL = list.first { $0.column == .clientL10k }!
        #expect(
            clientL.benchArguments == [
                "--workload", "list", "--role", "client", "--clients", "10",
                "--instructions", "1000000", "--objects", "10000", "--seed", "1",
                "--local-instructions", "10000",
            ])
        #expect(list.first { $0.column == .serverK100 }!.clients == 100)
        // Below 10^4, "L = 10^4" is L = D.
        let small = TargetSuite.cells(instructions: 500, objects: 10, seed: 3)
        #expect(small.first { $0.column == .clientL10k }!.localInstructions == 500)
        #expect(TargetSuite.growthSizes(500) == [5, 50, 500])
    }

    /// Samples of one workload at the targets' size: the server at `k10` and `k100` M/s, the
    /// client with L = 10^4 at `client`, times growing as size^`exponent`, one round each.
    func workloadSamples(
        _ kind: WorkloadKind, k10: [Double], k100: [Double], client: [Double],
        exponent: Double, peak: Double = 60,
        objects: Int = objects
    ) -> [TargetCell: [TargetSample]] {
        var samples = [TargetCell: [TargetSample]]()
        let cell = { (column: TargetCell.Column, size: Int) in
            self.cell(kind, column, instructions: size, objects: objects)
        }
        samples[cell(.serverK10, Self.full)] = k10.map { sample(rate: $0 * 1e6, peak: peak) }
        samples[cell(.serverK100, Self.full)] = k100.map { sample(rate: $0 * 1e6) }
        samples[cell(.clientL10k, Self.full)] = client.map { sample(rate: $0 * 1e6) }
        samples[cell(.clientLD, Self.full)] = k10.map { sample(rate: $0 * 1e6) }
        for size in TargetSuite.growthSizes(Self.full).dropLast() {
            // time(size) = time(full) · (size / full)^exponent.
            let scale = pow(Double(size) / Double(Self.full), exponent)
            for column in [TargetCell.Column.serverK10, .clientLD] {
                samples[cell(column, size)] = k10.map {
                    sample(
                        rate: Double(size) / (Double(Self.full) / ($0 * 1e6) * scale),
                        instructions: size)
                }
            }
        }
        return samples
    }

    func check(_ checks: [TargetCheck], _ target: String) throws -> TargetCheck {
        try #require(checks.first { $0.target == target })
    }

    @Test("rates, the K = 10 / K = 100 ratio, the client's rate, growth, memory and bytes")
    func judging() throws {
        // list: K = 10 meets 1 M/s in every round; K = 100 misses; 2.5× apart.
        let samples = workloadSamples(
            .list, k10: [2.0, 2.2, 1.8], k100: [0.8, 0.9, 0.7],
            client: [3, 3, 3], exponent: 1.05)
        let checks = TargetSuite.checks(
            samples, instructions: Self.full, objects: Self.objects,
            seed: 1)
        let k10 = try check(checks, "rate-server-k10")
        #expect(k10.verdict == .met && k10.everyRound == true)
        #expect(abs(k10.median - 2.0) < 1e-9 && abs(k10.low - 1.8) < 1e-9)
        #expect(try check(checks, "rate-server-k100").verdict == .notMet)
        let ratio = try check(checks, "rate-ratio-server-k10-over-k100")
        #expect(abs(ratio.median - 2.5) < 1e-9 && ratio.verdict == .notMet && !ratio.atLeast)
        #expect(try check(checks, "rate-ratio-client-l10k-over-server-k10").verdict == .met)
        let growth = try check(checks, "growth-exponent-server-k10")
        #expect(abs(growth.median - 1.05) < 1e-9 && growth.verdict == .met)
        #expect(try check(checks, "growth-exponent-client-ld").verdict == .met)
        #expect(try check(checks, "peak-memory-highest-cell").verdict == .met)
        // Encoded bytes are a map target only.
        #expect(!checks.contains { $0.target == "encoded-bytes-server-k10" })

        // map-uniform: the median meets 5 M/s, one round does not; growth 1.2; 120 B/instr.
        let maps = workloadSamples(
            .mapUniform, k10: [5.5, 4.8, 5.2], k100: [5, 5, 5],
            client: [4, 4, 4], exponent: 1.2, peak: 120)
        let mapChecks = TargetSuite.checks(
            maps, instructions: Self.full,
            objects: Self.objects, seed: 1)
        let mapK10 = try check(mapChecks, "rate-server-k10")
        #expect(mapK10.verdict == .met && mapK10.everyRound == false)
        #expect(try check(mapChecks, "rate-server-k100").verdict == .met)
        #expect(try check(mapChecks, "rate-ratio-client-l10k-over-server-k10").verdict == .notMet)
        #expect(try check(mapChecks, "growth-exponent-server-k10").verdict == .notMet)
        let peak = try check(mapChecks, "peak-memory-highest-cell")
        #expect(peak.median == 120 && peak.verdict == .notMet)
        #expect(try check(mapChecks, "encoded-bytes-server-k10").verdict == .met)
        #expect(!mapChecks.contains { $0.target == "rate-ratio-server-k10-over-k100" })
    }

    @Test("at another size than the targets', nothing is judged")
    func notJudged() {
        let samples = workloadSamples(
            .churn, k10: [9], k100: [9], client: [9], exponent: 1,
            objects: 500)
        let checks = TargetSuite.checks(samples, instructions: Self.full, objects: 500, seed: 1)
        #expect(!checks.isEmpty)
        #expect(checks.allSatisfy { $0.verdict == .notJudged && $0.everyRound == nil })
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("targets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\r\n").dropLast()
    }

    @Test("in process: every cell of every round, the same digests each round, nothing judged")
    func inProcess() throws {
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let command = try BenchTargetsCommand.parse([
            "--in-process", "--workload", "churn", "--instructions", "300", "--objects", "40",
            "--rounds", "2", "--quiet", "--out", out.path,
        ])
        try command.run()
        let runs = try lines(out.appendingPathComponent("targets_runs.csv"))
        #expect(runs[0] == TargetReport.runColumns.joined(separator: ","))
        #expect(runs.count == 1 + 2 * 8)
        // Round 2 merges exactly what round 1 did.
        let digests = runs.dropFirst().map { $0.split(separator: ",").suffix(2).joined() }
        #expect(Array(digests[0..<8]) == Array(digests[8..<16]))
        #expect(runs[1].hasPrefix("1,candidate,churn,server-k10,server,10,300,,40,1,"))
        let checks = try lines(out.appendingPathComponent("targets.csv"))
        #expect(checks[0] == TargetCheck.csvColumns.joined(separator: ","))
        #expect(checks.count == 1 + 6)
        #expect(checks.dropFirst().allSatisfy { $0.hasSuffix(",not judged,") })
        #expect(
            !FileManager.default.fileExists(
                atPath: out.appendingPathComponent("targets_compare.csv").path))
    }

    @Test("a bench merge CSV row is read as RFC 4180: a quoted cell with a comma is one cell")
    func parsesMergeCSV() {
        let header = BenchRow.columns.joined(separator: ",")
        func row(workload: String) -> String {
            BenchRow.columns.map { column -> String in
                switch column {
                case "workload": workload
                case "merge_cpu_seconds": "0.250000"
                case "instructions_merged": "1000000"
                case "encoded_bytes_per_instruction": "8.10"
                case "peak_memory_bytes_per_instruction": ""
                case "replica_digest": "3ca96d1bedb6957e"
                case "changeset_digest": "00ff"
                default: "0"
                }
            }.joined(separator: ",")
        }
        let expected = TargetSample(
            mergeCpuSeconds: 0.25, instructionsMerged: 1_000_000,
            encodedBytesPerInstruction: 8.1, peakMemoryBytesPerInstruction: nil,
            replicaDigest: "3ca96d1bedb6957e", changesetDigest: "00ff")
        #expect(TargetSample.parse(csv: "\(header)\r\n\(row(workload: "list"))\r\n") == expected)
        // A trace's file name with a comma is quoted by the writer: one cell, not two.
        let quoted = row(workload: "\"a,b.jsonl\"")
        #expect(TargetSample.parse(csv: "\(header)\r\n\(quoted)\r\n") == expected)
        #expect(TargetSample.parse(csv: "\(header)\r\n") == nil)
        #expect(TargetSample.parse(csv: "\(header)\r\n\(row(workload: "a,b"))\r\n") == nil)
        #expect(TargetSample.parse(csv: "\(header)\r\n\"unclosed\r\n") == nil)
    }

    /// A stand-in for `syncsim`: answers `bench merge … --csv FILE` with a row whose merge
    /// time is `seconds` and whose digests are `digest`, or fails with `status`.
    func standIn(
        in directory: URL, name: String, seconds: String, digest: String,
        status: Int = 0
    ) throws -> String {
        let header = BenchRow.columns.joined(separator: ",")
        let row = BenchRow.columns.map { column -> String in
            switch column {
            case "merge_cpu_seconds": seconds
            case "instructions_merged": "1000"
            case "encoded_bytes_per_instruction": "8.00"
            case "peak_memory_bytes_per_instruction": "50.0"
            case "replica_digest", "changeset_digest": digest
            default: "0"
            }
        }.joined(separator: ",")
        let script = """
            #!/bin/sh
            if [ \(status) -ne 0 ]; then echo "merge failed: stand-in" >&2; exit \(status); fi
            while [ $# -gt 0 ]; do
              if [ "$1" = --csv ]; then printf '%s\\r\\n%s\\r\\n' '\(header)' '\(row)' > "$2"; fi
              shift
            done
            """
        let path = directory.appendingPathComponent(name).path
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    @Test("against a baseline: time ratios per cell, and digests that differ fail the run")
    func baseline() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fast = try standIn(in: directory, name: "fast", seconds: "0.001", digest: "aa")
        let slow = try standIn(in: directory, name: "slow", seconds: "0.004", digest: "aa")
        let other = try standIn(in: directory, name: "other", seconds: "0.004", digest: "bb")
        let out = directory.appendingPathComponent("out")
        let arguments = [
            "--workload", "map-zipf", "--instructions", "1000", "--rounds", "2",
            "--quiet", "--out", out.path,
        ]
        try BenchTargetsCommand.parse(arguments + ["--candidate", fast, "--baseline", slow])
            .run()
        let compare = try lines(out.appendingPathComponent("targets_compare.csv"))
        #expect(compare[0] == TargetReport.compareColumns.joined(separator: ","))
        #expect(compare.count == 1 + 8)
        #expect(compare[1] == "map-zipf,server-k10,1000,1000000,250000,0.2500,0.2500,0.2500,true")
        let runs = try lines(out.appendingPathComponent("targets_runs.csv"))
        // Round 1 runs the baseline first, round 2 the candidate.
        #expect(runs[1].hasPrefix("1,baseline,") && runs[2].hasPrefix("1,candidate,"))
        #expect(runs[17].hasPrefix("2,candidate,") && runs[18].hasPrefix("2,baseline,"))

        // A baseline that merges differently: the files are written, the exit status is 1.
        #expect(throws: ExitCode.failure) {
            try BenchTargetsCommand.parse(arguments + ["--candidate", fast, "--baseline", other])
                .run()
        }
        let differing = try lines(out.appendingPathComponent("targets_compare.csv"))
        #expect(
            differing.count == 1 + 8
                && differing.dropFirst().allSatisfy {
                    $0.hasSuffix(",false")
                })
    }

    @Test("a failing run stops the suite with status 1; bad options are usage errors")
    func failures() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let failing = try standIn(
            in: directory, name: "failing", seconds: "0.001", digest: "aa",
            status: 3)
        let out = directory.appendingPathComponent("out")
        #expect(throws: ExitCode.failure) {
            try BenchTargetsCommand.parse(["--candidate", failing, "--quiet", "--out", out.path])
                .run()
        }
        #expect(!FileManager.default.fileExists(atPath: out.path))
        for arguments in [
            ["--rounds", "0"], ["--instructions", "99"],
            ["--in-process", "--baseline", failing],
            ["--baseline", directory.appendingPathComponent("none").path],
        ] {
            #expect(throws: (any Error).self) { try BenchTargetsCommand.parse(arguments) }
        }
    }
}
