//! The client side of one synchronized file: a local replica, the local history of unsynced
//! changesets (original and reciprocal forms), sync progress, the session state, and the
//! client reset machinery (modes, cycle detection, manual fallback; see `ClientReset.swift`).
//!
//! Sans-IO: the world calls `write`, `connect`, `disconnect`, `receive` and `runFileAction`, and
//! carries out the reaction: the message to send, and what the reset did to which writes.

import MergeCore

public enum SessionState: UInt8, Sendable {
    /// Not connected (offline, or after a dropped connection).
    case disconnected
    /// IDENT (or a first fresh-copy request) sent; waiting for the server's answer.
    case connecting
    /// An automatic client reset is under way: waiting for the fresh copy.
    case awaitingFreshCopy
    /// Bound and synchronizing.
    case active
    /// An error went to the app's error handler (a manual reset, the manual fallback, or
    /// permission denied): nothing syncs until the app runs the file action (`runFileAction`:
    /// back up and delete, or delete). The app can still read and write the file.
    case inactive
}

/// A bug planted in client resets on purpose (the simulator's `sabotage`), to check that its
/// checks catch it.
public enum ResetSabotage: Sendable {
    /// Recovery replays every unsynced changeset but the last.
    case recoveryOffByOne
    /// A discarding reset keeps the upload queue: the discarded changes are uploaded anyway.
    case discardKeepsUnsynced
    /// The cycle check does not look at the pending-reset row: a reset that finds one runs as
    /// if there were none.
    case cycleCheckSkipped
    /// The pending-reset row is never cleared: the download that acknowledges the reset
    /// leaves it in place, so the next reset is taken for a cycle.
    case resetTrackerKept
    /// A client reset error's file action deletes the file without backing it up, so its
    /// unsynced writes are gone instead of kept in the backup.
    case manualDeletesWithoutBackup
}

/// One unsynced local changeset.
public struct LocalHistoryEntry: Sendable {
    /// As committed (or as recovered by a client reset); this is what is uploaded.
    public var original: Changeset
    /// Transformed against every download integrated since; this is what later downloads are
    /// merged against, and what a client reset recovers.
    public var reciprocal: Changeset
    public var writeID: UInt64
}

/// What the world must do after a client call.
public struct ClientReaction: Sendable {
    public var send: ClientMessage?
    /// Set when this call started (or restarted) a client reset: the server refused the client.
    public var resetStarted: ProtocolErrorCode?
    /// Set, with the cause, when this call completed an automatic client reset
    /// (`resetOutcome` says how).
    public var resetCompleted: ProtocolErrorCode?
    public var resetOutcome: ResetOutcome?
    /// Writes dropped by a discarding client reset.
    public var discardedWriteIDs: ContiguousArray<UInt64> = []
    /// Writes a recovering reset replayed and will upload again; `partiallyRecoveredWriteIDs`
    /// are those of them that lost some instructions to the recovery rules.
    public var recoveredWriteIDs: ContiguousArray<UInt64> = []
    public var partiallyRecoveredWriteIDs: ContiguousArray<UInt64> = []
    /// Writes whose every instruction recovery dropped: nothing of them is uploaded.
    public var droppedWriteIDs: ContiguousArray<UInt64> = []
    /// Instructions recovery dropped, per `RecoveryDropReason` (empty when nothing recovered).
    public var recoveryDrops: [UInt64] = []
    public var listsCopied: UInt64 = 0
    /// Broken recovery promises (`RecoveryPromises`): each is a SyncSim bug.
    public var promiseViolations: [String] = []
    /// The app's before-reset callback ran (every automatic reset that got its fresh copy).
    public var beforeResetCallback = false
    /// The app's after-reset callback ran (only when the automatic reset completed).
    public var afterResetCallback = false
    /// A pending-reset row was found: a reset cycle (§4.5), whether it failed or downgraded
    /// `recoverOrDiscardUnsyncedChanges` to a discard.
    public var cycleDetected = false
    /// An error for the sync manager's error handler: a manual reset, the fallback of an
    /// automatic one (its `fallback` says why it gave up), or permission denied.
    public var reportedError: ReportedSyncError?
    /// The pending-reset row was cleared: the server acknowledged what followed the reset.
    public var resetTrackerCleared = false
    /// Set when a downloaded changeset failed to merge or apply (a MergeCore bug or a bad
    /// changeset); the client then resets as the reference does after reporting JSON_ERROR.
    public var integrationFailure = false
    public init() {}
}

