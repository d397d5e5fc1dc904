import MergeCore
import Testing

@testable import SyncEngine

/// The IDENT checks and the upload/download cycle of one server file, without a simulator.
@Suite struct ServerFileTests {
    static let table: TableID = 1

    static func schema() -> Replica {
        var replica = Replica()
        try! replica.apply(
            Changeset(instructions: [
                .addTable(
                    table: table, primaryKeyField: 0, primaryKeyType: .int,
                    primaryKeyNullable: false),
                .addColumn(
                    table: table, field: 1, type: .int, nullable: true, collection: .single,
                    linkTarget: nil),
            ]))
        return replica
    }

    static func write(
        _ client: inout SyncClient, key: Int64, value: Int64, at ms: UInt64, id: UInt64
    ) -> ClientMessage? {
        let object = ObjectRef(table: table, key: .int(key))
        return try! client.write(
            [
                .createObject(object),
                .update(object: object, field: 1, value: .int(value), isDefault: false),
            ],
            timestampMs: ms, writeID: id)
    }

    /// The entries of the UPLOAD a write in an active session sends (recorded as an issue,
    /// and thrown, when it sends none).
    static func uploadedEntries(
        _ client: inout SyncClient, key: Int64, value: Int64, at ms: UInt64, id: UInt64
    ) throws -> ContiguousArray<UploadEntry> {
        let message = write(&client, key: key, value: value, at: ms, id: id)
        guard case .upload(let entries, _) = message else {
            throw UploadMissing(
                message: "a write in an active session uploads, not \(String(describing: message))")
        }
        return entries
    }

    struct UploadMissing: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Two clients of one server file, both connected (fresh copies), each with its own copy
    /// of the server: the tests hand the server from one to the other.
    static func twoConnectedClients() -> (Pair, Pair) {
        var a = Pair(server: ServerFile(initialState: schema(), baseSalt: 1), salt: 100)
        _ = a.connect()
        var b = Pair(server: a.server, salt: 200)
        _ = b.connect()
        return (a, b)
    }

    struct Pair {
        var server = ServerFile(initialState: ServerFileTests.schema(), baseSalt: 77)
        var client = SyncClient(initialState: ServerFileTests.schema())
        var transformer = Transformer()
        var salt: UInt64 = 1000
        /// Simulated time (ns) at which the server hears the client's messages.
        var now: UInt64 = 0

        /// Connects the client, with a fresh copy when it has no ident, and returns the
        /// server's answer to IDENT (nil when accepted).
        mutating func connect() -> ProtocolError? {
            switch client.connect() {
            case .requestFreshCopy:
                salt += 1
                let copy = server.allocateFreshCopy(fileSalt: salt, at: now)
                _ = client.receive(.freshCopy(copy), transformer: &transformer)
                return nil
            case .ident(let ident):
                if let error = server.checkIdent(ident) { return error }
                server.noteSeen(ident.file.ident, at: now, locked: ident.lockedServerVersion)
                let download = server.download(for: ident.file.ident, after: ident.download)
                _ = client.receive(.download(download), transformer: &transformer)
                return nil
            case .upload, .mark:
                Issue.record("connect neither uploads nor marks")
                return nil
            }
        }

        mutating func upload(_ message: ClientMessage?) {
            guard case .upload(let entries, let locked) = message else { return }
            let ident = client.file!.ident
            var salts = salt
            let outcome = server.integrate(
                upload: entries, from: ident, transformer: &transformer,
                nextSalt: {
                    salts += 1; return salts
                })
            salt = salts
            #expect(outcome.error == nil)
            server.noteSeen(ident, at: now, locked: locked)
            let download = server.download(for: ident, after: client.downloadCursor)
            _ = client.receive(.download(download), transformer: &transformer)
        }
    }

    @Test func freshClientSyncsAndIsAcknowledged() {
        var pair = Pair()
        #expect(pair.connect() == nil)
        let message = ServerFileTests.write(&pair.client, key: 1, value: 10, at: 5, id: 0)
        pair.upload(message)
        #expect(pair.client.unsynced.isEmpty)
        #expect(pair.server.currentVersion == 1)
        #expect(pair.client.replica == pair.server.state)
        pair.client.disconnect()
        #expect(pair.connect() == nil)
    }

