import Foundation
import GRDB
import Synchronization
import Testing

@testable import Measurement

/// Bad input ends in a typed error with a stable code, naming the path, and changes nothing.
@Suite struct DatabaseErrorTests {
    @Test(arguments: [ResultStore.Access.readWrite, .readOnly])
    func randomBytesAreNotADatabase(access: ResultStore.Access) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("noise.sqlite")
        // Fixed "random" bytes (xorshift) so the test is deterministic.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let noise = (0..<8192).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data(noise))
        let error = measurementError { _ = try ResultStore(path: path, access: access) }
        #expect(error?.code == 302)
        #expect(error?.path == path)
        #expect(error?.databaseError?.resultCode == .SQLITE_NOTADB)
        #expect(
            error?.message == "\(path) is not a SyncSim results database "
                + "(SQLite said: file is not a database). Point --database at a results file written "
                + "by `syncsim run`, or delete it to start over.")
        #expect(bytes(at: path) == noise)
        #expect(try directory.listing() == ["noise.sqlite"])
    }

    @Test func damagedPagesAreReportedAsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("damaged.sqlite")
        let store = try ResultStore(path: path)
        for seed: UInt64 in 0..<200 { try store.insert(sampleRun(seed: seed)) }
        // Overwrite the middle pages (not the header page) with a fixed pattern.
        var contents = bytes(at: path)!
        let pageSize = 4096
        #expect(contents.count >= 8 * pageSize)
        for offset in (2 * pageSize)..<(contents.count - 2 * pageSize) {
            contents[offset] = UInt8(truncatingIfNeeded: offset &* 31)
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents))
        let error = measurementError { _ = try ResultStore(path: path, access: .readOnly) }
        #expect(error?.code == 303)
        #expect(error?.path == path)
        #expect(error?.message.hasPrefix("\(path) is a damaged SQLite database (") == true)
        #expect(bytes(at: path) == contents)
    }

    @Test func missingDatabaseIsNotCreatedByExport() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("missing.sqlite")
        let error = measurementError { _ = try ResultStore(path: path, access: .readOnly) }
        #expect(error?.code == 304)
        #expect(
            error?.message == "\(path) does not exist. "
                + "Point --database at a results file written by `syncsim run`.")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(arguments: [ResultStore.Access.readWrite, .readOnly])
    func newerSchemaIsRefusedUnchanged(access: ResultStore.Access) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("newer.sqlite")
        try ResultStore(path: path).insert(sampleRun())
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9-future')")
        }
        let before = bytes(at: path)
        let error = measurementError { _ = try ResultStore(path: path, access: access) }
        #expect(error?.code == 301)
        guard case .schemaTooNew(_, let unknown) = error else {
            Issue.record("expected schemaTooNew, got \(String(describing: error))")
            return
        }
        #expect(unknown == ["v9-future"])
        #expect(bytes(at: path) == before)
    }

    @Test func olderSchemaIsRefusedReadOnlyAndUpgradedReadWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("older.sqlite")
        _ = try ResultStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE runTiming")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v1-runTiming'")
        }
        let error = measurementError { _ = try ResultStore(path: path, access: .readOnly) }
        #expect(error?.code == 305)
        guard case .schemaTooOld(_, let missing) = error else {
            Issue.record("expected schemaTooOld")
            return
        }
        #expect(missing == ["v1-runTiming"])
        try ResultStore(path: path).insert(sampleRun())
        #expect(try ResultStore(path: path, access: .readOnly).runs().count == 1)
    }

    @Test(arguments: [ResultStore.Access.readWrite, .readOnly])
    func foreignDatabaseIsLeftAlone(access: ResultStore.Access) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("other-app.sqlite")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)")
        }
        let before = bytes(at: path)
        let error = measurementError { _ = try ResultStore(path: path, access: access) }
        #expect(error?.code == 309)
        #expect(bytes(at: path) == before)
    }

    @Test func aFailingInsertLeavesNoPartialRun() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.sqlite")
        let store = try ResultStore(path: path)
        try store.insert(sampleRun(seed: 1))
        var broken = sampleRun(seed: 2)
        // The run row, its metrics and the first client insert fine; the duplicate fails.
        broken.clients.append(ClientRecord(clientIndex: 1, metrics: [.integer("uploadsCount", 1)]))
        let error = measurementError { try store.insert(broken) }
        #expect(error?.code == 306)
        #expect(error?.databaseError?.resultCode == .SQLITE_CONSTRAINT)
        #expect(error?.message.hasPrefix("\(path): inserting the run of seed 2 failed") == true)
        let counts = try DatabaseQueue(path: path).read { db in
            try ["run", "runMetric", "clientMetric", "runTiming"].map { table in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)")!
            }
        }
        #expect(counts == [1, 3, 4, 2])
        #expect(try store.runs().map(\.record) == [sampleRun(seed: 1)])
        // The identifier sequence was rolled back too: the next run gets id 2.
        #expect(try store.insert(sampleRun(seed: 3)) == 2)
    }

    @Test func everyCodeIsDistinctAndStable() {
        let cause = DatabaseError(resultCode: .SQLITE_ERROR, message: "x")
        let errors: [MeasurementError] = [
            .schemaTooNew(path: "p", unknownMigrations: []),
            .notADatabase(path: "p", cause: cause),
            .databaseCorrupt(path: "p", detail: "d", cause: nil),
            .databaseNotFound(path: "p"),
            .schemaTooOld(path: "p", missingMigrations: []),
            .databaseFailed(path: "p", operation: "o", cause: cause),
            .outputNotWritable(path: "p", directory: "d", reason: "r"),
            .outputWriteFailed(path: "p", reason: "r"),
            .foreignDatabase(path: "p"),
            .sweepNotFound(path: "p", sweepId: nil, available: []),
            .sweepsNotComparable(path: "p", candidate: "q", reason: "r"),
            .shardsNotCombinable(path: "p", reason: "r"),
            .runNotFound(path: "p", runId: 3, lastRunId: 2),
            .runsNotComparable(path: "p", candidate: "q", reason: "r"),
            .metricNotFound(path: "p", metric: "m", available: ["a"]),
            .timelineNotFound(path: "p"),
            .notATimeline(path: "p", reason: "r"),
            .timelineColumnNotFound(path: "p", column: "c", available: ["a"]),
            .timelineVariantNotFound(path: "p", variant: 2, available: []),
            .suiteNotFound(path: "p", wanted: "named 'n'", available: ["m"]),
        ]
        #expect(errors.map(\.code) == Array(301...320))
        for error in errors {
            #expect(error.path == "p")
            #expect(error.description.hasPrefix("error \(error.code): "))
        }
    }
}

