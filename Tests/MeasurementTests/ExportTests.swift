import Foundation
import Testing

@testable import Measurement

/// Insert, read back and export: exact bytes.
@Suite struct ExportTests {
    static let runsGolden =
        "run_id,seed,scenario_name,scenario_hash,options_json,git_commit,toolchain,trace_digest,"
        + "simulated_duration_ns,clients_count,events_count,merges_count,latency_ns_mean,"
        + "changeset_bytes_max\r\n"
        + #"1,42,baseline,ab12,"{""clientsCount"":2,""dropRatio"":""1/10""}",c1ebcc0,Swift 6.3.1,"#
        + "00ff,5000000000,2,1234,17,1234.500000,512\r\n"
    static let clientsGolden =
        "run_id,seed,client_index,uploads_count,latency_ns_p95\r\n"
        + "1,42,0,5,1500.250000\r\n"
        + "1,42,1,7,99.125000\r\n"
    static let timingsGolden =
        "run_id,seed,wall_seconds_total,wall_ns_per_event\r\n"
        + "1,42,0.250000,2026\r\n"

    @Test func roundTripGivesTheSameRecordAndGoldenCSV() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        let runId = try store.insert(sampleRun())
        #expect(runId == 1)
        #expect(try store.runs() == [StoredRun(runId: 1, record: sampleRun())])
        let reader = try ResultStore(path: path, access: .readOnly)
        #expect(Array(try reader.csv(.runs).utf8) == Array(Self.runsGolden.utf8))
        #expect(Array(try reader.csv(.clients).utf8) == Array(Self.clientsGolden.utf8))
        #expect(Array(try reader.csv(.timings).utf8) == Array(Self.timingsGolden.utf8))
    }

    @Test func emptyDatabaseExportsTheHeaderOnly() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        #expect(try store.csv(.runs) == CSV.line(ResultCSV.runsFixedColumns))
        #expect(try store.csv(.clients) == "run_id,seed,client_index\r\n")
        #expect(try store.csv(.timings) == "run_id,seed\r\n")
    }

    @Test func identicalRunsInTwoDatabasesExportIdenticalBytes() throws {
        let directory = try TemporaryDirectory()
        var outputs: [[String]] = []
        for name in ["first.sqlite", "second.sqlite"] {
            let store = try ResultStore(path: directory.file(name))
            for seed: UInt64 in [7, 8, 9] { try store.insert(sampleRun(seed: seed)) }
            outputs.append(try ResultTable.allCases.map { try store.csv($0) })
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0][0].split(separator: "\r\n").count == 4)
    }

    @Test func differentMetricSetsExportTheirUnionInFirstSeenOrder() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        var first = sampleRun(seed: 1)
        first.metrics = [.integer("alphaCount", 1), .integer("betaCount", 2)]
        first.clients = [ClientRecord(clientIndex: 0, metrics: [.integer("sentCount", 3)])]
        first.timings = []
        var second = sampleRun(seed: 2)
        second.metrics = [.integer("betaCount", 20), .real("gammaNs", 0.5)]
        second.clients = [ClientRecord(clientIndex: 4, metrics: [.integer("receivedCount", 9)])]
        second.timings = [.real("wallSecondsTotal", 1)]
        try store.insert(first)
        try store.insert(second)
        let runs = try store.csv(.runs).split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).suffix(3).joined(separator: ",")
        }
        #expect(runs == ["alpha_count,beta_count,gamma_ns", "1,2,", ",20,0.500000"])
        #expect(try store.csv(.clients) ==
            "run_id,seed,client_index,sent_count,received_count\r\n1,1,0,3,\r\n2,2,4,,9\r\n")
        #expect(try store.csv(.timings) == "run_id,seed,wall_seconds_total\r\n1,1,\r\n2,2,1.000000\r\n")
    }

    @Test func fieldsThatNeedQuotingSurviveTheExport() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        var run = sampleRun()
        run.scenarioName = "a,b \"c\"\r\nd"
        run.metrics = []
        try store.insert(run)
        let csv = try store.csv(.runs)
        #expect(csv.contains("\r\n1,42,\"a,b \"\"c\"\"\r\nd\",ab12,"))
        #expect(try store.runs()[0].record.scenarioName == run.scenarioName)
    }
}

@Suite struct CSVFormattingTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("", ""),
        ("a,b", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("\"", "\"\"\"\""),
        ("line\nbreak", "\"line\nbreak\""),
        ("carriage\rreturn", "\"carriage\rreturn\""),
        ("crlf\r\n", "\"crlf\r\n\""),
        ("semi;colon and spaces", "semi;colon and spaces"),
        ("é, ü", "\"é, ü\""),
    ])
    func rfc4180Quoting(input: String, expected: String) {
        #expect(CSV.field(input) == expected)
    }

    @Test func lineJoinsWithCommasAndEndsWithCRLF() {
        #expect(CSV.line(["a", "b,c", ""]) == "a,\"b,c\",\r\n")
        #expect(CSV.line([]) == "\r\n")
    }

    @Test(arguments: [
        (0.0, "0.000000"),
        (-0.0, "0.000000"),
        (1.5, "1.500000"),
        (-1.5, "-1.500000"),
        (0.1, "0.100000"),
        (2.0 / 3.0, "0.666667"),
        (-0.0000004, "0.000000"),
        (-0.0000006, "-0.000001"),
        (0.9999996, "1.000000"),
        (123456789.123456789, "123456789.123457"),
        (1e15, "1000000000000000.000000"),
        (1e20, "1e+20"),
        (Double.infinity, "inf"),
        (-Double.infinity, "-inf"),
        (Double.nan, "nan"),
    ])
    func realsHaveSixDecimals(value: Double, expected: String) {
        #expect(CSV.real(value) == expected)
    }

    @Test func metricNamesBecomeSnakeCase() {
        #expect(MetricName.snakeCase("latencyNsMax") == "latency_ns_max")
        #expect(MetricName.snakeCase("p95") == "p95")
        #expect(MetricName.snakeCase("changesetBytesP99") == "changeset_bytes_p99")
        #expect(MetricName.isValid("latencyNsMax"))
        #expect(!MetricName.isValid("LatencyNs"))
        #expect(!MetricName.isValid("latency_ns"))
        #expect(!MetricName.isValid(""))
    }

    @Test func canonicalJSONSortsKeys() throws {
        struct Options: Encodable {
            var zeta = 1
            var alpha = "a/b"
        }
        #expect(try RunRecord.canonicalJSON(Options()) == #"{"alpha":"a/b","zeta":1}"#)
    }
}