    /// What a backup of the file takes to store: the state's snapshot plus the history's
    /// changesets as encoded, the history part gone after a termination.
    @Test func storedBytesAreTheSnapshotAndTheHistory() {
        var pair = Pair()
        #expect(pair.connect() == nil)
        let empty = pair.server.storedByteCount()
        #expect(empty == ServerFileTests.schema().snapshotEncodedByteCount(version: 0))
        for key in 1...5 {
            pair.upload(
                ServerFileTests.write(
                    &pair.client, key: Int64(key), value: 10, at: UInt64(key), id: UInt64(key)))
        }
        #expect(pair.server.history.count == 5)
        let history = pair.server.history.reduce(0) { $0 + $1.changeset.encodedByteCount }
        #expect(history > 0)
        #expect(history == pair.server.history.encodedBytes)
        let snapshot = pair.server.state.snapshotEncodedByteCount(
            version: pair.server.currentVersion)
        #expect(pair.server.storedByteCount() == snapshot + history)
        // Asking again (the cached snapshot size) gives the same.
        #expect(pair.server.storedByteCount() == snapshot + history)
        pair.server.terminateAndReenable(baseSalt: 9)
        #expect(
            pair.server.storedByteCount() == pair.server.state.snapshotEncodedByteCount(version: 0))
    }

    @Test func unknownIdentAfterTerminateIs208() {
        var pair = Pair()
        _ = pair.connect()
        pair.upload(ServerFileTests.write(&pair.client, key: 1, value: 10, at: 5, id: 0))
        pair.client.disconnect()
        pair.server.terminateAndReenable(baseSalt: 99)
        #expect(pair.connect()?.code == .badClientFileIdent)
    }

    @Test func clientAheadOfARestoredServerIs209() {
        var pair = Pair()
        _ = pair.connect()
        let backup = pair.server
        pair.upload(ServerFileTests.write(&pair.client, key: 1, value: 10, at: 5, id: 0))
        pair.client.disconnect()
        pair.server = backup
        #expect(pair.connect()?.code == .badServerVersion)
    }

    @Test func restoredServerThatReAdvancedIsDetectedBySalt211() {
        var pair = Pair()
        _ = pair.connect()
        let backup = pair.server
        pair.upload(ServerFileTests.write(&pair.client, key: 1, value: 10, at: 5, id: 0))
        pair.client.disconnect()
        // Restore, then another client advances the server to the same version number.
        pair.server = backup
        var other = Pair(server: pair.server, salt: 5_000)
        _ = other.connect()
        other.upload(ServerFileTests.write(&other.client, key: 2, value: 20, at: 6, id: 1))
        pair.server = other.server
        #expect(pair.server.currentVersion == 1)
        let error = pair.connect()
        #expect(error?.code == .divergingHistories || error?.code == .badClientVersion)
    }

    @Test func identReissuedAfterRestoreIs211() {
        var pair = Pair()
        let backup = pair.server
        _ = pair.connect()  // ident 1 allocated after the backup
        pair.client.disconnect()
        pair.server = backup
        var other = Pair(server: pair.server, salt: 9_000)
        _ = other.connect()  // ident 1 re-issued with another salt
        pair.server = other.server
        #expect(pair.connect()?.code == .divergingHistories)
    }

    @Test func duplicateUploadsAreSkipped() throws {
        var pair = Pair()
        _ = pair.connect()
        let entries = try ServerFileTests.uploadedEntries(
            &pair.client, key: 1, value: 10, at: 5, id: 0)
        let ident = pair.client.file!.ident
        var salt: UInt64 = 1
        let first = pair.server.integrate(
            upload: entries, from: ident, transformer: &pair.transformer,
            nextSalt: {
                salt += 1; return salt
            })
        let second = pair.server.integrate(
            upload: entries, from: ident, transformer: &pair.transformer,
            nextSalt: {
                salt += 1; return salt
            })
        #expect(first.integratedWriteIDs == [0])
        #expect(second.integratedWriteIDs.isEmpty)
        #expect(second.duplicatesSkipped == 1)
        #expect(pair.server.currentVersion == 1)
    }

    @Test func concurrentWritesConvergeWithLastWriterWins() {
        var (a, b) = ServerFileTests.twoConnectedClients()
        // Both write the same object offline; b's clock is later, so b wins.
        let uploadA = ServerFileTests.write(&a.client, key: 7, value: 1, at: 1_000, id: 0)
        let uploadB = ServerFileTests.write(&b.client, key: 7, value: 2, at: 2_000, id: 1)
        a.server = b.server
        a.upload(uploadA)
        b.server = a.server
        b.upload(uploadB)
        a.server = b.server
        let download = a.server.download(for: a.client.file!.ident, after: a.client.downloadCursor)
        _ = a.client.receive(.download(download), transformer: &a.transformer)
        #expect(a.client.replica == b.client.replica)
        #expect(a.client.replica == a.server.state)
        #expect(
            a.server.state.value(
                of: ObjectRef(table: ServerFileTests.table, key: .int(7)), field: 1) == .int(2))
    }

    /// The server keeps a client's reciprocal history as sparse edits and applies them when
    /// the client uploads again before downloading. Here B's first upload beats A's Update, so
    /// in B's reciprocal history A's Update is discarded; B's second upload, older than A's by
    /// clock, must then meet nothing (B never saw A's write), not A's original Update.
    @Test func reciprocalEditsApplyWhenAClientUploadsAgainBeforeDownloading() {
        var (a, b) = ServerFileTests.twoConnectedClients()
        let uploadA = ServerFileTests.write(&a.client, key: 7, value: 1, at: 1_000, id: 0)
        a.server = b.server
        a.upload(uploadA)
        b.server = a.server
        let identB = b.client.file!.ident
        let uploadB1 = ServerFileTests.write(&b.client, key: 7, value: 2, at: 2_000, id: 1)
        let uploadB2 = ServerFileTests.write(&b.client, key: 7, value: 3, at: 500, id: 2)
        var salt: UInt64 = 300
        for message in [uploadB1, uploadB2] {
            guard case .upload(let entries, _) = message else {
                Issue.record("a write in an active session uploads")
                return
            }
            let outcome = b.server.integrate(
                upload: entries, from: identB, transformer: &b.transformer,
                nextSalt: {
                    salt += 1
                    return salt
                })
            #expect(outcome.error == nil)
        }
        let key = ObjectRef(table: ServerFileTests.table, key: .int(7))
        #expect(b.server.state.value(of: key, field: 1) == .int(3))
        let download = b.server.download(for: identB, after: b.client.downloadCursor)
        _ = b.client.receive(.download(download), transformer: &b.transformer)
        #expect(b.client.replica == b.server.state)
    }
}
