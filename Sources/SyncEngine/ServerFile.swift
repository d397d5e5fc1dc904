//! The server's side of one synchronized file (a "partition" in partition-based sync).
//!
//! A `ServerFile` is a value: a backup is a copy of it (copy-on-write makes that cheap), and a
//! restore assigns the copy back. It is a sans-IO state machine: the world calls it with a
//! message and it returns what to send; it never reads a clock or draws randomness itself
//! (salts are handed in by the caller from the server's random stream).

import MergeCore

/// One entry of the server history.
public struct ServerHistoryEntry: Sendable {
    /// The integrated (transformed) changeset. `version` is the server version it produced,
    /// `lastIntegratedRemoteVersion` the origin client's client version, and `originFileIdent`
    /// the origin client file.
    public var changeset: Changeset
    public var salt: UInt64
    /// Simulator bookkeeping: which write this was (for the ledger).
    public var writeID: UInt64
    /// The length of `changeset`'s encoding, as stored (a DOWNLOAD adjusts it for the
    /// `lastIntegratedRemoteVersion` it sends; see `WireSize`).
    public var encodedBytes: Int
}

/// What the server records per client file (REALM-SEMANTICS §3.1).
public struct ClientFileRecord: Sendable {
    public var salt: UInt64
    public var lastIntegratedClientVersion: UInt64
    /// Server version up to which the client has integrated the server history, as far as the
    /// server knows from the client's uploads. Reciprocal entries at or below it are dropped.
    public var reciprocalBase: UInt64
    /// Reciprocal forms of history entries in `(reciprocalBase, current]` that did not come
    /// from this client, as this client's last merge read them, with `reciprocalEdits` on top:
    /// together, each entry transformed against this client's changesets the server integrated
    /// after it. Entries without an override are used as they stand in the history.
    var reciprocalVersions: ContiguousArray<UInt64>
    var reciprocalChangesets: ContiguousArray<Changeset>
    /// What the last merge changed in `reciprocalChangesets`, kept sparse (`LocalEdits`) and
    /// applied only when the client uploads again before downloading, so a merge costs no
    /// rewrite of the history it was merged against.
    var reciprocalEdits = LocalEdits()
    /// Simulated time (ns) the server last heard from this file: its fresh-copy request,
    /// an accepted IDENT, an UPLOAD or a MARK, or (see `World`) a compaction that found its
    /// session open. The reference's `last_seen_timestamp`.
    public var lastSeenNs: UInt64 = 0
    /// The highest `locked_server_version` the client has reported (IDENT, UPLOAD): it will
    /// never again download from, or upload a changeset based on, a lower server version.
    public var lockedServerVersion: UInt64 = 0
    /// Expired by the client max offline time (the reference sets `last_seen_timestamp` to
    /// 0): the file's next IDENT gets 222 client_file_expired, and compaction no longer keeps
    /// history for it.
    public var expired = false
}

/// What one history compaction did to a server file.
public struct CompactionOutcome: Sendable, Equatable {
    /// Client files that expired in this compaction, in ident order.
    public var expiredIdents: ContiguousArray<UInt64> = []
    /// History entries dropped (every remaining client file had integrated them).
    public var entriesTrimmed = 0
    public init() {}
}

/// The result of integrating one UPLOAD.
public struct UploadOutcome: Sendable {
    /// Server versions produced, in order, and the writes they carry.
    public var integratedWriteIDs: ContiguousArray<UInt64> = []
    /// Changesets skipped because the server had already integrated them (re-sent after a
    /// reconnect).
    public var duplicatesSkipped: Int = 0
    public var error: ProtocolError?
    public init() {}
}

public struct ServerFile: Sendable {
    public private(set) var state: Replica
    /// In chunks (`HistoryLog`): a backup shares them, and appends copy only the last.
    public private(set) var history: HistoryLog
    /// The server version of `state` before the first entry of `history`.
    public private(set) var historyBase: SaltedVersion
    /// Indexed by client file ident; index 0 is never allocated.
    public private(set) var clientFiles: ContiguousArray<ClientFileRecord?>
    /// The encoded size of `state`'s snapshot (`Replica.snapshotEncodedByteCount`) at the server
    /// version it was taken at: fresh copies of an unchanged file reuse it. A value like the
    /// rest, so a backup and a restore carry it along.
    private var snapshotBytes: (at: SaltedVersion, bytes: Int)?