public struct SyncClient: Sendable {
    public let resetMode: ClientResetMode
    /// The schema-only state a new (or deleted and re-created) file starts from.
    let initialState: Replica
    public private(set) var replica: Replica
    public private(set) var file: SaltedFileIdent?
    public private(set) var downloadCursor: DownloadCursor = .zero
    public private(set) var latestServerVersion: SaltedVersion = .zero
    /// The last client version this file produced (monotonic for the life of the file).
    public private(set) var clientVersion: UInt64 = 0
    public private(set) var unsynced: ContiguousArray<LocalHistoryEntry> = []
    public private(set) var session: SessionState = .disconnected
    /// The pending-reset row (§4.5), persisted in the file: it survives disconnections.
    public private(set) var pendingReset: PendingReset?
    /// A manual reset (or fallback) waiting for the app's file action (with `.inactive`).
    public private(set) var pendingFileAction: PendingFileAction?
    /// The error that started an automatic reset still waiting for its fresh copy. A reset
    /// interrupted by a dropped connection starts over at the next session, as in the
    /// reference.
    private var resetRequest: ProtocolError?
    /// A bug planted in client resets on purpose (the scenario's `sabotage`); nil in every
    /// real run. It strikes at the next chance while `sabotageArmed`.
    public var resetSabotage: ResetSabotage?
    public var sabotageArmed = false
    /// The sabotage's chances so far: resets of its kind with unsynced changesets (for
    /// `cycleCheckSkipped`, resets that found a pending-reset row; for `resetTrackerKept`,
    /// downloads that would clear one; for `manualDeletesWithoutBackup`, client reset errors handed
    /// to the error handler).
    public private(set) var sabotageChances: UInt64 = 0
    /// Highest client version uploaded in the current session.
    private var uploadedThrough: UInt64 = 0

