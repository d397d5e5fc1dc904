import Foundation
import GRDB
import Testing

@testable import Measurement

/// Suites in the results database: stored with all their sweeps and runs in one transaction,
/// read back in order, found by name (the last of that name), and refused with 320.
@Suite struct SuiteStoreTests {
    /// A sweep of one variant over `seeds`, its runs' metrics depending on `offset`.
    private func sweep(_ seeds: [UInt64], offset: Int64 = 0) -> (SweepRecord, [RunRecord]) {
        let record = SweepRecord(
            scenarioName: "suite", scenarioHash: "ab12", optionsJSON: #"{"seeds":"1-2"}"#,
            gitCommit: "c1ebcc0", digest: String(format: "%016llx", offset), seeds: seeds,
            variantLabels: [[SweepLabel(column: "reset_mode", value: "manual")]])
        let runs = seeds.map { seed in
            var run = sampleRun(seed: seed)
            run.metrics = [.integer("passed", 1), .integer("writesMade", Int64(seed) + offset)]
            run.eventsCount = 100 * seed
            run.timings = [.real("wallSeconds", 0.5)]
            return run
        }
        return (record, runs)
    }

    private func suite(_ name: String, _ sweeps: [String]) -> SuiteRecord {
        SuiteRecord(
            name: name, fileHash: "feed", gitCommit: "c1ebcc0", digest: "0123456789abcdef",
            sweepNames: sweeps)
    }

    @Test func aSuiteIsStoredWithItsSweepsAndReadBackInOrder() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        try store.insert(sampleRun(seed: 9))  // a plain run first: part of no sweep
        let (a, b) = (sweep([1, 2]), sweep([3], offset: 7))
        let (suiteId, sweepIds) = try store.insert(
            suite: suite("nightly", ["b-first", "a-second"]), sweeps: [b, a])
        #expect(suiteId == 1)
        #expect(sweepIds == [1, 2])
        let (againId, _) = try store.insert(suite: suite("nightly", ["only"]), sweeps: [a])
        try store.insert(suite: suite("other", ["x"]), sweeps: [b])

        let all = try store.suites()
        #expect(all.map(\.suiteId) == [1, 2, 3])
        #expect(all[0].record == suite("nightly", ["b-first", "a-second"]))
        #expect(all[0].sweepIds == [1, 2])
        // By name: the last suite of that name.
        #expect(try store.suite(named: "nightly").suiteId == againId)
        let sweeps = try store.sweeps(of: all[0])
        #expect(sweeps.map(\.name) == ["b-first", "a-second"])
        #expect(sweeps.map(\.sweep.record.seeds) == [[3], [1, 2]])
        #expect(sweeps.map(\.runsPassed) == [1, 2])
        #expect(sweeps.map(\.events) == [300, 300])
        #expect(sweeps.map(\.runSeconds) == [0.5, 1.0])

        let text = SuiteCSV.summaryText(suite: all[0], sweeps: sweeps)
        #expect(
            text == CSV.line(SuiteCSV.summaryColumns)
                + "1,nightly,b-first,1,suite,ab12,1,1,1,1,300,0000000000000007\r\n"
                + "1,nightly,a-second,2,suite,ab12,1,2,2,2,300,0000000000000000\r\n")

        let missing = measurementError { _ = try store.suite(named: "weekly") }
        #expect(missing?.code == 320)
        #expect(missing?.message.contains("its suites: 1 nightly, 2 nightly, 3 other") == true)
        #expect(try store.suite(nil).suiteId == 3)
        #expect(measurementError { _ = try store.suite(Int64(4)) }?.code == 320)
        #expect(
            try store.csv(.suites)
                == CSV.line(SuiteCSV.listColumns)
                + "1,nightly,feed,c1ebcc0,0123456789abcdef,0,b-first,1\r\n"
                + "1,nightly,feed,c1ebcc0,0123456789abcdef,1,a-second,2\r\n"
                + "2,nightly,feed,c1ebcc0,0123456789abcdef,0,only,3\r\n"
                + "3,other,feed,c1ebcc0,0123456789abcdef,0,x,4\r\n")
    }

    @Test func aFailingSweepLeavesNoPartOfTheSuite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        var (broken, brokenRuns) = sweep([5])
        // Two client rows of one client with the same metric: the constraint fails late, in
        // the suite's second sweep.
        brokenRuns[0].clients = [
            ClientRecord(clientIndex: 1, metrics: [.integer("uploadsCount", 1)]),
            ClientRecord(clientIndex: 1, metrics: [.integer("uploadsCount", 2)]),
        ]
        broken.digest = "ffffffffffffffff"
        let error = measurementError {
            try store.insert(
                suite: suite("nightly", ["good", "bad"]),
                sweeps: [sweep([1, 2]), (broken, brokenRuns)])
        }
        #expect(error?.code == 306)
        #expect(error?.message.contains("inserting a suite of 2 sweeps and 3 runs failed") == true)
        let counts = try DatabaseQueue(path: path).read { db in
            try ["run", "sweep", "sweepRun", "suite", "suiteSweep"].map { table in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)")!
            }
        }
        #expect(counts == [0, 0, 0, 0, 0])
        #expect(try store.suites().isEmpty)
    }

    @Test func aDatabaseFromBeforeSuitesHoldsNone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        try ResultStore(path: path).insert(sampleRun())
        // As a build from before the suite tables left it.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE suiteSweep; DROP TABLE suite")
            try db.execute(
                sql: "DELETE FROM grdb_migrations WHERE identifier IN ('v3-suite', 'v3-suiteSweep')"
            )
        }
        let store = try ResultStore(path: path, access: .readOnly)
        #expect(try store.suites().isEmpty)
        #expect(measurementError { _ = try store.suite(named: "nightly") }?.code == 320)
        #expect(try store.runs().count == 1)
    }
}