    /// A new server file whose state starts as `initialState` (the schema) at version 0.
    public init(initialState: Replica, baseSalt: UInt64) {
        state = initialState
        history = HistoryLog()
        historyBase = SaltedVersion(version: 0, salt: baseSalt)
        clientFiles = [nil]
    }

    public var currentVersion: UInt64 { historyBase.version + UInt64(history.count) }

    public var latest: SaltedVersion {
        SaltedVersion(version: currentVersion, salt: salt(ofVersion: currentVersion)!)
    }

    /// The salt of a server version, or nil when the version is not in this history.
    public func salt(ofVersion version: UInt64) -> UInt64? {
        if version == historyBase.version { return historyBase.salt }
        guard version > historyBase.version, version <= currentVersion else { return nil }
        return history[Int(version - historyBase.version - 1)].salt
    }

    /// Terminate and re-enable sync: the data stays, but the history and every client file
    /// entry are forgotten, so every existing client gets 208 at its next IDENT.
    ///
    /// Idents are not re-issued after a termination: the records are forgotten but the
    /// allocation counter keeps going, so an old client's ident is unknown (208), as Atlas
    /// reports, rather than re-issued with another salt (211). A restore from a backup, in
    /// contrast, rolls the counter back too, and re-issued idents then give 211, as in the
    /// reference server's `Sync_ErrorAfterServerRestore_BadClientFileIdentSalt`.
    public mutating func terminateAndReenable(baseSalt: UInt64) {
        history = HistoryLog()
        historyBase = SaltedVersion(version: 0, salt: baseSalt)
        clientFiles = ContiguousArray(repeating: nil, count: clientFiles.count)
    }

    /// A breaking schema change: the property `table.field` is removed from the state, and,
    /// since Atlas requires it for a breaking change, sync is terminated and re-enabled.
    /// Clients that synced before then reset, and their local files still hold the property.
    public mutating func changeSchemaBreaking(
        erasing table: TableID, field: FieldID, baseSalt: UInt64
    ) {
        do {
            try state.apply(.eraseColumn(table: table, field: field))
        } catch {
            preconditionFailure("the breaking schema change does not apply: \(error)")
        }
        terminateAndReenable(baseSalt: baseSalt)
    }

    /// What the file takes to store, as a backup of it does: the state's encoded snapshot (as a
    /// fresh copy carries it) plus the history's changesets in MergeCore's encoding. The client
    /// file records and their reciprocal histories are left out.
    /// - Complexity: O(1) when the state is unchanged since it was last sized, else O(state).
    public mutating func storedByteCount() -> Int {
        snapshotByteCount() + history.encodedBytes
    }

    /// The encoded size of the state's snapshot at the latest version, cached until it changes.
    private mutating func snapshotByteCount() -> Int {
        let latest = self.latest
        if let cached = snapshotBytes, cached.at == latest { return cached.bytes }
        let bytes = state.snapshotEncodedByteCount(version: latest.version)
        snapshotBytes = (latest, bytes)
        return bytes
    }

    // MARK: - Sessions

    /// BIND with `need_client_file_ident` followed by a fresh download: allocates an ident and
    /// returns the current state, with the size of its encoded snapshot.
    /// - Complexity: O(1) (the state is shared copy-on-write), plus O(state) to size the
    ///   snapshot when the file changed since the last fresh copy.
    public mutating func allocateFreshCopy(fileSalt: UInt64, at now: UInt64) -> FreshCopy {
        let latest = self.latest
        let bytes = snapshotByteCount()
        let ident = UInt64(clientFiles.count)
        clientFiles.append(
            ClientFileRecord(
                salt: fileSalt, lastIntegratedClientVersion: 0, reciprocalBase: currentVersion,
                reciprocalVersions: [], reciprocalChangesets: [], lastSeenNs: now,
                lockedServerVersion: currentVersion))
        return FreshCopy(
            file: SaltedFileIdent(ident: ident, salt: fileSalt), latest: latest,
            state: state, payloadBytes: bytes)
    }