    public init(initialState: Replica, resetMode: ClientResetMode = .recoverUnsyncedChanges) {
        self.initialState = initialState
        self.resetMode = resetMode
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

    /// The app's file action (`SyncSession.immediatelyHandleError`, or the next launch): for a
    /// client reset error the file is backed up to the recovery path and deleted; for
    /// permission denied it is deleted. Returns the pending action and the writes the file held
    /// unsynced (now only in the backup, or gone); the client is a new, empty file that
    /// downloads a fresh copy at its next `connect`. Nil when no action is pending.
    public mutating func runFileAction() -> (
        action: PendingFileAction, unsyncedWriteIDs: ContiguousArray<UInt64>
    )? {
        guard session == .inactive, let action = pendingFileAction else { return nil }
        var writes = ContiguousArray<UInt64>()
        for entry in unsynced { writes.append(entry.writeID) }
        let sabotage = resetSabotage
        let chances = sabotageChances
        self = SyncClient(initialState: initialState, resetMode: resetMode)
        // A planted bug is in the app, not the file: the new file has it too.
        resetSabotage = sabotage
        sabotageChances = chances
        return (action, writes)
    }

    // MARK: - Session

    /// The lowest server version this file may still download from (its cursor) or upload a
    /// changeset based on (the base of its oldest unsynced changeset, uploaded or not, until
    /// the server acknowledges it): the reference's `locked_server_version`, which the client
    /// reports in IDENT and UPLOAD so that the server's history compaction keeps what follows.
    /// Never decreases for the life of a file ident.
    public var lockedServerVersion: UInt64 {
        min(
            downloadCursor.serverVersion,
            unsynced.first?.original.lastIntegratedRemoteVersion ?? .max)
    }

    /// Opens a session: IDENT for a known file, or a fresh-copy request for a new one.
    public mutating func connect() -> ClientMessage {
        precondition(session == .disconnected, "connect while a session is open or inactive")
        uploadedThrough = 0
        guard let file else {
            session = .connecting
            return .requestFreshCopy
        }
        session = .connecting
        return .ident(
            IdentMessage(
                file: file, download: downloadCursor,
                latestServerVersion: latestServerVersion,
                lockedServerVersion: lockedServerVersion))
    }

    /// The connection dropped (or the device went offline). A reset in progress restarts from
    /// the beginning at the next session, as in the reference; an inactive file stays inactive.
    public mutating func disconnect() {
        if session != .inactive { session = .disconnected }
        resetRequest = nil
        uploadedThrough = 0
    }

    /// Handles a message from the server.
    public mutating func receive(_ message: ServerMessage, transformer: inout Transformer)
        -> ClientReaction
    {
        var reaction = ClientReaction()
        switch message {
        case .error(let error):
            guard session != .disconnected, session != .inactive else { return reaction }
            if error.code.requiresClientReset {
                startReset(error, reaction: &reaction)
            } else if error.action == .deleteRealm {
                enterInactive(
                    .delete, cause: error.code, fallback: nil,
                    message: "permission denied (\(error.code.rawValue) \(error.code.name))",
                    reaction: &reaction)
            } else {
                // Not a reset: the session closes; the world reconnects after a back-off.
                session = .disconnected
            }
        case .freshCopy(let copy):
            if session == .awaitingFreshCopy, let request = resetRequest {
                performReset(copy, request: request, reaction: &reaction)
                return reaction
            }
            guard session == .connecting else { return reaction }
            // A first open (or a re-open after the file was deleted): nothing local to keep.
            adoptFreshCopy(copy, discarded: &reaction.discardedWriteIDs)
            session = .active
            reaction.send = pendingUpload()
        case .download(let download):
            guard session == .connecting || session == .active else { return reaction }
            session = .active
            if !integrate(download, transformer: &transformer) {
                reaction.integrationFailure = true
                startReset(
                    ProtocolError(code: .badChangeset, action: .clientReset), reaction: &reaction)
                return reaction
            }
            if pendingReset != nil, unsynced.isEmpty, !sabotage(.resetTrackerKept) {
                // Uploads and downloads after the reset are complete: the reset is over.
                pendingReset = nil
                reaction.resetTrackerCleared = true
            }
            reaction.send = pendingUpload()
        }
        return reaction
    }

    // MARK: - Client reset

    private mutating func startReset(_ error: ProtocolError, reaction: inout ClientReaction) {
        reaction.resetStarted = error.code
        if resetMode == .manual {
            enterInactive(
                .backUpThenDelete, cause: error.code, fallback: nil,
                message: "client reset required (\(error.code.rawValue) \(error.code.name))",
                reaction: &reaction)
            return
        }
        resetRequest = error
        session = .awaitingFreshCopy
        reaction.send = .requestFreshCopy
    }

    /// Hands the file to the app's error handler: sync stops until `runFileAction`.
    private mutating func enterInactive(
        _ kind: FileActionKind, cause: ProtocolErrorCode, fallback: ResetFallbackReason?,
        message: String, reaction: inout ClientReaction
    ) {
        session = .inactive
        resetRequest = nil
        var kind = kind
        if kind == .backUpThenDelete, sabotage(.manualDeletesWithoutBackup) { kind = .delete }
        pendingFileAction = PendingFileAction(kind: kind, cause: cause, fallback: fallback)
        reaction.reportedError = ReportedSyncError(
            cause: cause, fallback: fallback, message: message)
    }

    /// An automatic reset with its fresh copy downloaded (REALM-SEMANTICS §4.2 step 3): the
    /// before callback, the cycle check, the mode the server allows, the recovery or discard,
    /// the schema check, then the new file identity and the after callback. Any failure is the
    /// manual fallback.
    private mutating func performReset(
        _ copy: FreshCopy, request: ProtocolError, reaction: inout ClientReaction
    ) {
        resetRequest = nil
        reaction.beforeResetCallback = true
        func fail(
            _ reason: ResetFallbackReason, _ message: String, _ reaction: inout ClientReaction
        ) {
            enterInactive(
                .backUpThenDelete, cause: request.code, fallback: reason, message: message,
                reaction: &reaction)
        }

        // Cycle detection (§4.5). A row left by a reset for another action is cleared, and the
        // reset starts over as if there were none.
        if let row = pendingReset, row.action != request.action { pendingReset = nil }
        var performed: PerformedResetMode =
            resetMode == .discardUnsyncedChanges ? .discard : .recover
        if let row = pendingReset, row.action == request.action, !sabotage(.cycleCheckSkipped) {
            reaction.cycleDetected = true
            switch (row.mode, resetMode) {
            case (.discard, _), (.recover, .recoverUnsyncedChanges), (.recover, .manual):
                return fail(
                    .cycleDetected,
                    "a previous client reset (\(row.mode), for \(row.cause.rawValue) \(row.cause.name)) did not complete; giving up to prevent a cycle",
                    &reaction)
            case (.recover, .recoverOrDiscardUnsyncedChanges), (.recover, .discardUnsyncedChanges):
                performed = .discard
            }
        }
        if request.action == .clientResetNoRecovery, performed == .recover {
            guard resetMode == .recoverOrDiscardUnsyncedChanges else {
                return fail(
                    .recoveryDisabled,
                    "client recovery is disabled on the server; recoverUnsyncedChanges cannot run",
                    &reaction)
            }
            performed = .discard
        }
        pendingReset = PendingReset(mode: performed, action: request.action, cause: request.code)

        var state = copy.state
        var recovered: [RecoveredChangeset] = []
        if performed == .recover {
            let local = unsynced.map(\.reciprocal)
            var replayed = local
            if !local.isEmpty, sabotage(.recoveryOffByOne) { replayed.removeLast() }
            do {
                let recovery = try replica.recover(replayed, onto: copy.state)
                state = recovery.state
                recovered = recovery.changesets
                reaction.recoveryDrops = recovery.drops
                reaction.listsCopied = recovery.listsCopied
                reaction.promiseViolations = RecoveryPromises.violations(
                    localChanges: local, preReset: replica, fresh: copy.state,
                    recovered: state)
            } catch {
                return fail(
                    error.reason == .schemaMismatch ? .schemaMismatch : .recoveryFailed,
                    "recovery failed: \(error.message)", &reaction)
            }
        }
        if let missing = replica.schemaMissing(from: state) {
            return fail(.schemaMismatch, "cannot reset: \(missing)", &reaction)
        }

        // The reset diff succeeded: the file takes the fresh copy's identity and state.
        if performed == .discard {
            for entry in unsynced { reaction.discardedWriteIDs.append(entry.writeID) }
        }
        let previous = unsynced
        takeIdentity(of: copy, state: state)
        if performed == .discard, !previous.isEmpty, sabotage(.discardKeepsUnsynced) {
            // The upload queue survives the discard: the old changes go to the server, which
            // the fresh local state never had.
            for entry in previous {
                clientVersion += 1
                var changeset = entry.original
                changeset.version = clientVersion
                changeset.lastIntegratedRemoteVersion = copy.latest.version
                unsynced.append(
                    LocalHistoryEntry(
                        original: changeset, reciprocal: changeset, writeID: entry.writeID))
            }
        }
        for (entry, result) in zip(previous, recovered) {
            if result.changeset.instructions.isEmpty {
                reaction.droppedWriteIDs.append(entry.writeID)
                continue
            }
            reaction.recoveredWriteIDs.append(entry.writeID)
            if result.droppedCount > 0 {
                reaction.partiallyRecoveredWriteIDs.append(entry.writeID)
            }
            clientVersion += 1
            var changeset = result.changeset
            changeset.version = clientVersion
            changeset.lastIntegratedRemoteVersion = copy.latest.version
            changeset.originFileIdent = 0
            unsynced.append(
                LocalHistoryEntry(
                    original: changeset, reciprocal: changeset, writeID: entry.writeID))
        }
        reaction.afterResetCallback = true
        reaction.resetCompleted = request.code
        reaction.resetOutcome = performed == .recover ? .recovered : .discarded
        session = .active
        reaction.send = pendingUpload() ?? .mark
    }

    // MARK: - Internals

    /// A chance for the planted bug `kind`: counts it, and says whether it strikes now.
    private mutating func sabotage(_ kind: ResetSabotage) -> Bool {
        guard resetSabotage == kind else { return false }
        sabotageChances += 1
        return sabotageArmed
    }

    /// A first open: the local file becomes the fresh copy and takes over its ident and server
    /// version. A new file holds no unsynced writes (the app writes after its first download);
    /// any there would be are dropped.
    private mutating func adoptFreshCopy(
        _ copy: FreshCopy, discarded: inout ContiguousArray<UInt64>
    ) {
        for entry in unsynced { discarded.append(entry.writeID) }
        takeIdentity(of: copy, state: copy.state)
    }

    /// The file takes the fresh copy's ident and server version, with `state` as its content
    /// and no unsynced changesets.
    private mutating func takeIdentity(of copy: FreshCopy, state: Replica) {
        unsynced.removeAll(keepingCapacity: true)
        replica = state
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
        return .upload(batch, lockedServerVersion: lockedServerVersion)
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
            let seen = entries.lastIntegratedRemoteVersion(start)
            let end = entries.endOfVersion(from: start)
            var firstLocal = 0
            while firstLocal < unsynced.count, unsynced[firstLocal].original.version <= seen {
                firstLocal += 1
            }
            if firstLocal == unsynced.count {
                // Nothing local is concurrent: apply the entries as the server's history holds
                // them (the call retains each changeset; nothing is copied into the message).
                let applied = entries.forEach(in: start..<end) { changeset in
                    do { try replica.apply(changeset) } catch { return false }
                    return true
                }
                if !applied { return false }
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
