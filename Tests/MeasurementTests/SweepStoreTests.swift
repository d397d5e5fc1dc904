import Foundation
import GRDB
import Testing

@testable import Measurement

/// Sweeps in the results database: stored with their runs in one transaction, read back as the
/// variants their files were written from, listed, and refused with 310 when absent.
@Suite struct SweepStoreTests {
    /// A run of seed `seed` whose metrics depend on the seed and on `variant`: a sweep's run.
    private func run(_ seed: UInt64, variant: Int, scenario: String = "sweep") -> RunRecord {
        var record = sampleRun(seed: seed)
        record.scenarioName = scenario
        record.metrics = [
            .integer("writesMade", Int64(seed) * 10 + Int64(variant)),
            .real("resetsPerClientPerDay", Double(seed) / 8 + Double(variant) * 0.5),
        ]
        return record
    }

    private func labels(_ mode: String) -> [SweepLabel] {
        [
            SweepLabel(column: "reset_mode", value: mode),
            SweepLabel(column: "workload.listPercent", value: "10"),
        ]
    }

    /// Two variants × three seeds, variant-major.
    private func sweep(
        seeds: [UInt64] = [4, 5, 6], scenario: String = "sweep"
    ) -> (SweepRecord, [RunRecord]) {
        let modes = ["recoverUnsyncedChanges", "discardUnsyncedChanges"]
        let record = SweepRecord(
            scenarioName: scenario, scenarioHash: "ab12", optionsJSON: #"{"seeds":"4-6"}"#,
            gitCommit: "c1ebcc0", digest: "00ff00ff00ff00ff", seeds: seeds,
            variantLabels: modes.map(labels))
        let runs = modes.indices.flatMap { variant in
            seeds.map { run($0, variant: variant, scenario: scenario) }
        }
        return (record, runs)
    }

    @Test func aSweepReadBackGivesTheFilesItWasWrittenFrom() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        try store.insert(sampleRun(seed: 1))  // a plain run before it: not part of the sweep
        let (record, runs) = sweep()
        let sweepId = try store.insert(sweep: record, runs: runs)
        #expect(sweepId == 1)