    /// The IDENT checks of REALM-SEMANTICS §3.2, in the reference's order. Nil means accepted.
    public func checkIdent(_ message: IdentMessage) -> ProtocolError? {
        let ident = message.file.ident
        let reset = { (code: ProtocolErrorCode) in ProtocolError(code: code, action: .clientReset) }
        guard ident >= 1, ident < UInt64(clientFiles.count), let record = clientFiles[Int(ident)]
        else { return reset(.badClientFileIdent) }
        if record.salt != message.file.salt { return reset(.divergingHistories) }
        if message.download.serverVersion < record.reciprocalBase {
            return reset(.badServerVersion)
        }
        if record.expired { return reset(.clientFileExpired) }
        if message.download.serverVersion > currentVersion { return reset(.badServerVersion) }
        if message.download.lastIntegratedClientVersion > record.lastIntegratedClientVersion {
            return reset(.badClientVersion)
        }
        let latestVersion = message.latestServerVersion.version
        if latestVersion < message.download.serverVersion || latestVersion > currentVersion {
            return reset(.badServerVersion)
        }
        if salt(ofVersion: latestVersion) != message.latestServerVersion.salt {
            return reset(.divergingHistories)
        }
        return nil
    }

    /// The entries after `cursor` that the client `ident` has not made itself, each annotated
    /// with the client's own last integrated client version at that point.
    /// - Complexity: O(current − cursor.serverVersion).
    public func download(for ident: UInt64, after cursor: DownloadCursor) -> DownloadMessage {
        precondition(cursor.serverVersion <= currentVersion, "download cursor beyond history")
        precondition(cursor.serverVersion >= historyBase.version, "download cursor before history")
        var runs = ContiguousArray<DownloadEntries.Run>()
        var sent = 0
        var payloadBytes = 0
        var ownVersion = cursor.lastIntegratedClientVersion
        // Entries read in place, and sent in place: the message shares the history's chunks
        // and names the positions it sends (`DownloadEntries`), so no changeset is copied.
        var position = Int(cursor.serverVersion - historyBase.version)
        history.forEachAddress(in: position..<history.count) { entry in
            // Three fields read in place: the entry is not copied.
            let (origin, stored, bytes) = (
                entry.pointee.changeset.originFileIdent,
                entry.pointee.changeset.lastIntegratedRemoteVersion, entry.pointee.encodedBytes
            )
            if origin == ident {
                ownVersion = stored
            } else {
                payloadBytes += bytes - varintByteCount(stored) + varintByteCount(ownVersion)
                if let last = runs.last, last.end == position,
                    last.lastIntegratedRemoteVersion == ownVersion
                {
                    runs[runs.count - 1].end += 1
                } else {
                    runs.append(
                        DownloadEntries.Run(
                            first: sent, start: position, end: position + 1,
                            lastIntegratedRemoteVersion: ownVersion))
                }
                sent += 1
            }
            position += 1
        }
        return DownloadMessage(
            cursor: DownloadCursor(
                serverVersion: currentVersion, lastIntegratedClientVersion: ownVersion),
            latest: latest, entries: DownloadEntries(history: history, runs: runs),
            payloadBytes: payloadBytes)
    }

    // MARK: - Client max offline time

    /// Whether client file `ident` (in range) expired; nil when the server has no record of it.
    /// Read in place: the record's arrays are not retained.
    @inline(__always)
    private func isExpired(_ ident: UInt64) -> Bool? {
        clientFiles.withUnsafeBufferPointer { $0[Int(ident)]?.expired }
    }

