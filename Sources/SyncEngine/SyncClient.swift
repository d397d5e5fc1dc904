//! The client side of one synchronized file: a local replica, the local history of unsynced
//! changesets (original and reciprocal forms), sync progress, and the session state.
//!
//! Sans-IO: the world calls `write`, `connect`, `disconnect` and `receive`, and sends whatever
//! messages they return. Client resets here are `discardUnsyncedChanges` only; the other modes
//! (recover, recover-or-discard, manual) are the subject of a later issue and are not built.

import MergeCore

public enum SessionState: UInt8, Sendable {
    /// Not connected (offline, or after a dropped connection).
    case disconnected
    /// IDENT (or a first fresh-copy request) sent; waiting for the server's answer.
    case connecting
    /// A client reset is under way: waiting for the fresh copy.
    case awaitingFreshCopy
    /// Bound and synchronizing.
    case active
}

/// One unsynced local changeset.
public struct LocalHistoryEntry: Sendable {
    /// As committed; this is what is uploaded.
    public var original: Changeset
    /// Transformed against every download integrated since; this is what later downloads are
    /// merged against.
    public var reciprocal: Changeset
    public var writeID: UInt64
}

/// What the world must do after a client call.
public struct ClientReaction: Sendable {
    public var send: ClientMessage?
    /// Set when this call started (or restarted) a client reset: the server refused the client.
    public var resetStarted: ProtocolErrorCode?
    /// Set, with the cause, when this call completed a client reset.
    public var resetCompleted: ProtocolErrorCode?
    /// Writes dropped by a discarding client reset.
    public var discardedWriteIDs: ContiguousArray<UInt64> = []
    /// Set when a downloaded changeset failed to merge or apply (a MergeCore bug or a bad
    /// changeset); the client then resets as the reference does after reporting JSON_ERROR.
    public var integrationFailure = false
    public init() {}
}

public struct SyncClient: Sendable {
    public private(set) var replica: Replica
    public private(set) var file: SaltedFileIdent?
    public private(set) var downloadCursor: DownloadCursor = .zero
    public private(set) var latestServerVersion: SaltedVersion = .zero
    /// The last client version this file produced (monotonic for the life of the file).
    public private(set) var clientVersion: UInt64 = 0
    public private(set) var unsynced: ContiguousArray<LocalHistoryEntry> = []
    public private(set) var session: SessionState = .disconnected
    /// The cause of a client reset that has started but not completed. A reset interrupted by
    /// a dropped connection starts over at the next session, as in the reference.
    public private(set) var resetInProgress: ProtocolErrorCode?
    /// Highest client version uploaded in the current session.
    private var uploadedThrough: UInt64 = 0

    public init(initialState: Replica) {
        replica = initialState
    }

    // MARK: - App calls

    /// Commits a local write: applies it to the replica and appends it to the unsynced history.
    /// Returns an UPLOAD to send when the session is active.
    public mutating func write(
        _ instructions: ContiguousArray<Instruction>, timestampMs: UInt64, writeID: UInt64
    ) throws(ApplyError) -> ClientMessage? {
        precondition(!instructions.isEmpty, "a write has at least one instruction")
        let changeset = Changeset(
            version: clientVersion + 1,
            lastIntegratedRemoteVersion: downloadCursor.serverVersion,
            originTimestamp: timestampMs, originFileIdent: 0, instructions: instructions)
        try replica.apply(changeset)
        clientVersion += 1
        unsynced.append(
            LocalHistoryEntry(original: changeset, reciprocal: changeset, writeID: writeID))
        return session == .active ? pendingUpload() : nil
    }

    // MARK: - Session

    /// Opens a session: IDENT for a known file, or a fresh-copy request for a new one.
    public mutating func connect() -> ClientMessage {
        precondition(session == .disconnected, "connect while a session is open")
        uploadedThrough = 0
        guard let file else {
            session = .connecting
            return .requestFreshCopy
        }
        session = .connecting
        return .ident(
            IdentMessage(
                file: file, download: downloadCursor,
                latestServerVersion: latestServerVersion))
    }

    /// The connection dropped (or the device went offline). A reset in progress restarts from
    /// the beginning at the next session, as in the reference.
    public mutating func disconnect() {
        session = .disconnected
        uploadedThrough = 0
    }

