//! Sweeps in the results database: which runs a sweep made, in which variant and seed order,
//! and the labels of its variants, so that `sweep.csv` and `sweep_paired.csv` can be made
//! again from the database alone (`syncsim export --table sweep|sweep_paired|sweeps`).
//!
//! A sweep is inserted with its runs in one transaction: the runs, the `sweep` row, its labels
//! and its `sweepRun` rows, or none of them. Reading a sweep back gives its variants in order,
//! each with its runs in seed order: the input `SweepCSV` was given when the sweep wrote its
//! files, so the files made again are byte-identical to them.

import GRDB

/// A sweep as `syncsim sweep` records it: what it ran, and the labels of its variants. Its
/// runs are inserted beside it (`ResultStore.insert(sweep:runs:)`).
public struct SweepRecord: Sendable, Equatable {
    public var scenarioName: String
    /// The scenario's content hash (as in `run.scenarioHash`).
    public var scenarioHash: String
    /// The sweep's options, canonical JSON (`RunRecord.canonicalJSON`).
    public var optionsJSON: String
    public var gitCommit: String
    /// The digest over every run's trace digest, as `syncsim sweep` prints it.
    public var digest: String
    /// The seeds, in order: every variant ran these.
    public var seeds: [UInt64]
    /// Each variant's labels, in variant order; every variant has the same columns.
    public var variantLabels: [[SweepLabel]]

    public init(
        scenarioName: String, scenarioHash: String, optionsJSON: String, gitCommit: String,
        digest: String, seeds: [UInt64], variantLabels: [[SweepLabel]]
    ) {
        self.scenarioName = scenarioName
        self.scenarioHash = scenarioHash
        self.optionsJSON = optionsJSON
        self.gitCommit = gitCommit
        self.digest = digest
        self.seeds = seeds
        self.variantLabels = variantLabels
    }
}

/// A sweep as read back: its identifier, its record and the identifiers of its runs.
public struct StoredSweep: Sendable, Equatable {
    /// `sweep.id`: increases with insertion order.
    public var sweepId: Int64
    public var record: SweepRecord
    /// `run.id` of each run, variant-major, seeds in order.
    public var runIds: [Int64]

    public init(sweepId: Int64, record: SweepRecord, runIds: [Int64]) {
        self.sweepId = sweepId
        self.record = record
        self.runIds = runIds
    }
}

/// The sweep tables `syncsim export` can write.
public enum SweepTable: String, CaseIterable, Sendable {
    /// `sweep.csv` of one sweep: per variant and metric, the statistics over its seeds.
    case sweep
    /// `sweep_paired.csv` of one sweep: each variant minus the first, seed by seed.
    case sweepPaired = "sweep_paired"
    /// One row per sweep of the database: what it ran and which runs it made.
    case sweeps
}

extension ResultStore {
    /// Inserts `runs` and the sweep that made them in one transaction: all of it, or nothing.
    /// Same preconditions as `insert(_:)`, and `runs` are the sweep's, variant-major with the
    /// seeds of `sweep.seeds` in order in every variant.
    /// - Returns: the new `sweep.id`.
    /// - Throws: `MeasurementError.databaseFailed` (306); the database then holds no part of
    ///   the sweep.
    @discardableResult
    public func insert(sweep: SweepRecord, runs: [RunRecord]) throws(MeasurementError) -> Int64 {
        Self.checkPreconditions(sweep, runs)
        do {
            return try write { db in try Self.insert(sweep, runs: runs, in: db) }
        } catch {
            throw Self.classify(
                error, path: path,
                operation: "inserting a sweep of \(runs.count) runs")
        }
    }

    /// The preconditions of `insert(sweep:runs:)`, checked before anything is written.
    static func checkPreconditions(_ sweep: SweepRecord, _ runs: [RunRecord]) {
        precondition(!sweep.seeds.isEmpty && !sweep.variantLabels.isEmpty, "an empty sweep")
        precondition(
            runs.count == sweep.seeds.count * sweep.variantLabels.count,
            "a sweep's runs are one per variant and seed")
        precondition(
            runs.indices.allSatisfy { runs[$0].seed == sweep.seeds[$0 % sweep.seeds.count] },
            "a sweep's runs are variant-major, seeds in order")
        let columns = sweep.variantLabels[0].map(\.column)
        precondition(
            sweep.variantLabels.allSatisfy { $0.map(\.column) == columns },
            "the variants of a sweep have different label columns")
        for run in runs { Self.checkPreconditions(run) }
    }

