import Foundation
import Measurement
import MergeCore
import MergeWorkloads
import Testing

/// Small-input runs of every merge workload: deterministic digests, convergence where the
/// model promises it. Timing is measured by `syncsim bench merge`, never asserted here.
@Suite("Merge benchmark smoke")
struct BenchSmokeTests {
    static let kinds = WorkloadKind.allCases

    @Test("same seed, same inputs and same digests; another seed differs", arguments: kinds)
    func determinism(_ kind: WorkloadKind) throws {
        for role in MergeRole.allCases {
            let parameters = WorkloadParameters(kind: kind, clients: 4, objects: 200,
                                                instructions: 1_000, seed: 7)
            let first = try MergeBenchmark.run(MergeInputs.generate(parameters, role: role))
            let second = try MergeBenchmark.run(MergeInputs.generate(parameters, role: role))
            #expect(first.instructionsMerged == 1_000)
            #expect(first.allocations == nil)  // no counter given: not counted, not zero
            #expect(first.replicaDigest == second.replicaDigest)
            #expect(first.changesetDigest == second.changesetDigest)
            var other = parameters
            other.seed = 8
            let third = try MergeBenchmark.run(MergeInputs.generate(other, role: role))
            #expect(third.changesetDigest != first.changesetDigest)
        }
    }

    @Test("client role: the client's merged state equals the server's", arguments: kinds)
    func clientConverges(_ kind: WorkloadKind) throws {
        let parameters = WorkloadParameters(kind: kind, clients: 3, objects: 100,
                                            instructions: 600, localInstructions: 400, seed: 3)
        let inputs = MergeInputs.generate(parameters, role: .client)
        let measurement = try MergeBenchmark.run(inputs)
        #expect(measurement.replicaDigest == (try MergeBenchmark.serverViewOfClientInputs(inputs)))
    }

    /// Map and churn edits commute across upload orders (last writer wins, erase wins), so
    /// the server reaches one state whatever the order. Lists are only TP1, so they are not
    /// checked across more than two clients here.
    @Test("server role: upload order does not change the state",
          arguments: [WorkloadKind.mapUniform, .mapZipf, .churn])
    func serverOrderIndependent(_ kind: WorkloadKind) throws {
        let parameters = WorkloadParameters(kind: kind, clients: 5, objects: 50,
                                            instructions: 1_000, seed: 5)
        var inputs = MergeInputs.generate(parameters, role: .server)
        let forward = try MergeBenchmark.run(inputs)
        inputs.uploads.reverse()
        let backward = try MergeBenchmark.run(inputs)
        #expect(forward.replicaDigest == backward.replicaDigest)
    }

    @Test("server role with two clients converges for lists and text", arguments: [WorkloadKind.list, .textLike])
    func serverTwoClients(_ kind: WorkloadKind) throws {
        let parameters = WorkloadParameters(kind: kind, clients: 2, instructions: 600, seed: 9)
        var inputs = MergeInputs.generate(parameters, role: .server)
        let forward = try MergeBenchmark.run(inputs)
        inputs.uploads.reverse()
        let backward = try MergeBenchmark.run(inputs)
        #expect(forward.replicaDigest == backward.replicaDigest)
    }

    @Test("encoded map instructions stay within 16 bytes")
    func encodedSize() throws {
        let parameters = WorkloadParameters(kind: .mapUniform, clients: 10, instructions: 2_000)
        let measurement = try MergeBenchmark.run(MergeInputs.generate(parameters, role: .server))
        #expect(measurement.encodedBytesPerInstruction <= 16)
    }

    @Test("growth fit recovers a known exponent")
    func growthFit() throws {
        let sizes = [10_000, 100_000, 1_000_000].map(Double.init)
        let times = sizes.map { Double(UInt64(3 * pow($0, 1.5))) }
        let fit = try #require(LinearFit.logLog(sizes, times))
        #expect(abs(fit.slope - 1.5) < 1e-6)
    }
}

