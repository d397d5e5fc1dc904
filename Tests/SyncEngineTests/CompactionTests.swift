import MergeCore
import Testing

@testable import SyncEngine

/// The client max offline time: expiry (222 at IDENT) and history trimming, on one server file
/// without a simulator. Times are simulated nanoseconds; the tests set `Pair.now` by hand.
@Suite struct CompactionTests {
    typealias Pair = ServerFileTests.Pair

    /// A client not heard from for longer than the max offline time expires; the one that
    /// kept syncing does not. The history everyone left has integrated is trimmed, and the
    /// expired client's next IDENT gets 222 (a client reset), while the other goes on.
    @Test func anOfflineClientExpiresAndTheHistoryIsTrimmed() {
        var (a, b) = ServerFileTests.twoConnectedClients()
        a.client.disconnect()
        b.now = 80
        for key in 1...3 {
            b.upload(
                ServerFileTests.write(
                    &b.client, key: Int64(key), value: 1, at: UInt64(key), id: UInt64(key)))
        }
        #expect(b.client.unsynced.isEmpty)
        #expect(b.client.lockedServerVersion == 3)
        #expect(b.server.currentVersion == 3)

        // The server knows the lock b reported with its last UPLOAD (2: its cursor before the
        // server integrated that upload), not the 3 it has now.
        let outcome = b.server.compact(at: 100, maxOfflineNs: 50)
        #expect(outcome.expiredIdents == [a.client.file!.ident])
        #expect(outcome.entriesTrimmed == 2)
        #expect(b.server.historyBase.version == 2)
        #expect(b.server.history.count == 1)
        #expect(b.server.currentVersion == 3)
        // Compaction is idempotent: nothing more to expire or trim.
        #expect(b.server.compact(at: 100, maxOfflineNs: 50) == CompactionOutcome())

        a.server = b.server
        #expect(a.connect()?.code == .clientFileExpired)
        b.client.disconnect()
        #expect(b.connect() == nil)
        // b's IDENT reported 3: the last entry goes too.
        #expect(b.server.compact(at: 100, maxOfflineNs: 50).entriesTrimmed == 1)
        #expect(b.server.history.isEmpty)
        #expect(b.server.salt(ofVersion: 3) != nil)
        #expect(b.server.salt(ofVersion: 2) == nil)
        b.upload(ServerFileTests.write(&b.client, key: 9, value: 9, at: 9, id: 9))
        #expect(b.client.replica == b.server.state)
    }

    /// An unsynced changeset keeps the history it is based on, even after the client's
    /// download cursor moved past it: the client reports its oldest base as
    /// `lockedServerVersion`, and compaction keeps what follows it, so the upload integrates
    /// (a trim to the cursor would refuse it with 209).
    @Test func anUnsyncedChangesetKeepsTheHistoryItIsBasedOn() {
        var (a, b) = ServerFileTests.twoConnectedClients()
        // a writes; the UPLOAD is lost with the connection.
        _ = ServerFileTests.write(&a.client, key: 1, value: 1, at: 1, id: 1)
        a.client.disconnect()
        b.upload(ServerFileTests.write(&b.client, key: 2, value: 2, at: 2, id: 2))
        b.upload(ServerFileTests.write(&b.client, key: 3, value: 3, at: 3, id: 3))

        // a reconnects and downloads b's changesets: its cursor is 2, its unsynced write's
        // base 0.
        a.server = b.server
        guard case .ident(let ident) = a.client.connect() else {
            Issue.record("a known file sends IDENT")
            return
        }
        #expect(ident.download.serverVersion == 0)
        #expect(ident.lockedServerVersion == 0)
        #expect(a.server.checkIdent(ident) == nil)
        a.server.noteSeen(ident.file.ident, at: 0, locked: ident.lockedServerVersion)
        let reaction = a.client.receive(
            .download(a.server.download(for: ident.file.ident, after: ident.download)),
            transformer: &a.transformer)
        #expect(a.client.downloadCursor.serverVersion == 2)
        #expect(a.client.lockedServerVersion == 0)

        #expect(a.server.compact(at: 10, maxOfflineNs: 50).entriesTrimmed == 0)
        guard case .upload(let entries, let locked) = reaction.send else {
            Issue.record("the reconnected client uploads its unsynced write")
            return
        }
        #expect(entries.first?.changeset.lastIntegratedRemoteVersion == 0)
        #expect(locked == 0)
        var salt: UInt64 = 500
        let outcome = a.server.integrate(
            upload: entries, from: ident.file.ident, transformer: &a.transformer,
            nextSalt: {
                salt += 1
                return salt
            })
        #expect(outcome.error == nil)
        #expect(outcome.integratedWriteIDs == [1])
        let download = a.server.download(for: ident.file.ident, after: a.client.downloadCursor)
        _ = a.client.receive(.download(download), transformer: &a.transformer)
        #expect(a.client.unsynced.isEmpty)
        #expect(a.client.lockedServerVersion == 3)
        #expect(a.client.replica == a.server.state)

        // Once both report locks past it, the history goes.
        a.server.noteSeen(ident.file.ident, at: 10, locked: a.client.lockedServerVersion)
        a.server.noteSeen(b.client.file!.ident, at: 10, locked: b.client.lockedServerVersion)
        #expect(a.server.compact(at: 20, maxOfflineNs: 50).entriesTrimmed == 2)
        #expect(a.server.historyBase.version == 2)
    }

    /// Seen means heard from within the max offline time, counted from the latest message;
    /// an expired file stays expired whatever it sends.
    @Test func expiryCountsFromTheLastMessageAndIsFinal() throws {
        var (a, b) = ServerFileTests.twoConnectedClients()
        let identA = a.client.file!.ident
        b.server.noteSeen(identA, at: 60, locked: nil)
        #expect(b.server.compact(at: 100, maxOfflineNs: 50).expiredIdents == [b.client.file!.ident])
        #expect(b.server.compact(at: 110, maxOfflineNs: 50).expiredIdents == [])
        #expect(b.server.compact(at: 111, maxOfflineNs: 50).expiredIdents == [identA])
        b.server.noteSeen(identA, at: 120, locked: nil)
        #expect(b.server.clientFiles[Int(identA)]?.expired == true)
        // An UPLOAD from an expired file (a session the server expired under it, as in the
        // reference's Sync_ServerHistoryCompaction_ExpiredAtUploadTime) is refused with 222.
        let entries = try ServerFileTests.uploadedEntries(&a.client, key: 1, value: 1, at: 1, id: 1)
        let refused = b.server.integrate(
            upload: entries, from: identA, transformer: &a.transformer, nextSalt: { 1 })
        #expect(refused.error?.code == .clientFileExpired)
        #expect(refused.integratedWriteIDs.isEmpty)
        b.client.disconnect()
        #expect(b.connect()?.code == .clientFileExpired)
    }
}
