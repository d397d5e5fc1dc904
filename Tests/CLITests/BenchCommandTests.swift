import CAllocationCount
import Foundation
import SyncSimCLI
import Testing

/// `syncsim bench merge` end to end on tiny inputs: the CSV has its stable header and one row
/// per workload, and two runs give the same digests.
@Suite("bench merge command")
struct BenchCommandTests {
    func runToCSV(_ arguments: [String]) throws -> [String] {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("bench-\(UUID().uuidString).csv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let command = try BenchMergeCommand.parse(arguments + ["--csv", path])
        try command.run()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\r\n"))
        return text.components(separatedBy: "\r\n").dropLast()
    }

    @Test("CSV header, rows and deterministic digests")
    func csv() throws {
        let arguments = ["--workload", "all", "--clients", "3", "--instructions", "600",
                         "--objects", "100", "--seed", "4"]
        let lines = try runToCSV(arguments)
        let header: String = "workload,role,clients,instructions_merged,instructions_against,"
            + "merge_cpu_seconds,scan_cpu_seconds,index_cpu_seconds,walk_cpu_seconds,"
            + "write_back_cpu_seconds,instructions_per_second,encoded_bytes_per_instruction,"
            + "peak_memory_bytes_per_instruction,peak_resident_bytes,allocations_per_instruction,"
            + "growth_exponent,repetitions,"
            + "seed,replica_digest,changeset_digest"
        #expect(lines.first == header)
        #expect(lines.count == 6)
        let again = try runToCSV(arguments)
        let digests = { (lines: [String]) in lines.map { $0.split(separator: ",").suffix(2) } }
        #expect(digests(lines).map(Array.init) == digests(again).map(Array.init))
    }

    @Test("client role and trace replay")
    func clientAndTrace() throws {
        let lines = try runToCSV(["--workload", "churn", "--role", "client", "--instructions", "300",
                                  "--objects", "50"])
        #expect(lines.count == 2)
        #expect(lines[1].hasPrefix("churn,client,10,300,300,"))
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let trace = root.appendingPathComponent("Data/traces/sample.jsonl").path
        let traced = try runToCSV(["--trace", trace])
        #expect(traced.count == 2)
        #expect(traced[1].hasPrefix("sample.jsonl,server,3,"))
    }

    @Test("the allocation counter counts, and the CSV reports the merge's allocations")
    func allocations() throws {
        #if os(Linux)
        #expect(syncsim_allocation_counting_available() == 1)
        syncsim_allocation_counting_start()
        let before = syncsim_allocation_count()
        // Each array is a fresh heap object; the count is this thread's alone.
        let arrays = (0..<1_000).map { ContiguousArray(repeating: $0, count: 16) }
        let after = syncsim_allocation_count()
        syncsim_allocation_counting_stop()
        #expect(arrays.count == 1_000)
        #expect(after - before >= 1_000)
        let lines = try runToCSV(["--workload", "map-uniform", "--instructions", "2000",
                                  "--objects", "100"])
        let header = lines[0].split(separator: ",").map(String.init)
        let column = try #require(header.firstIndex(of: "allocations_per_instruction"))
        let value = try #require(Double(lines[1].split(separator: ",", omittingEmptySubsequences: false)
                                            .map(String.init)[column]))
        // A merge allocates (its buffers, rewritten changesets, scan columns). How much is a
        // figure of the build (a debug build allocates far more), not something to assert.
        #expect(value > 0)
        #else
        #expect(syncsim_allocation_counting_available() == 0)
        #endif
    }

    @Test("invalid options are rejected with a sentence")
    func validation() {
        #expect(throws: (any Error).self) { try BenchMergeCommand.parse(["--clients", "0"]) }
        #expect(throws: (any Error).self) {
            try BenchMergeCommand.parse(["--growth", "--trace", "x.jsonl"])
        }
        #expect(throws: (any Error).self) { try BenchMergeCommand.parse(["--workload", "graph"]) }
    }
}