    /// The server heard from client file `ident` at `now`; `locked` is the
    /// `locked_server_version` its message reported (nil when it carried none). An unknown or
    /// expired file is left as it is.
    public mutating func noteSeen(_ ident: UInt64, at now: UInt64, locked: UInt64?) {
        // Mutated in place (optional chaining), so the record's arrays are not copied.
        guard ident >= 1, ident < UInt64(clientFiles.count),
            isExpired(ident) == false
        else { return }
        let slot = Int(ident)
        clientFiles[slot]!.lastSeenNs = max(clientFiles[slot]!.lastSeenNs, now)
        if let locked, locked > clientFiles[slot]!.lockedServerVersion {
            clientFiles[slot]!.lockedServerVersion = locked
        }
    }

    /// History compaction with a client max offline time (Atlas's "Client Max Offline Time";
    /// the reference server's history TTL): every client file last seen more than
    /// `maxOfflineNs` before `now` expires, and the history up to the lowest
    /// `lockedServerVersion` of the files that remain is dropped (no remaining client can
    /// download it or upload against it again). The salts of the dropped versions go with it,
    /// except the new base's.
    /// - Complexity: O(client files + history).
    public mutating func compact(at now: UInt64, maxOfflineNs: UInt64) -> CompactionOutcome {
        var outcome = CompactionOutcome()
        var keepFrom = currentVersion
        for ident in clientFiles.indices {
            guard var record = clientFiles[ident], !record.expired else { continue }
            if now > record.lastSeenNs, now - record.lastSeenNs > maxOfflineNs {
                record.expired = true
                record.reciprocalVersions = []
                record.reciprocalChangesets = []
                record.reciprocalEdits = LocalEdits()
                clientFiles[ident] = record
                outcome.expiredIdents.append(UInt64(ident))
            } else {
                keepFrom = min(keepFrom, record.lockedServerVersion)
            }
        }
        if keepFrom > historyBase.version {
            let drop = Int(keepFrom - historyBase.version)
            historyBase = SaltedVersion(version: keepFrom, salt: salt(ofVersion: keepFrom)!)
            history.removeFirst(drop)
            outcome.entriesTrimmed = drop
        }
        return outcome
    }

    // MARK: - Integration

    /// Integrates an UPLOAD from client file `ident`: each changeset is transformed against the
    /// history entries the client had not seen (their reciprocal forms for this client), applied
    /// to the state and appended to the history with a fresh salt.
    /// - Complexity: O(U + C) merge work for U uploaded and C concurrent instructions, in the
    ///   common case (see `Transformer`).
    public mutating func integrate(
        upload: ContiguousArray<UploadEntry>, from ident: UInt64, transformer: inout Transformer,
        nextSalt: () -> UInt64
    ) -> UploadOutcome {
        var outcome = UploadOutcome()
        guard ident >= 1, ident < UInt64(clientFiles.count), let expired = isExpired(ident) else {
            outcome.error = ProtocolError(code: .badClientFileIdent, action: .clientReset)
            return outcome
        }
        if expired {
            outcome.error = ProtocolError(code: .clientFileExpired, action: .clientReset)
            return outcome
        }
        var start = 0
        while start < upload.count {
            let base = upload[start].changeset.lastIntegratedRemoteVersion
            var end = start + 1
            while end < upload.count, upload[end].changeset.lastIntegratedRemoteVersion == base {
                end += 1
            }
            if let error = integrateRun(
                upload[start..<end], base: base, from: ident,
                transformer: &transformer, nextSalt: nextSalt,
                outcome: &outcome)
            {
                outcome.error = error
                return outcome
            }
            start = end
        }
        return outcome
    }

    private mutating func integrateRun(
        _ run: ArraySlice<UploadEntry>, base: UInt64, from ident: UInt64,
        transformer: inout Transformer, nextSalt: () -> UInt64, outcome: inout UploadOutcome
    ) -> ProtocolError? {
        let slot = Int(ident)
        // The record taken out (leaving nil) so that its arrays stay uniquely referenced and are
        // mutated in place, and put back. Swapped, not `take()`n and assigned: those copied
        // the record and destroyed the original, a retain and a release of each of its arrays
        // (about 1 % of the default day).
        var record: ClientFileRecord?
        swap(&record, &clientFiles[slot])
        let error = integrateRun(
            run, base: base, from: ident, record: &record!, transformer: &transformer,
            nextSalt: nextSalt, outcome: &outcome)
        swap(&record, &clientFiles[slot])
        return error
    }