    /// Inserts a sweep and its runs within the transaction of `db`; returns its `sweep.id`.
    static func insert(_ sweep: SweepRecord, runs: [RunRecord], in db: Database) throws -> Int64 {
        let runIds = try runs.map { try Self.insert($0, in: db) }
        try db.execute(
            sql: """
                INSERT INTO sweep (scenarioName, scenarioHash, optionsJSON, gitCommit,
                    digest, variantsCount, seedsCount)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                sweep.scenarioName, sweep.scenarioHash, sweep.optionsJSON,
                sweep.gitCommit, sweep.digest, sweep.variantLabels.count, sweep.seeds.count,
            ])
        let sweepId = db.lastInsertedRowID
        let label = try db.cachedStatement(
            sql: """
                INSERT INTO sweepLabel (sweepId, variant, ordinal, columnName, value)
                VALUES (?, ?, ?, ?, ?)
                """)
        for (variant, labels) in sweep.variantLabels.enumerated() {
            for (ordinal, entry) in labels.enumerated() {
                try label.execute(
                    arguments: [sweepId, variant, ordinal, entry.column, entry.value])
            }
        }
        let member = try db.cachedStatement(
            sql: """
                INSERT INTO sweepRun (sweepId, variant, seedOrdinal, runId)
                VALUES (?, ?, ?, ?)
                """)
        for (position, runId) in runIds.enumerated() {
            let variant = position / sweep.seeds.count
            let seedOrdinal = position % sweep.seeds.count
            try member.execute(arguments: [sweepId, variant, seedOrdinal, runId])
        }
        return sweepId
    }

    /// Every sweep, in insertion order (none in a database from before the sweep tables).
    /// - Throws: `MeasurementError` 302, 303 or 306 (a row that breaks the schema's rules is
    ///   reported as 303).
    public func sweeps() throws(MeasurementError) -> [StoredSweep] {
        guard hasSweepTables else { return [] }
        do {
            return try read { db in try Self.fetchSweeps(db, sweepId: nil) }
        } catch {
            throw Self.classify(error, path: path, operation: "reading the sweeps")
        }
    }

    /// Sweep `sweepId` (nil: the last one), with its variants rebuilt from its runs: the input
    /// its `sweep.csv` and `sweep_paired.csv` were written from. Read in one transaction.
    /// - Throws: `MeasurementError.sweepNotFound` (310) when the database holds no such sweep;
    ///   302, 303 or 306 as `runs()`.
    public func sweep(
        _ sweepId: Int64? = nil
    ) throws(MeasurementError) -> (sweep: StoredSweep, variants: [SweepVariant]) {
        let path = self.path
        let hasSweepTables = self.hasSweepTables
        let outcome: Result<(StoredSweep, [SweepVariant]), MeasurementError>
        do {
            outcome = try read { db in
                // The last sweep by its id, so that only its rows are read.
                let wanted =
                    hasSweepTables
                    ? try sweepId ?? Int64.fetchOne(db, sql: "SELECT MAX(id) FROM sweep") : nil
                let found = try wanted.map { try Self.fetchSweeps(db, sweepId: $0) } ?? []
                guard let sweep = found.first else {
                    let all =
                        hasSweepTables
                        ? try Int64.fetchAll(
                            db, sql: "SELECT id FROM sweep ORDER BY id") : []
                    return .failure(.sweepNotFound(path: path, sweepId: sweepId, available: all))
                }
                let runs = try Self.fetchRuns(db, sweepId: sweep.sweepId, clients: false)
                var recordById: [Int64: RunRecord] = [:]
                for run in runs { recordById[run.runId] = run.record }
                let seedsCount = sweep.record.seeds.count
                var variants: [SweepVariant] = []
                for (variant, labels) in sweep.record.variantLabels.enumerated() {
                    let ids = sweep.runIds[variant * seedsCount..<(variant + 1) * seedsCount]
                    let records = try ids.map { runId in
                        guard let record = recordById[runId] else {
                            throw DatabaseError(
                                resultCode: .SQLITE_CORRUPT,
                                message: "sweep \(sweep.sweepId) refers to the missing run \(runId)"
                            )
                        }
                        return record
                    }
                    variants.append(SweepVariant(labels: labels, runs: records))
                }
                return .success((sweep, variants))
            }
        } catch {
            throw Self.classify(error, path: path, operation: "reading a sweep")
        }
        return try outcome.get()
    }

    /// The CSV text of `table`: `sweeps` lists every sweep; `sweep` and `sweep_paired` are those
    /// files of sweep `sweepId` (nil: the last one), byte-identical to the ones it wrote.
    /// - Throws: as `sweep(_:)` and `sweeps()`.
    public func csv(_ table: SweepTable, sweepId: Int64? = nil) throws(MeasurementError) -> String {
        switch table {
        case .sweeps: return SweepCSV.listText(try sweeps())
        case .sweep: return SweepCSV.summaryText(try sweep(sweepId).variants)
        case .sweepPaired: return SweepCSV.pairedText(try sweep(sweepId).variants)
        }
    }

    /// The sweeps stored (only `sweepId`'s when given), each checked against the schema's
    /// rules beyond what SQLite enforces: a full grid of runs, and labels with the same columns
    /// in every variant.
    private static func fetchSweeps(_ db: Database, sweepId: Int64?) throws -> [StoredSweep] {
        let filter = sweepId == nil ? "" : "WHERE id = ?"
        let childFilter = sweepId == nil ? "" : "WHERE sweepId = ?"
        let arguments: StatementArguments = sweepId.map { [$0] } ?? []
        var sweeps: [StoredSweep] = []
        var seedsCounts: [Int] = []
        var positionById: [Int64: Int] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM sweep \(filter) ORDER BY id", arguments: arguments)
        {
            let id: Int64 = row["id"]
            let variantsCount: Int64 = row["variantsCount"]
            let record = SweepRecord(
                scenarioName: row["scenarioName"], scenarioHash: row["scenarioHash"],
                optionsJSON: row["optionsJSON"], gitCommit: row["gitCommit"],
                digest: row["digest"], seeds: [],
                variantLabels: Array(repeating: [], count: Int(variantsCount)))
            positionById[id] = sweeps.count
            seedsCounts.append(Int(row["seedsCount"] as Int64))
            sweeps.append(StoredSweep(sweepId: id, record: record, runIds: []))
        }
        func position(_ row: Row) throws -> Int {
            let id: Int64 = row["sweepId"]
            guard let position = positionById[id] else {
                throw corrupt("a row refers to the missing sweep \(id)")
            }
            return position
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM sweepLabel \(childFilter) ORDER BY sweepId, variant, ordinal",
            arguments: arguments)
        {
            let at = try position(row)
            let variant = Int(row["variant"] as Int64)
            guard variant < sweeps[at].record.variantLabels.count else {
                throw corrupt("sweep \(sweeps[at].sweepId) labels a variant it does not have")
            }
            sweeps[at].record.variantLabels[variant].append(
                SweepLabel(column: row["columnName"], value: row["value"]))
        }
        let members = try Row.fetchAll(
            db,
            sql: """
                SELECT sweepRun.sweepId, sweepRun.variant, sweepRun.seedOrdinal, sweepRun.runId,
                    run.seed
                FROM sweepRun JOIN run ON run.id = sweepRun.runId
                \(sweepId == nil ? "" : "WHERE sweepRun.sweepId = ?")
                ORDER BY sweepRun.sweepId, sweepRun.variant, sweepRun.seedOrdinal
                """,
            arguments: arguments)
        for row in members {
            let at = try position(row)
            let variant: Int64 = row["variant"]
            let seedOrdinal: Int64 = row["seedOrdinal"]
            let seed = UInt64(bitPattern: row["seed"])
            if variant == 0 {
                guard seedOrdinal == sweeps[at].record.seeds.count else {
                    throw corrupt("sweep \(sweeps[at].sweepId) misses a run of variant 0")
                }
                sweeps[at].record.seeds.append(seed)
            } else {
                let seeds = sweeps[at].record.seeds
                let expected = Int(variant) * seeds.count + Int(seedOrdinal)
                guard sweeps[at].runIds.count == expected, Int(seedOrdinal) < seeds.count,
                    seeds[Int(seedOrdinal)] == seed
                else {
                    throw corrupt(
                        "sweep \(sweeps[at].sweepId): variant \(variant) did not run the seeds of variant 0"
                    )
                }
            }
            sweeps[at].runIds.append(row["runId"])
        }
        for (sweep, seedsCount) in zip(sweeps, seedsCounts) {
            let record = sweep.record
            let columns = record.variantLabels.first?.map(\.column) ?? []
            guard record.seeds.count == seedsCount,
                sweep.runIds.count == record.seeds.count * record.variantLabels.count,
                record.variantLabels.allSatisfy({ $0.map(\.column) == columns })
            else {
                throw corrupt("sweep \(sweep.sweepId) is not a whole grid of variants × seeds")
            }
        }
        return sweeps
    }

    private static func corrupt(_ message: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_CORRUPT, message: message)
    }
}
