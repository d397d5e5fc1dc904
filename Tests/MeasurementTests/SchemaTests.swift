import Foundation
import GRDB
import Testing

@testable import Measurement

/// The migrations create exactly the documented schema (docs/results.md).
@Suite struct SchemaTests {
    @Test func migrationsCreateTheDocumentedTables() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        _ = try ResultStore(path: path)
        let queue = try DatabaseQueue(path: path)
        try queue.read { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables == [
                "clientMetric", "grdb_migrations", "run", "runMetric", "runTiming", "sqlite_sequence",
                "suite", "suiteSweep", "sweep", "sweepLabel", "sweepRun",
            ])
            let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
            #expect(applied == [
                "v1-run", "v1-runMetric", "v1-clientMetric", "v1-runTiming",
                "v2-sweep", "v2-sweepLabel", "v2-sweepRun", "v3-suite", "v3-suiteSweep",
            ])
            #expect(ResultStore.migrationIdentifiers == applied)
        }
    }

    /// `name type notnull pk` for every column of `table`.
    private func columns(_ table: String, _ db: Database) throws -> [String] {
        try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { row in
            let name: String = row["name"]
            let type: String = row["type"]
            let notNull: Int = row["notnull"]
            let primaryKey: Int = row["pk"]
            return "\(name) \(type) \(notNull) \(primaryKey)"
        }
    }

    @Test func columnsAreTypedNotNullAndKeyed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        _ = try ResultStore(path: path)
        try DatabaseQueue(path: path).read { db in
            #expect(try columns("run", db) == [
                "id INTEGER 0 1", "seed INTEGER 1 0", "scenarioName TEXT 1 0",
                "scenarioHash TEXT 1 0", "optionsJSON TEXT 1 0", "gitCommit TEXT 1 0",
                "toolchain TEXT 1 0", "traceDigest TEXT 1 0", "simulatedDurationNs INTEGER 1 0",
                "clientsCount INTEGER 1 0", "eventsCount INTEGER 1 0",
            ])
            #expect(try columns("runMetric", db) == [
                "runId INTEGER 1 1", "ordinal INTEGER 1 2", "name TEXT 1 0",
                "integerValue INTEGER 0 0", "realValue REAL 0 0",
            ])
            #expect(try columns("clientMetric", db) == [
                "runId INTEGER 1 1", "clientIndex INTEGER 1 2", "ordinal INTEGER 1 3",
                "name TEXT 1 0", "integerValue INTEGER 0 0", "realValue REAL 0 0",
            ])
            #expect(try columns("runTiming", db) == [
                "runId INTEGER 1 1", "ordinal INTEGER 1 2", "name TEXT 1 0",
                "integerValue INTEGER 0 0", "realValue REAL 0 0",
            ])
            #expect(try columns("sweep", db) == [
                "id INTEGER 0 1", "scenarioName TEXT 1 0", "scenarioHash TEXT 1 0",
                "optionsJSON TEXT 1 0", "gitCommit TEXT 1 0", "digest TEXT 1 0",
                "variantsCount INTEGER 1 0", "seedsCount INTEGER 1 0",
            ])
            #expect(try columns("sweepLabel", db) == [
                "sweepId INTEGER 1 1", "variant INTEGER 1 2", "ordinal INTEGER 1 3",
                "columnName TEXT 1 0", "value TEXT 1 0",
            ])
            #expect(try columns("sweepRun", db) == [
                "sweepId INTEGER 1 1", "variant INTEGER 1 2", "seedOrdinal INTEGER 1 3",
                "runId INTEGER 1 0",
            ])
            #expect(try columns("suite", db) == [
                "id INTEGER 0 1", "name TEXT 1 0", "fileHash TEXT 1 0", "gitCommit TEXT 1 0",
                "digest TEXT 1 0", "sweepsCount INTEGER 1 0",
            ])
            #expect(try columns("suiteSweep", db) == [
                "suiteId INTEGER 1 1", "ordinal INTEGER 1 2", "name TEXT 1 0",
                "sweepId INTEGER 1 0",
            ])
            for table in ["runMetric", "clientMetric", "runTiming"] {
                let foreignKeys = try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(table))")
                #expect(foreignKeys.count == 1)
                #expect(foreignKeys.first?["table"] == "run")
                #expect(foreignKeys.first?["from"] == "runId")
                #expect(foreignKeys.first?["on_delete"] == "CASCADE")
            }
            // A sweep's rows go with it, and a run's membership with the run.
            let sweepKeys = try ["sweepLabel", "sweepRun", "suiteSweep"].flatMap { table in
                try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(table))").map { row in
                    let target: String = row["table"]
                    let from: String = row["from"]
                    let onDelete: String = row["on_delete"]
                    return "\(table).\(from) -> \(target) \(onDelete)"
                }
            }.sorted()
            #expect(sweepKeys == [
                "suiteSweep.suiteId -> suite CASCADE", "suiteSweep.sweepId -> sweep CASCADE",
                "sweepLabel.sweepId -> sweep CASCADE", "sweepRun.runId -> run CASCADE",
                "sweepRun.sweepId -> sweep CASCADE",
            ])
            // The UNIQUE constraints on names, as indexes.
            let uniqueNames = try String.fetchAll(db, sql: """
                SELECT group_concat(info.name, ',') FROM sqlite_master AS m,
                    pragma_index_list(m.name) AS list, pragma_index_info(list.name) AS info
                WHERE m.type = 'table' AND list."unique" = 1 AND list.origin = 'u'
                GROUP BY list.name ORDER BY m.name
                """)
            #expect(uniqueNames.sorted() == [
                "runId", "runId,clientIndex,name", "runId,name", "runId,name", "suiteId,name",
                "sweepId",
            ])
        }
    }

    @Test func reopeningIsIdempotentAndReadOnlyWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        try ResultStore(path: path).insert(sampleRun())
        _ = try ResultStore(path: path)
        let before = bytes(at: path)
        let store = try ResultStore(path: path, access: .readOnly)
        #expect(try store.runs().count == 1)
        #expect(bytes(at: path) == before)
    }

    @Test func unsignedFiguresAreStoredAsTheirBitPattern() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        var run = sampleRun(seed: UInt64.max - 1)
        run.eventsCount = UInt64(Int64.max) + 5
        try ResultStore(path: path).insert(run)
        let stored = try DatabaseQueue(path: path).read { db in
            try Row.fetchOne(db, sql: "SELECT seed, eventsCount FROM run")!
        }
        #expect(stored["seed"] == Int64(-2))
        #expect(stored["eventsCount"] == Int64.min + 4)
        let csv = try ResultStore(path: path, access: .readOnly).csv(.runs)
        #expect(csv.contains("\r\n1,18446744073709551614,baseline,"))
        #expect(csv.contains(",9223372036854775812,17,"))
    }
}
