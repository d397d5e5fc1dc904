//! Suites in the results database: which sweeps one `syncsim suite` made, under which names,
//! so that a later suite can be held against it sweep by sweep (`--baseline`) and its
//! `suite.csv` made again from the database alone.
//!
//! A suite is inserted with all its sweeps and runs in one transaction: everything, or none.

import GRDB

/// A suite as `syncsim suite` records it. Its sweeps are inserted beside it.
public struct SuiteRecord: Sendable, Equatable {
    /// The suite file's `name`.
    public var name: String
    /// The suite file's content hash (as `run.scenarioHash` hashes a scenario).
    public var fileHash: String
    public var gitCommit: String
    /// The digest over every sweep's digest, in the suite's order, as `syncsim suite` prints it.
    public var digest: String
    /// The sweeps' names, in the suite's order.
    public var sweepNames: [String]

    public init(
        name: String, fileHash: String, gitCommit: String, digest: String, sweepNames: [String]
    ) {
        self.name = name
        self.fileHash = fileHash
        self.gitCommit = gitCommit
        self.digest = digest
        self.sweepNames = sweepNames
    }
}

/// A suite as read back: its identifier, its record and its sweeps' identifiers, in order.
public struct StoredSuite: Sendable, Equatable {
    /// `suite.id`: increases with insertion order.
    public var suiteId: Int64
    public var record: SuiteRecord
    /// `sweep.id` of each of its sweeps, in the suite's order.
    public var sweepIds: [Int64]

    public init(suiteId: Int64, record: SuiteRecord, sweepIds: [Int64]) {
        self.suiteId = suiteId
        self.record = record
        self.sweepIds = sweepIds
    }
}

/// The suite tables `syncsim export` can write.
public enum SuiteTable: String, CaseIterable, Sendable {
    /// `suite.csv` of one suite: one row per sweep.
    case suite
    /// One row per sweep of every suite.
    case suites
}