        let (stored, variants) = try store.sweep(sweepId)
        #expect(stored.record == record)
        #expect(stored.runIds == Array(2...7))
        #expect(variants.map(\.labels) == record.variantLabels)
        #expect(
            variants.flatMap(\.runs)
                == runs.map { run in
                    var withoutClients = run
                    withoutClients.clients = []
                    return withoutClients
                })
        let written = [
            SweepVariant(labels: labels("recoverUnsyncedChanges"), runs: Array(runs[0..<3])),
            SweepVariant(labels: labels("discardUnsyncedChanges"), runs: Array(runs[3..<6])),
        ]
        #expect(try store.csv(.sweep, sweepId: sweepId) == SweepCSV.summaryText(written))
        #expect(try store.csv(.sweepPaired, sweepId: sweepId) == SweepCSV.pairedText(written))
        // The paired file has rows: the variants differ, so the test compares something.
        #expect(SweepCSV.pairedText(written).split(separator: "\r\n").count == 3)
        // The runs themselves are stored whole, clients included.
        #expect(try store.runs().map(\.record) == [sampleRun(seed: 1)] + runs)
    }

    @Test func twoSweepsInOneDatabaseAreReadAndListedApart() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        let (first, firstRuns) = sweep(seeds: [4, 5, 6], scenario: "first")
        let (second, secondRuns) = sweep(seeds: [9, 10], scenario: "second")
        #expect(try store.insert(sweep: first, runs: firstRuns) == 1)
        #expect(try store.insert(sweep: second, runs: secondRuns) == 2)

        #expect(try store.sweep(1).sweep.record == first)
        #expect(try store.sweep(2).sweep.record == second)
        #expect(try store.sweep().sweep.sweepId == 2)
        #expect(
            try store.sweep(1).variants.flatMap(\.runs).map(\.scenarioName).allSatisfy {
                $0 == "first"
            })
        #expect(try store.csv(.sweep) == store.csv(.sweep, sweepId: 2))
        #expect(try store.csv(.sweep, sweepId: 1) != store.csv(.sweep, sweepId: 2))

        let reader = try ResultStore(path: path, access: .readOnly)
        #expect(
            try reader.csv(.sweeps) == """
                sweep_id,scenario_name,scenario_hash,options_json,git_commit,digest,variants,seeds,runs,first_seed,last_seed,first_run_id,last_run_id,label_columns\r
                1,first,ab12,"{""seeds"":""4-6""}",c1ebcc0,00ff00ff00ff00ff,2,3,6,4,6,1,6,reset_mode;workload.listPercent\r
                2,second,ab12,"{""seeds"":""4-6""}",c1ebcc0,00ff00ff00ff00ff,2,2,4,9,10,7,10,reset_mode;workload.listPercent\r

                """)
    }

    @Test func aMissingSweepIsError310NamingTheSweepsThereAre() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        try store.insert(sampleRun())
        let none = measurementError { _ = try store.sweep() }
        #expect(none?.code == 310)
        #expect(
            none?.message.hasPrefix("\(path) holds no sweep: only `syncsim sweep` records one")
                == true)
        #expect(try store.csv(.sweeps).split(separator: "\r\n").count == 1)

        let (record, runs) = sweep()
        try store.insert(sweep: record, runs: runs)
        try store.insert(sweep: record, runs: runs)
        let missing = measurementError { _ = try store.csv(.sweepPaired, sweepId: 3) }
        #expect(missing?.code == 310)
        guard case .sweepNotFound(_, let sweepId, let available) = missing else {
            Issue.record("expected sweepNotFound, got \(String(describing: missing))")
            return
        }
        #expect(sweepId == 3)
        #expect(available == [1, 2])
        #expect(missing?.message.contains("holds no sweep 3 (its sweeps: 1, 2)") == true)
    }

    @Test func aFailingSweepInsertLeavesNoRunAndNoSweep() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        try store.insert(sampleRun(seed: 1))
        var (record, runs) = sweep()
        // The fifth run breaks a UNIQUE constraint: four runs are in when it fails.
        runs[4].clients.append(ClientRecord(clientIndex: 1, metrics: [.integer("uploadsCount", 1)]))
        let error = measurementError { try store.insert(sweep: record, runs: runs) }
        #expect(error?.code == 306)
        #expect(error?.message.hasPrefix("\(path): inserting a sweep of 6 runs failed") == true)
        #expect(try store.runs().map(\.record) == [sampleRun(seed: 1)])
        #expect(try store.sweeps().isEmpty)
        try DatabaseQueue(path: path).read { db in
            for table in ["sweep", "sweepLabel", "sweepRun"] {
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)")
                #expect(count == 0)
            }
        }
        record.digest = "1111222233334444"
        (_, runs) = sweep()
        // The rollback took the identifiers' counters back too: the next sweep is 1 again.
        #expect(try store.insert(sweep: record, runs: runs) == 1)
        #expect(try store.sweep().sweep.runIds == Array(2...7))
        #expect(try store.sweep().sweep.record == record)
    }

    @Test func aDatabaseFromBeforeTheSweepTablesIsReadAndUpgradedOnWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("older.sqlite")
        try ResultStore(path: path).insert(sampleRun())
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE sweepRun; DROP TABLE sweepLabel; DROP TABLE sweep")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v2-%'")
        }
        let before = bytes(at: path)
        let reader = try ResultStore(path: path, access: .readOnly)
        #expect(try reader.runs().map(\.record) == [sampleRun()])
        #expect(try reader.sweeps().isEmpty)
        #expect(try reader.csv(.sweeps) == CSV.line(SweepCSV.listColumns))
        #expect(measurementError { _ = try reader.sweep() }?.code == 310)
        #expect(bytes(at: path) == before)

        let (record, runs) = sweep()
        #expect(try ResultStore(path: path).insert(sweep: record, runs: runs) == 1)
        #expect(try ResultStore(path: path, access: .readOnly).sweep().variants.count == 2)
    }

    @Test func aSweepWithARunMissingIsReportedAsDamaged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        let (record, runs) = sweep()
        try store.insert(sweep: record, runs: runs)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DELETE FROM sweepRun WHERE variant = 1 AND seedOrdinal = 1")
        }
        let error = measurementError { _ = try store.sweep() }
        #expect(error?.code == 303)
        #expect(error?.message.contains("variant 1 did not run the seeds of variant 0") == true)
        // Deleting a run takes its membership with it (ON DELETE CASCADE): still not a grid.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DELETE FROM run WHERE id = 6")
        }
        #expect(measurementError { _ = try store.sweeps() }?.code == 303)
    }
}
