//! The results database: one SQLite file, written by `syncsim run`, read by `syncsim export`.
//!
//! Opening checks, in this order, before anything is written:
//! 1. the file exists (read-only access only; read-write creates it),
//! 2. it is an SQLite file (302) and passes `PRAGMA quick_check` (303),
//! 3. it is a SyncSim results database: empty, or its migrations include `v1-run` (309),
//! 4. it records no migration this build does not know (301), and, read-only, lacks none of the
//!    run tables' (305; a file from before the sweep tables reads as holding no sweep).
//! Read-write access then applies the missing migrations, each in its own transaction.
//! A run is inserted in one transaction: all of its rows, or none.
//! `transaction` makes several calls one transaction (a command's insert and the files made
//! from it: `CommandSupport.writeResults`).

import Foundation
import GRDB
import Synchronization

/// A SyncSim results database on disk.
public final class ResultStore: Sendable {
    /// How a results database is opened.
    public enum Access: Sendable {
        /// Create the file if needed and migrate it to the current schema.
        case readWrite
        /// The file must exist and already have the current schema; nothing is written.
        case readOnly
    }

    /// The path the store was opened with.
    public let path: String
    let queue: DatabaseQueue
    /// Whether the sweep tables exist: false only for a database from before them, opened
    /// read-only (it then reads as holding no sweep).
    let hasSweepTables: Bool
    /// Whether the suite tables exist, likewise (a database from before them holds no suite).
    let hasSuiteTables: Bool
    /// Whether `transaction` holds the connection: the store's reads and writes then run in
    /// its transaction (`read`, `write`).
    private let holding = Atomic<Bool>(false)