extension ResultStore {
    /// Inserts a suite with its sweeps and their runs, in one transaction: all of it, or
    /// nothing. `sweeps` are in the suite's order, one per name of `suite.sweepNames`, each as
    /// `insert(sweep:runs:)` takes it (same preconditions).
    /// - Returns: the new `suite.id` and the new `sweep.id`s, in order.
    /// - Throws: `MeasurementError.databaseFailed` (306); the database then holds no part of
    ///   the suite.
    @discardableResult
    public func insert(
        suite: SuiteRecord, sweeps: [(sweep: SweepRecord, runs: [RunRecord])]
    ) throws(MeasurementError) -> (suiteId: Int64, sweepIds: [Int64]) {
        precondition(!sweeps.isEmpty, "an empty suite")
        precondition(suite.sweepNames.count == sweeps.count, "one name per sweep of a suite")
        precondition(Set(suite.sweepNames).count == sweeps.count, "a suite's names repeat")
        for (sweep, runs) in sweeps { Self.checkPreconditions(sweep, runs) }
        let runsCount = sweeps.reduce(0) { $0 + $1.runs.count }
        do {
            return try write { db in
                let sweepIds = try sweeps.map { try Self.insert($0.sweep, runs: $0.runs, in: db) }
                try db.execute(
                    sql: """
                        INSERT INTO suite (name, fileHash, gitCommit, digest, sweepsCount)
                        VALUES (?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        suite.name, suite.fileHash, suite.gitCommit, suite.digest, sweeps.count,
                    ])
                let suiteId = db.lastInsertedRowID
                let member = try db.cachedStatement(
                    sql: """
                        INSERT INTO suiteSweep (suiteId, ordinal, name, sweepId)
                        VALUES (?, ?, ?, ?)
                        """)
                for (ordinal, (name, sweepId)) in zip(suite.sweepNames, sweepIds).enumerated() {
                    try member.execute(arguments: [suiteId, ordinal, name, sweepId])
                }
                return (suiteId, sweepIds)
            }
        } catch {
            throw Self.classify(
                error, path: path,
                operation:
                    "inserting a suite of \(sweeps.count) sweeps and \(runsCount) runs")
        }
    }

    /// Every suite, in insertion order (none in a database from before the suite tables).
    /// - Throws: `MeasurementError` 302, 303 or 306 (a suite whose sweeps are not all there, or
    ///   out of order, is reported as 303).
    public func suites() throws(MeasurementError) -> [StoredSuite] {
        guard hasSuiteTables else { return [] }
        do {
            return try read { db in
                var suites: [StoredSuite] = []
                var positionById: [Int64: Int] = [:]
                var counts: [Int] = []
                for row in try Row.fetchAll(db, sql: "SELECT * FROM suite ORDER BY id") {
                    let id: Int64 = row["id"]
                    positionById[id] = suites.count
                    counts.append(Int(row["sweepsCount"] as Int64))
                    suites.append(
                        StoredSuite(
                            suiteId: id,
                            record: SuiteRecord(
                                name: row["name"], fileHash: row["fileHash"],
                                gitCommit: row["gitCommit"], digest: row["digest"], sweepNames: []),
                            sweepIds: []))
                }
                for row in try Row.fetchAll(
                    db, sql: "SELECT * FROM suiteSweep ORDER BY suiteId, ordinal")
                {
                    let suiteId: Int64 = row["suiteId"]
                    guard let at = positionById[suiteId],
                        Int(row["ordinal"] as Int64) == suites[at].sweepIds.count
                    else {
                        throw DatabaseError(
                            resultCode: .SQLITE_CORRUPT,
                            message: "suite \(suiteId) lists its sweeps out of order")
                    }
                    suites[at].record.sweepNames.append(row["name"])
                    suites[at].sweepIds.append(row["sweepId"])
                }
                for (suite, count) in zip(suites, counts) where suite.sweepIds.count != count {
                    throw DatabaseError(
                        resultCode: .SQLITE_CORRUPT,
                        message: "suite \(suite.suiteId) has \(suite.sweepIds.count) of its "
                            + "\(count) sweeps")
                }
                return suites
            }
        } catch {
            throw Self.classify(error, path: path, operation: "reading the suites")
        }
    }

    /// The last suite named `name`.
    /// - Throws: `MeasurementError.suiteNotFound` (320) when there is none; as `suites()`.
    public func suite(named name: String) throws(MeasurementError) -> StoredSuite {
        let all = try suites()
        guard let found = all.last(where: { $0.record.name == name }) else {
            throw .suiteNotFound(path: path, wanted: "named '\(name)'", available: Self.list(all))
        }
        return found
    }

    /// Suite `suiteId`, or the last one when nil.
    /// - Throws: `MeasurementError.suiteNotFound` (320) when there is none; as `suites()`.
    public func suite(_ suiteId: Int64?) throws(MeasurementError) -> StoredSuite {
        let all = try suites()
        let found = suiteId.map { id in all.first { $0.suiteId == id } } ?? all.last
        guard let found else {
            throw .suiteNotFound(
                path: path, wanted: suiteId.map(String.init) ?? "at all", available: Self.list(all))
        }
        return found
    }

    /// `1 nightly, 2 weekly`: the suites for a message.
    private static func list(_ suites: [StoredSuite]) -> [String] {
        suites.map { "\($0.suiteId) \($0.record.name)" }
    }

    /// The CSV text of `table`: `suites` lists every suite; `suite` is the `suite.csv` of suite
    /// `suiteId` (nil: the last), byte-identical to the one it wrote.
    public func csv(_ table: SuiteTable, suiteId: Int64? = nil) throws(MeasurementError) -> String {
        switch table {
        case .suites: return SuiteCSV.listText(try suites())
        case .suite:
            let suite = try suite(suiteId)
            return SuiteCSV.summaryText(suite: suite, sweeps: try sweeps(of: suite))
        }
    }

    /// The sweeps of `suite`, read back with their runs (without clients), in its order.
    /// - Throws: as `sweep(_:)`.
    public func sweeps(of suite: StoredSuite) throws(MeasurementError) -> [SuiteSweep] {
        var sweeps: [SuiteSweep] = []
        for (name, sweepId) in zip(suite.record.sweepNames, suite.sweepIds) {
            let (sweep, variants) = try sweep(sweepId)
            sweeps.append(SuiteSweep(name: name, sweep: sweep, variants: variants))
        }
        return sweeps
    }
}