@Suite struct AtomicFileTests {
    @Test func writesAndReplacesWholeFiles() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("out.csv")
        try AtomicFile.write("first\r\n", to: path)
        #expect(bytes(at: path) == Array("first\r\n".utf8))
        try AtomicFile.write([0x61, 0x62], to: path)
        #expect(bytes(at: path) == [0x61, 0x62])
        try AtomicFile.write([], to: path)
        #expect(bytes(at: path) == [])
        #expect(try directory.listing() == ["out.csv"])
    }

    @Test func aMissingDirectoryIsReportedAndNothingIsCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("absent/out.csv")
        do {
            try AtomicFile.write("x", to: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == 307)
            #expect(error.path == path)
            #expect(
                error.message == "Cannot write \(path): the directory \(directory.file("absent")) "
                    + "does not exist. Choose an output path in an existing, writable directory, "
                    + "or create the directory or fix its permissions.")
        }
        #expect(try directory.listing() == [])
    }

    @Test func aFileInPlaceOfTheDirectoryIsReported() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.file("blocker")
        try AtomicFile.write("keep", to: blocker)
        do {
            try AtomicFile.write("x", to: blocker + "/out.csv")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == 307)
        }
        #expect(bytes(at: blocker) == Array("keep".utf8))
        #expect(try directory.listing() == ["blocker"])
    }

    @Test func aDirectoryAtTheTargetIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("target")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        try AtomicFile.write("inside", to: target + "/kept.txt")
        do {
            try AtomicFile.write("x", to: target)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == 308)
        }
        #expect(bytes(at: target + "/kept.txt") == Array("inside".utf8))
        #expect(try directory.listing() == ["target"])
    }

    /// A batch renames its files only when every one is staged: a second file that cannot be
    /// written leaves the first target as it was, and no temporary file behind.
    @Test func aBatchReplacesAllItsFilesOrNone() throws {
        let directory = try TemporaryDirectory()
        let (first, second) = (directory.file("a.csv"), directory.file("b.csv"))
        try AtomicFile.write("old a", to: first)
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
        var batch = AtomicFile.Batch()
        try batch.stage("new a", to: first)
        #expect(try directory.listing().count == 3)  // a.csv, b.csv and a's staged file
        do {
            try batch.stage("new b", to: second)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == 308)
            #expect(error.path == second)
        }
        try batch.commit()  // nothing left to rename
        #expect(bytes(at: first) == Array("old a".utf8))
        #expect(try directory.listing() == ["a.csv", "b.csv"])

        try FileManager.default.removeItem(atPath: second)
        var whole = AtomicFile.Batch()
        try whole.stage("new a", to: first)
        try whole.stage([0x62], to: second)
        #expect(bytes(at: first) == Array("old a".utf8))  // staged, not yet renamed
        try whole.commit()
        #expect(bytes(at: first) == Array("new a".utf8))
        #expect(bytes(at: second) == [0x62])
        #expect(try directory.listing() == ["a.csv", "b.csv"])

        var dropped = AtomicFile.Batch()
        try dropped.stage("never", to: first)
        dropped.discard()
        #expect(bytes(at: first) == Array("new a".utf8))
        #expect(try directory.listing() == ["a.csv", "b.csv"])

        // `write(all:)`: a path under a file cannot be written, so neither is the other.
        #expect(throws: MeasurementError.self) {
            try AtomicFile.write(all: [("all a", first), ("x", second + "/c.csv")])
        }
        #expect(bytes(at: first) == Array("new a".utf8))
        #expect(try directory.listing() == ["a.csv", "b.csv"])
    }

    /// Root may write anywhere, so this case runs only for other users.
    @Test(.enabled(if: geteuid() != 0, "root ignores directory permissions"))
    func aReadOnlyDirectoryKeepsItsFilesUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("results.csv")
        try AtomicFile.write("old", to: path)
        #expect(chmod(directory.path, 0o555) == 0)
        defer { _ = chmod(directory.path, 0o755) }
        do {
            try AtomicFile.write("new", to: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == 307)
        }
        #expect(bytes(at: path) == Array("old".utf8))
        #expect(try directory.listing() == ["results.csv"])
    }
}

