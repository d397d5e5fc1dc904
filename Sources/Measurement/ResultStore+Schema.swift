//! The results database schema: named, append-only migrations, registered here and only here.
//!
//! Rules: a migration that has shipped is never edited or removed; a change is a new migration
//! appended at the end (`v2-…`). Tables are singular camelCase, columns NOT NULL unless a NULL
//! means something, and every child row references its `run` or `sweep` with a foreign key.
//! Tables are STRICT (SQLite ≥ 3.37), so a column holds exactly its declared type.
//!
//! Unsigned 64-bit figures (`seed`, `simulatedDurationNs`, `eventsCount`) are stored as the
//! `INTEGER` with the same 64 bits; values ≥ 2⁶³ read back negative in raw SQL. The export and
//! `ResultStore.runs()` convert them back to unsigned. No column holds a wall-clock date.

import GRDB

extension ResultStore {
    /// The identifiers of every migration, in order. Tests and docs refer to this list.
    public static let migrationIdentifiers: [String] = [
        "v1-run", "v1-runMetric", "v1-clientMetric", "v1-runTiming",
        "v2-sweep", "v2-sweepLabel", "v2-sweepRun",
        "v3-suite", "v3-suiteSweep",
    ]

    /// The migrations a database must have to be read (`Access.readOnly`): the run tables. A
    /// database written before the sweep tables existed (2026-11-27) is still read, and reads
    /// as holding no sweep; opening it for writing adds them.
    public static let migrationsRequiredForReading = Array(migrationIdentifiers.prefix(4))

    /// The migrator with every migration registered, in order.
    static func makeMigrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-run") { db in
            try db.execute(sql: """
                CREATE TABLE run (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    seed INTEGER NOT NULL,
                    scenarioName TEXT NOT NULL,
                    scenarioHash TEXT NOT NULL,
                    optionsJSON TEXT NOT NULL,
                    gitCommit TEXT NOT NULL,
                    toolchain TEXT NOT NULL,
                    traceDigest TEXT NOT NULL,
                    simulatedDurationNs INTEGER NOT NULL,
                    clientsCount INTEGER NOT NULL CHECK (clientsCount BETWEEN 0 AND 4294967295),
                    eventsCount INTEGER NOT NULL
                ) STRICT
                """)
        }
        migrator.registerMigration("v1-runMetric") { db in
            try db.execute(sql: """
                CREATE TABLE runMetric (
                    runId INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    name TEXT NOT NULL,
                    integerValue INTEGER,
                    realValue REAL,
                    CHECK ((integerValue IS NULL) <> (realValue IS NULL)),
                    PRIMARY KEY (runId, ordinal),
                    UNIQUE (runId, name)
                ) STRICT
                """)
        }
        migrator.registerMigration("v1-clientMetric") { db in
            try db.execute(sql: """
                CREATE TABLE clientMetric (
                    runId INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    clientIndex INTEGER NOT NULL CHECK (clientIndex BETWEEN 0 AND 4294967295),
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    name TEXT NOT NULL,
                    integerValue INTEGER,
                    realValue REAL,
                    CHECK ((integerValue IS NULL) <> (realValue IS NULL)),
                    PRIMARY KEY (runId, clientIndex, ordinal),
                    UNIQUE (runId, clientIndex, name)
                ) STRICT
                """)
        }
        migrator.registerMigration("v1-runTiming") { db in
            try db.execute(sql: """
                CREATE TABLE runTiming (
                    runId INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    name TEXT NOT NULL,
                    integerValue INTEGER,
                    realValue REAL,
                    CHECK ((integerValue IS NULL) <> (realValue IS NULL)),
                    PRIMARY KEY (runId, ordinal),
                    UNIQUE (runId, name)
                ) STRICT
                """)
        }
        migrator.registerMigration("v2-sweep") { db in
            try db.execute(sql: """
                CREATE TABLE sweep (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    scenarioName TEXT NOT NULL,
                    scenarioHash TEXT NOT NULL,
                    optionsJSON TEXT NOT NULL,
                    gitCommit TEXT NOT NULL,
                    digest TEXT NOT NULL,
                    variantsCount INTEGER NOT NULL CHECK (variantsCount >= 1),
                    seedsCount INTEGER NOT NULL CHECK (seedsCount >= 1)
                ) STRICT
                """)
        }
        migrator.registerMigration("v2-sweepLabel") { db in
            try db.execute(sql: """
                CREATE TABLE sweepLabel (
                    sweepId INTEGER NOT NULL REFERENCES sweep(id) ON DELETE CASCADE,
                    variant INTEGER NOT NULL CHECK (variant >= 0),
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    columnName TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (sweepId, variant, ordinal)
                ) STRICT
                """)
        }
        migrator.registerMigration("v2-sweepRun") { db in
            try db.execute(sql: """
                CREATE TABLE sweepRun (
                    sweepId INTEGER NOT NULL REFERENCES sweep(id) ON DELETE CASCADE,
                    variant INTEGER NOT NULL CHECK (variant >= 0),
                    seedOrdinal INTEGER NOT NULL CHECK (seedOrdinal >= 0),
                    runId INTEGER NOT NULL UNIQUE REFERENCES run(id) ON DELETE CASCADE,
                    PRIMARY KEY (sweepId, variant, seedOrdinal)
                ) STRICT
                """)
        }
        migrator.registerMigration("v3-suite") { db in
            try db.execute(sql: """
                CREATE TABLE suite (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL,
                    fileHash TEXT NOT NULL,
                    gitCommit TEXT NOT NULL,
                    digest TEXT NOT NULL,
                    sweepsCount INTEGER NOT NULL CHECK (sweepsCount >= 1)
                ) STRICT
                """)
        }
        migrator.registerMigration("v3-suiteSweep") { db in
            try db.execute(sql: """
                CREATE TABLE suiteSweep (
                    suiteId INTEGER NOT NULL REFERENCES suite(id) ON DELETE CASCADE,
                    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
                    name TEXT NOT NULL,
                    sweepId INTEGER NOT NULL UNIQUE REFERENCES sweep(id) ON DELETE CASCADE,
                    PRIMARY KEY (suiteId, ordinal),
                    UNIQUE (suiteId, name)
                ) STRICT
                """)
        }
        precondition(migrator.migrations == migrationIdentifiers, "migration list out of date")
        return migrator
    }
}