    /// Handles a message from the server.
    public mutating func receive(_ message: ServerMessage, transformer: inout Transformer)
        -> ClientReaction
    {
        var reaction = ClientReaction()
        switch message {
        case .error(let error):
            guard session != .disconnected else { return reaction }
            if error.code.requiresClientReset {
                reaction.resetStarted = error.code
                resetInProgress = error.code
                session = .awaitingFreshCopy
                reaction.send = .requestFreshCopy
            } else {
                // Not a reset: the session closes; the world reconnects after a back-off.
                session = .disconnected
            }
        case .freshCopy(let copy):
            guard session == .connecting || session == .awaitingFreshCopy else { return reaction }
            if session == .awaitingFreshCopy {
                reaction.resetCompleted = resetInProgress
                resetInProgress = nil
            }
            adoptFreshCopy(copy, discarded: &reaction.discardedWriteIDs)
            session = .active
            reaction.send = pendingUpload()
        case .download(let download):
            guard session == .connecting || session == .active else { return reaction }
            session = .active
            if !integrate(download, transformer: &transformer) {
                reaction.integrationFailure = true
                reaction.resetStarted = .badChangeset
                resetInProgress = .badChangeset
                session = .awaitingFreshCopy
                reaction.send = .requestFreshCopy
                return reaction
            }
            reaction.send = pendingUpload()
        }
        return reaction
    }

    // MARK: - Internals

    /// discardUnsyncedChanges: the local file becomes an exact copy of the fresh server state
    /// and takes over its ident and server version; unsynced writes are dropped.
    private mutating func adoptFreshCopy(
        _ copy: FreshCopy, discarded: inout ContiguousArray<UInt64>
    ) {
        for entry in unsynced { discarded.append(entry.writeID) }
        unsynced.removeAll(keepingCapacity: true)
        replica = copy.state
        file = copy.file
        downloadCursor = DownloadCursor(
            serverVersion: copy.latest.version, lastIntegratedClientVersion: 0)
        latestServerVersion = copy.latest
        // Client versions restart for the new ident: the server has integrated none of them.
        clientVersion = 0
        uploadedThrough = 0
    }

    private mutating func pendingUpload() -> ClientMessage? {
        var batch = ContiguousArray<UploadEntry>()
        for entry in unsynced where entry.original.version > uploadedThrough {
            batch.append(UploadEntry(changeset: entry.original, writeID: entry.writeID))
        }
        guard let last = batch.last else { return nil }
        uploadedThrough = last.changeset.version
        return .upload(batch)
    }

    /// Integrates a DOWNLOAD: each run of entries that share the same "last integrated client
    /// version" is merged against the unsynced changesets the server had not integrated when it
    /// produced them, then applied. Finally the upload acknowledgement trims the history.
    private mutating func integrate(_ download: DownloadMessage, transformer: inout Transformer)
        -> Bool
    {
        let entries = download.entries
        var start = 0
        let ident = file?.ident ?? 0
        while start < entries.count {
            let seen = entries[start].lastIntegratedRemoteVersion
            var end = start + 1
            while end < entries.count, entries[end].lastIntegratedRemoteVersion == seen { end += 1 }
            var firstLocal = 0
            while firstLocal < unsynced.count, unsynced[firstLocal].original.version <= seen {
                firstLocal += 1
            }
            if firstLocal == unsynced.count {
                // Nothing local is concurrent: apply the entries as they are, without copying.
                for index in start..<end {
                    do { try replica.apply(entries[index]) } catch { return false }
                }
                start = end
                continue
            }
            var incoming = ContiguousArray(entries[start..<end])
            var local = ContiguousArray<Changeset>()
            local.reserveCapacity(unsynced.count - firstLocal)
            for index in firstLocal..<unsynced.count { local.append(unsynced[index].reciprocal) }
            do {
                try transformer.merge(incoming: &incoming, local: &local, localFileIdent: ident)
            } catch {
                return false
            }
            for (offset, changeset) in local.enumerated() {
                unsynced[firstLocal + offset].reciprocal = changeset
            }
            for changeset in incoming {
                do { try replica.apply(changeset) } catch { return false }
            }
            start = end
        }
        downloadCursor = download.cursor
        latestServerVersion = download.latest
        let acknowledged = download.cursor.lastIntegratedClientVersion
        var drop = 0
        while drop < unsynced.count, unsynced[drop].original.version <= acknowledged { drop += 1 }
        if drop > 0 { unsynced.removeFirst(drop) }
        return true
    }
}