/// `ResultStore.transaction`: the store's calls inside it see its rows and commit with it, or
/// none of them stays.
@Suite struct ResultTransactionTests {
    struct Refused: Error {}

    @Test func aTransactionCommitsAllOrNothing() throws {
        let directory = try TemporaryDirectory()
        let store = try ResultStore(path: directory.file("results.sqlite"))
        try store.insert(sampleRun(seed: 1))
        do {
            try store.transaction {
                try store.insert(sampleRun(seed: 2))
                try store.insert(sampleRun(seed: 3))
                #expect(try store.runs().map(\.record.seed) == [1, 2, 3])  // its own rows
                throw Refused()
            }
            Issue.record("expected the body's error")
        } catch is Refused {}
        #expect(try store.runs().map(\.record.seed) == [1])

        let csv = try store.transaction {
            try store.insert(sampleRun(seed: 4))
            return try store.csv(.runs)
        }
        #expect(try store.runs().map(\.record.seed) == [1, 4])
        #expect(csv == (try store.csv(.runs)))
        // The ids of the rolled-back rows are given again.
        #expect(try store.runs().map(\.runId) == [1, 2])
    }
}

/// Several processes (here connections on several threads) opening one new results file at
/// once: each finds the schema missing, and the later ones' migrations meet the tables the
/// first made. Every one opens, and every insert is kept.
@Suite struct ConcurrentOpenTests {
    @Test func connectionsOpeningANewFileAtOnceAllGetIt() throws {
        for round in 0..<10 {
            let directory = try TemporaryDirectory()
            let path = directory.file("results.sqlite")
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                do {
                    let store = try ResultStore(path: path)
                    try store.insert(sampleRun(seed: UInt64(index)))
                } catch {
                    failures.withLock { $0.append("round \(round), connection \(index): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let store = try ResultStore(path: path, access: .readOnly)
            #expect(try store.runs().map(\.record.seed).sorted() == [0, 1, 2, 3])
        }
    }
}