    /// `integrateRun` with the client file's record out of `clientFiles`.
    private mutating func integrateRun(
        _ run: ArraySlice<UploadEntry>, base: UInt64, from ident: UInt64,
        record: inout ClientFileRecord, transformer: inout Transformer,
        nextSalt: () -> UInt64, outcome: inout UploadOutcome
    ) -> ProtocolError? {
        if base > currentVersion || base < historyBase.version {
            return ProtocolError(code: .badServerVersion, action: .clientReset)
        }
        var incoming = ContiguousArray<Changeset>()
        var writeIDs = ContiguousArray<UInt64>()
        var lastVersion = record.lastIntegratedClientVersion
        for entry in run {
            let clientVersion = entry.changeset.version
            if clientVersion <= record.lastIntegratedClientVersion {
                outcome.duplicatesSkipped += 1
                continue
            }
            if clientVersion <= lastVersion {
                return ProtocolError(code: .badClientVersion, action: .clientReset)
            }
            lastVersion = clientVersion
            var changeset = entry.changeset
            changeset.originFileIdent = ident
            incoming.append(changeset)
            writeIDs.append(entry.writeID)
        }
        if incoming.isEmpty { return nil }

        // Drop reciprocal overrides the client has now seen; apply the last merge's edits to
        // the rest.
        var seen = 0
        if base > record.reciprocalBase {
            while seen < record.reciprocalVersions.count, record.reciprocalVersions[seen] <= base {
                seen += 1
            }
        }
        if !record.reciprocalEdits.isEmpty {
            record.reciprocalEdits.apply(to: &record.reciprocalChangesets, from: seen)
            record.reciprocalEdits = LocalEdits()
        }
        if base > record.reciprocalBase {
            record.reciprocalVersions.removeFirst(seen)
            record.reciprocalChangesets.removeFirst(seen)
            record.reciprocalBase = base
        }

        // The concurrent entries: history after `base` that did not come from this client.
        var concurrentVersions = ContiguousArray<UInt64>()
        var concurrent = ContiguousArray<Changeset>()
        var overrideIndex = 0
        history.forEach(from: Int(base - historyBase.version)) { entry in
            let version = entry.changeset.version
            if entry.changeset.originFileIdent != ident {
                while overrideIndex < record.reciprocalVersions.count,
                    record.reciprocalVersions[overrideIndex] < version
                {
                    overrideIndex += 1
                }
                if overrideIndex < record.reciprocalVersions.count,
                    record.reciprocalVersions[overrideIndex] == version
                {
                    concurrent.append(record.reciprocalChangesets[overrideIndex])
                } else {
                    concurrent.append(entry.changeset)
                }
                concurrentVersions.append(version)
            }
        }

        if !concurrent.isEmpty {
            var edits = LocalEdits()
            do {
                try transformer.merge(
                    incoming: &incoming, local: concurrent, localEdits: &edits,
                    localFileIdent: 0)
            } catch {
                return ProtocolError(code: .badChangeset, action: .applicationBug)
            }
            record.reciprocalVersions = concurrentVersions
            record.reciprocalChangesets = concurrent
            record.reciprocalEdits = edits
        }

        for (offset, var changeset) in incoming.enumerated() {
            let clientVersion = changeset.version
            do {
                try state.apply(changeset)
            } catch {
                return ProtocolError(code: .badChangeset, action: .applicationBug)
            }
            changeset.version = currentVersion + 1
            changeset.lastIntegratedRemoteVersion = clientVersion
            history.append(
                ServerHistoryEntry(
                    changeset: changeset, salt: nextSalt(),
                    writeID: writeIDs[offset], encodedBytes: changeset.encodedByteCount))
            record.lastIntegratedClientVersion = clientVersion
            outcome.integratedWriteIDs.append(writeIDs[offset])
        }
        return nil
    }
}