    /// Opens the results database at `path`.
    ///
    /// - Throws: `MeasurementError` 301, 302, 303, 304 (read-only only), 305 (read-only only),
    ///   306 or 309; see `docs/results.md`. A file that fails a check is left unchanged.
    public init(path: String, access: Access = .readWrite) throws(MeasurementError) {
        self.path = path
        if access == .readOnly, !FileManager.default.fileExists(atPath: path) {
            throw .databaseNotFound(path: path)
        }
        var configuration = Configuration()
        configuration.readonly = access == .readOnly
        configuration.foreignKeysEnabled = true
        // Another process writing its results into the same file holds it for its whole
        // `transaction` (the files it makes from it too): a writer waits for that.
        configuration.busyMode = .timeout(access == .readWrite ? 300 : 10)
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw Self.classify(error, path: path, operation: "opening the database")
        }
        let applied = try Self.checkSchema(queue, path: path, access: access)
        hasSweepTables = access == .readWrite || applied.contains("v2-sweepRun")
        hasSuiteTables = access == .readWrite || applied.contains("v3-suiteSweep")
        if access == .readWrite { try Self.migrate(queue, path: path) }
    }

    /// Applies the migrations the file lacks, each in its own transaction.
    ///
    /// Processes that open one new file at once (sweeps started together into one directory)
    /// each find every migration missing, and a later one's migration then fails on the table
    /// an earlier one made meanwhile (SQLITE_ERROR, "table run already exists"), or waits on
    /// its lock past the busy timeout. Such a failure is tried again, after 20 ms, with the
    /// applied migrations read afresh, up to 250 times (5 s; every failure means another
    /// process applied one); any other failure is reported at once.
    private static func migrate(_ queue: DatabaseQueue, path: String) throws(MeasurementError) {
        let migrator = makeMigrator()
        var attempt = 0
        while true {
            do {
                try migrator.migrate(queue)
                return
            } catch let error as DatabaseError
                where attempt < 250
                && [.SQLITE_ERROR, .SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode)
            {
                attempt += 1
                usleep(20_000)
            } catch {
                throw Self.classify(error, path: path, operation: "migrating the schema")
            }
        }
    }

    /// Checks 2–4 of the file's documentation.
    /// - Returns: the migrations the file records.
    private static func checkSchema(
        _ queue: DatabaseQueue, path: String, access: Access
    ) throws(MeasurementError) -> Set<String> {
        let known = Self.migrationIdentifiers
        let outcome: Result<Set<String>, MeasurementError>
        do {
            outcome = try queue.read { db -> Result<Set<String>, MeasurementError> in
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    let detail = "quick_check: " + check.prefix(3).joined(separator: "; ")
                    return .failure(.databaseCorrupt(path: path, detail: detail, cause: nil))
                }
                // GRDB creates `grdb_migrations` before its first migration's transaction: a
                // file holding only that table is one another process has begun to migrate.
                let tablesCount =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COUNT(*) FROM sqlite_master
                            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
                            """) ?? 0
                let applied = try Self.makeMigrator().appliedIdentifiers(db)
                if (tablesCount > 0 || access == .readOnly), !applied.contains(known[0]) {
                    return .failure(.foreignDatabase(path: path))
                }
                let unknown = applied.filter { !known.contains($0) }.sorted()
                if !unknown.isEmpty {
                    return .failure(.schemaTooNew(path: path, unknownMigrations: unknown))
                }
                let missing = migrationsRequiredForReading.filter { !applied.contains($0) }
                if access == .readOnly, !missing.isEmpty {
                    return .failure(.schemaTooOld(path: path, missingMigrations: missing))
                }
                return .success(applied)
            }
        } catch {
            throw Self.classify(error, path: path, operation: "reading the schema")
        }
        return try outcome.get()
    }

    // MARK: - Writing

    /// Inserts `run` with its metrics, client metrics and timings in one transaction.
    ///
    /// Preconditions (programmer errors, checked before anything is written): every metric name
    /// is lowerCamelCase ASCII and does not collide with a fixed CSV column, and no real value is
    /// NaN.
    /// - Returns: the new `run.id` (increases with every insert).
    /// - Throws: `MeasurementError.databaseFailed` (306) with the SQLite cause, for example a
    ///   constraint violation for two metrics of one run with the same name; the transaction is
    ///   rolled back and the database holds no part of the run.
    /// - Complexity: O(metrics + clients × client metrics + timings) statements.
    @discardableResult
    public func insert(_ run: RunRecord) throws(MeasurementError) -> Int64 {
        Self.checkPreconditions(run)
        do {
            return try write { db in try Self.insert(run, in: db) }
        } catch {
            throw Self.classify(
                error, path: path, operation: "inserting the run of seed \(run.seed)")
        }
    }

    static func insert(_ run: RunRecord, in db: Database) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO run (seed, scenarioName, scenarioHash, optionsJSON, gitCommit, toolchain,
                    traceDigest, simulatedDurationNs, clientsCount, eventsCount)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                Int64(bitPattern: run.seed), run.scenarioName, run.scenarioHash, run.optionsJSON,
                run.gitCommit, run.toolchain, run.traceDigest,
                Int64(bitPattern: run.simulatedDurationNs), Int64(run.clientsCount),
                Int64(bitPattern: run.eventsCount),
            ])
        let runId = db.lastInsertedRowID
        let runMetric = try db.cachedStatement(
            sql: """
                INSERT INTO runMetric (runId, ordinal, name, integerValue, realValue)
                VALUES (?, ?, ?, ?, ?)
                """)
        for (ordinal, metric) in run.metrics.enumerated() {
            try runMetric.execute(arguments: [runId, ordinal, metric.name] + values(metric))
        }
        let clientMetric = try db.cachedStatement(
            sql: """
                INSERT INTO clientMetric (runId, clientIndex, ordinal, name, integerValue, realValue)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        for client in run.clients {
            for (ordinal, metric) in client.metrics.enumerated() {
                let arguments: StatementArguments =
                    [runId, Int64(client.clientIndex), ordinal, metric.name] + values(metric)
                try clientMetric.execute(arguments: arguments)
            }
        }
        let runTiming = try db.cachedStatement(
            sql: """
                INSERT INTO runTiming (runId, ordinal, name, integerValue, realValue)
                VALUES (?, ?, ?, ?, ?)
                """)
        for (ordinal, metric) in run.timings.enumerated() {
            try runTiming.execute(arguments: [runId, ordinal, metric.name] + values(metric))
        }
        return runId
    }

    private static func values(_ metric: Metric) -> StatementArguments {
        switch metric.value {
        case .integer(let integer): [integer, nil]
        case .real(let real): [nil, real]
        }
    }

    static func checkPreconditions(_ run: RunRecord) {
        for metric in run.metrics {
            checkPrecondition(metric, reserved: ResultCSV.runsFixedColumns)
        }
        for client in run.clients {
            for metric in client.metrics {
                checkPrecondition(metric, reserved: ResultCSV.clientsFixedColumns)
            }
        }
        for metric in run.timings {
            checkPrecondition(metric, reserved: ResultCSV.timingsFixedColumns)
        }
    }

    private static func checkPrecondition(_ metric: Metric, reserved: [String]) {
        precondition(MetricName.isValid(metric.name), "metric name not lowerCamelCase ASCII")
        precondition(
            !reserved.contains(MetricName.snakeCase(metric.name)),
            "metric name collides with a fixed CSV column")
        if case .real(let real) = metric.value {
            precondition(!real.isNaN, "NaN metric value")
        }
    }

    // MARK: - Reading

    /// Every run, in insertion order, with its metrics in ordinal order and its clients in
    /// client-index order.
    /// - Throws: `MeasurementError` 302, 303 or 306 (a row that breaks the schema's rules is
    ///   reported as 303).
    public func runs() throws(MeasurementError) -> [StoredRun] {
        do {
            return try read { db in try Self.fetchRuns(db) }
        } catch {
            throw Self.classify(error, path: path, operation: "reading the runs")
        }
    }

    /// The CSV text of `table` (see `ResultCSV`), read in one transaction.
    public func csv(_ table: ResultTable) throws(MeasurementError) -> String {
        ResultCSV.text(table, runs: try runs())
    }

    /// The stored runs, in insertion order: all of them, or only those of sweep `sweepId` (then
    /// without their clients unless `clients`).
    static func fetchRuns(
        _ db: Database, sweepId: Int64? = nil, clients: Bool = true
    ) throws -> [StoredRun] {
        var runs: [StoredRun] = []
        var positionById: [Int64: Int] = [:]
        // Only the sweep's rows, when one is asked for.
        let members = "(SELECT runId FROM sweepRun WHERE sweepId = ?)"
        let runFilter = sweepId == nil ? "" : "WHERE id IN \(members)"
        let childFilter = sweepId == nil ? "" : "WHERE runId IN \(members)"
        let arguments: StatementArguments = sweepId.map { [$0] } ?? []
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM run \(runFilter) ORDER BY id", arguments: arguments)
        {
            let runId: Int64 = row["id"]
            let clientsCount: Int64 = row["clientsCount"]
            let record = RunRecord(
                seed: UInt64(bitPattern: row["seed"]), scenarioName: row["scenarioName"],
                scenarioHash: row["scenarioHash"], optionsJSON: row["optionsJSON"],
                gitCommit: row["gitCommit"], toolchain: row["toolchain"],
                traceDigest: row["traceDigest"],
                simulatedDurationNs: UInt64(bitPattern: row["simulatedDurationNs"]),
                clientsCount: UInt32(truncatingIfNeeded: clientsCount),
                eventsCount: UInt64(bitPattern: row["eventsCount"]))
            positionById[runId] = runs.count
            runs.append(StoredRun(runId: runId, record: record))
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM runMetric \(childFilter) ORDER BY runId, ordinal",
            arguments: arguments)
        {
            let position = try runPosition(of: row, in: positionById)
            runs[position].record.metrics.append(try metric(row))
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM runTiming \(childFilter) ORDER BY runId, ordinal",
            arguments: arguments)
        {
            let position = try runPosition(of: row, in: positionById)
            runs[position].record.timings.append(try metric(row))
        }
        guard clients else { return runs }
        let clientRows = try Row.fetchAll(
            db,
            sql: "SELECT * FROM clientMetric \(childFilter) "
                + "ORDER BY runId, clientIndex, ordinal",
            arguments: arguments)
        for row in clientRows {
            let position = try runPosition(of: row, in: positionById)
            let clientIndex = UInt32(truncatingIfNeeded: row["clientIndex"] as Int64)
            let entry = try metric(row)
            if runs[position].record.clients.last?.clientIndex != clientIndex {
                runs[position].record.clients.append(
                    ClientRecord(clientIndex: clientIndex, metrics: []))
            }
            runs[position].record.clients[runs[position].record.clients.count - 1].metrics.append(
                entry)
        }
        return runs
    }

    private static func runPosition(of row: Row, in positionById: [Int64: Int]) throws -> Int {
        let runId: Int64 = row["runId"]
        guard let position = positionById[runId] else {
            throw DatabaseError(
                resultCode: .SQLITE_CORRUPT, message: "a metric refers to the missing run \(runId)")
        }
        return position
    }

    /// A metric row, checked again after the read (the paired check of the write).
    private static func metric(_ row: Row) throws -> Metric {
        let name: String = row["name"]
        let integerValue: Int64? = row["integerValue"]
        let realValue: Double? = row["realValue"]
        switch (integerValue, realValue) {
        case (let integer?, nil): return .integer(name, integer)
        case (nil, let real?): return .real(name, real)
        default:
            throw DatabaseError(
                resultCode: .SQLITE_CORRUPT,
                message: "metric \(name) has both or neither of integerValue and realValue")
        }
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction: every insert and read of this store that `body` makes
    /// runs in it, and it commits only when `body` returns. When `body` throws (a file made
    /// from the rows it inserted could not be written), it is rolled back: the database holds
    /// none of those rows, so that doing it all again leaves it as doing it once would.
    /// Not reentrant, and for one thread: calls from another thread wait for it to end.
    /// - Throws: the error `body` throws, or `MeasurementError.databaseFailed` (306) when the
    ///   transaction cannot begin or commit.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        precondition(!holding.load(ordering: .relaxed), "ResultStore.transaction is not reentrant")
        var result: T?
        do {
            try queue.inTransaction { _ in
                holding.store(true, ordering: .relaxed)
                defer { holding.store(false, ordering: .relaxed) }
                result = try body()
                return .commit
            }
        } catch let error as DatabaseError {
            throw Self.classify(error, path: path, operation: "writing the results")
        }
        return result!
    }

    /// Reads in a transaction of its own, or in the one `transaction` holds.
    func read<T>(_ value: (Database) throws -> T) throws -> T {
        if holding.load(ordering: .relaxed) { return try queue.unsafeReentrantRead(value) }
        return try queue.read(value)
    }

    /// Writes in a transaction of its own, or in a savepoint of the one `transaction` holds
    /// (so that a failed write leaves it as it was, as a failed transaction leaves the file).
    func write<T>(_ updates: (Database) throws -> T) throws -> T {
        guard holding.load(ordering: .relaxed) else { return try queue.write(updates) }
        return try queue.unsafeReentrantWrite { db in
            var result: T?
            try db.inSavepoint {
                result = try updates(db)
                return .commit
            }
            return result!
        }
    }

    // MARK: - Errors

    /// Maps a GRDB error to the `MeasurementError` it means for `path`.
    static func classify(_ error: any Error, path: String, operation: String) -> MeasurementError {
        if let error = error as? MeasurementError { return error }
        let databaseError =
            error as? DatabaseError
            ?? DatabaseError(resultCode: .SQLITE_ERROR, message: String(describing: error))
        switch databaseError.resultCode {
        case .SQLITE_NOTADB:
            return .notADatabase(path: path, cause: databaseError)
        case .SQLITE_CORRUPT:
            let detail = databaseError.message ?? "database disk image is malformed"
            return .databaseCorrupt(path: path, detail: detail, cause: databaseError)
        default:
            return .databaseFailed(path: path, operation: operation, cause: databaseError)
        }
    }
}