/// The JSON-lines trace format: the sample parses and replays; errors name line and field.
@Suite("Merge trace format")
struct BenchTraceTests {
    static let sample = """
        # base: schema and one object
        {"client":0,"changeset":1,"op":"add_table","table":1,"pk_field":0,"pk_type":"int"}
        {"client":0,"changeset":1,"op":"add_column","table":1,"field":1,"type":"int","nullable":true}
        {"client":0,"changeset":1,"op":"create_object","table":1,"pk":42}
        {"client":1,"ts":1700,"changeset":1,"op":"update","table":1,"pk":42,"field":1,"value":{"int":7}}
        {"client":2,"ts":1800,"changeset":1,"op":"update","table":1,"pk":42,"field":1,"value":{"int":8}}
        {"client":1,"ts":1900,"changeset":2,"op":"add_integer","table":1,"pk":42,"field":1,"increment":-1}
        """

    func parse(_ text: String) throws(TraceError) -> Trace {
        try TraceReader.parse(Data(text.utf8), file: "test.jsonl")
    }

    @Test("a trace parses into base and client changesets and replays in both roles")
    func parseAndReplay() throws {
        let trace = try parse(Self.sample)
        #expect(trace.base.count == 1)
        #expect(trace.base[0].instructions.count == 3)
        #expect(trace.clients.map(\.client) == [1, 2])
        #expect(trace.clients[0].changesets.count == 2)
        #expect(trace.clients[0].changesets[0].originFileIdent == 2)
        #expect(trace.instructionCount == 6)
        let server = try MergeBenchmark.run(MergeInputs.fromTrace(trace, name: "t", role: .server))
        #expect(server.instructionsMerged == 3)
        let clientInputs = try MergeInputs.fromTrace(trace, name: "t", role: .client)
        let client = try MergeBenchmark.run(clientInputs)
        #expect(client.replicaDigest == server.replicaDigest)
    }

    @Test("the checked-in sample trace parses")
    func checkedInSample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let trace = try TraceReader.read(path: root.appendingPathComponent("Data/traces/sample.jsonl").path)
        #expect(trace.clients.count >= 2)
        _ = try MergeBenchmark.run(MergeInputs.fromTrace(trace, name: "sample", role: .server))
    }

    @Test("errors name the file, the line and the field")
    func errors() {
        let cases: [(String, Int, String?)] = [
            (#"{"client":1,"ts":1,"changeset":1,"op":"update","table":1,"pk":1,"field":1}"#, 1, "value"),
            (#"{"client":1,"ts":1,"changeset":1,"op":"jump","table":1}"#, 1, "op"),
            (#"{"client":-1,"ts":1,"changeset":1,"op":"clear","table":1,"pk":1,"field":1}"#, 1, "client"),
            ("\n" + #"{"client":1,"ts":1,"changeset":1,"op":"clear","table":1,"pk":1,"field":1,"colour":2}"#, 2, "colour"),
            (#"{"client":1,"ts":1,"changeset":1,"op":"update","table":1,"pk":1,"field":1,"value":{"int":"7"}}"#, 1, "value"),
            (#"{"client":1,"ts":1,"changeset":2,"op":"clear","table":1,"pk":1,"field":1}"# + "\n"
                + #"{"client":1,"ts":1,"changeset":1,"op":"clear","table":1,"pk":1,"field":1}"#, 2, "changeset"),
            (#"{"client":1,"ts":1,"changeset":1,"op":"clear","table":1,"pk":1,"field":1}"# + "\n"
                + #"{"client":1,"ts":2,"changeset":1,"op":"clear","table":1,"pk":1,"field":1}"#, 2, "ts"),
            ("not json", 1, nil),
        ]
        for (text, line, field) in cases {
            do {
                _ = try parse(text)
                Issue.record("expected an error for \(text)")
            } catch {
                #expect(error.file == "test.jsonl")
                #expect(error.line == line)
                #expect(error.field == field)
                #expect(error.description.hasPrefix("test.jsonl:\(line):"))
            }
        }
    }
}
