//! Message sizes (`WireSize`): a DOWNLOAD's and a fresh copy's payloads are what encoding
//! what they carry gives, however the server computed them.

import MergeCore
import Testing

@testable import SyncEngine

@Suite("Wire size")
struct WireSizeTests {
    @Test("a DOWNLOAD's payload is the length of its entries' encodings, as sent to each client")
    func downloadPayloadIsItsEncoding() throws {
        var (a, b) = ServerFileTests.twoConnectedClients()
        // Client a makes writes with growing client versions, so the entries b downloads
        // carry other `lastIntegratedRemoteVersion`s than the history stores, some past the
        // one-byte varints.
        for step in Int64(0)..<150 {
            a.upload(
                ServerFileTests.write(
                    &a.client, key: step % 9, value: step * 1_000_003, at: 10 + UInt64(step),
                    id: UInt64(step)))
        }
        b.server = a.server
        let ident = b.client.file!.ident
        var checked = 0
        for cursor in [
            b.client.downloadCursor,
            DownloadCursor(serverVersion: 100, lastIntegratedClientVersion: 0),
        ] {
            let download = b.server.download(for: ident, after: cursor)
            #expect(!download.entries.isEmpty)
            let encoded = download.entries.reduce(0) { $0 + $1.encoded().count }
            #expect(download.payloadBytes == encoded)
            #expect(
                WireSize.of(ServerMessage.download(download)) == WireSize.downloadHeader + encoded)
            checked += download.entries.count
            Self.checkEntries(download)
        }
        #expect(checked == 200)
        // Client a's own download skips its own entries; its payload is empty.
        let own = a.server.download(
            for: a.client.file!.ident,
            after: DownloadCursor(serverVersion: 0, lastIntegratedClientVersion: 0))
        #expect(own.entries.isEmpty)
        #expect(own.payloadBytes == 0)
    }

    /// A DOWNLOAD's entries read in place (`DownloadEntries.forEach(in:)`) are the stored
    /// changesets, the same as its subscript's but for the receiver's
    /// `lastIntegratedRemoteVersion`; left out one by one (the download-gap sabotage), its
    /// payload stays the length of what it still carries.
    static func checkEntries(_ download: DownloadMessage) {
        var stored: [Changeset] = []
        #expect(
            download.entries.forEach(in: 0..<download.entries.count) { changeset in
                stored.append(copy changeset)
                return true
            })
        #expect(stored.count == download.entries.count)
        for (index, changeset) in stored.enumerated() {
            var sent = changeset
            sent.lastIntegratedRemoteVersion = download.entries.lastIntegratedRemoteVersion(index)
            #expect(sent == download.entries[index])
        }
        // Each stretch of one version ends where the entries' versions change.
        for start in download.entries.indices {
            var end = start + 1
            while end < download.entries.count,
                download.entries.lastIntegratedRemoteVersion(end)
                    == download.entries.lastIntegratedRemoteVersion(start)
            {
                end += 1
            }
            #expect(download.entries.endOfVersion(from: start) == end)
        }
        // A part read in place (across runs where there are several), stopped after three.
        if download.entries.count > 4 {
            var part: [Changeset] = []
            _ = download.entries.forEach(in: 2..<(download.entries.count - 1)) { changeset in
                part.append(copy changeset)
                return part.count < 3
            }
            #expect(part.map(\.version) == stored[2..<5].map(\.version))
        }
        var shrinking = download
        while !shrinking.entries.isEmpty {
            shrinking.removeFirstEntry()
            #expect(
                shrinking.payloadBytes == shrinking.entries.reduce(0) { $0 + $1.encoded().count })
        }
        #expect(shrinking.payloadBytes == 0)
    }

    @Test(
        "a DOWNLOAD with the receiver's own entries between the others' carries each run's version")
    func downloadWithOwnEntriesBetween() throws {
        var (a, b) = ServerFileTests.twoConnectedClients()
        a.server = b.server  // b's server knows both files
        for step in Int64(0)..<60 {
            a.upload(
                ServerFileTests.write(
                    &a.client, key: step % 7, value: step, at: 10 + UInt64(step),
                    id: UInt64(step)))
            b.server = a.server
            if step % 4 == 1 {
                b.upload(
                    ServerFileTests.write(
                        &b.client, key: 100 + step, value: step, at: 10 + UInt64(step),
                        id: 1_000 + UInt64(step)))
                a.server = b.server
            }
        }
        let download = b.server.download(
            for: b.client.file!.ident,
            after: DownloadCursor(serverVersion: 0, lastIntegratedClientVersion: 0))
        #expect(download.entries.count == 60)
        let versions = Set(
            download.entries.indices.map {
                download.entries.lastIntegratedRemoteVersion($0)
            })
        #expect(versions.count == 16)
        #expect(download.payloadBytes == download.entries.reduce(0) { $0 + $1.encoded().count })
        Self.checkEntries(download)
    }

    @Test("a fresh copy's payload is its state's encoded snapshot, sized again after a change")
    func freshCopyPayloadIsTheSnapshot() throws {
        var (a, _) = ServerFileTests.twoConnectedClients()
        var sizes: [Int] = []
        for step in Int64(0)..<3 {
            a.upload(
                ServerFileTests.write(
                    &a.client, key: step, value: step, at: 10 + UInt64(step), id: UInt64(step)))
            for salt in UInt64(0)..<2 {
                let copy = a.server.allocateFreshCopy(fileSalt: 900 + salt, at: 0)
                let encoded = copy.state.snapshotChangesets(version: copy.latest.version)
                    .reduce(0) { $0 + $1.encoded().count }
                #expect(copy.payloadBytes == encoded)
                #expect(
                    WireSize.of(ServerMessage.freshCopy(copy))
                        == WireSize.freshCopyHeader + encoded)
                sizes.append(copy.payloadBytes)
            }
        }
        // Each write adds an object, so each new version's copy is larger; two copies of one
        // version are the same size.
        #expect(sizes[0] == sizes[1] && sizes[2] == sizes[3] && sizes[4] == sizes[5])
        #expect(sizes[0] < sizes[2] && sizes[2] < sizes[4])
    }

    @Test("an UPLOAD is its header plus its changesets' encodings; the other messages are fixed")
    func uploadAndFixedSizes() throws {
        var (a, _) = ServerFileTests.twoConnectedClients()
        let entries = try ServerFileTests.uploadedEntries(&a.client, key: 1, value: 2, at: 3, id: 0)
        let message = ClientMessage.upload(entries, lockedServerVersion: 0)
        #expect(
            WireSize.of(message)
                == WireSize.uploadHeader + entries.reduce(0) { $0 + $1.changeset.encoded().count })
        #expect(WireSize.of(ClientMessage.mark) == WireSize.shortMessage)
        #expect(WireSize.of(ClientMessage.requestFreshCopy) == WireSize.shortMessage)
        #expect(
            WireSize.of(
                ServerMessage.error(ProtocolError(code: .badChangeset, action: .clientReset)))
                == WireSize.shortMessage)
    }
}
