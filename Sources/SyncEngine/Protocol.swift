//! Protocol messages between a client file and the server (REALM-SEMANTICS §3.1), reduced to
//! what SyncSim models: IDENT (which here also carries BIND), UPLOAD, DOWNLOAD, a fresh-copy
//! request for client resets, and ERROR.

import MergeCore

/// A server version with its salt. Each server version has a random 63-bit salt drawn from the
/// server's stream, so a server restored from a backup that re-advances to the same version
/// number is told apart by the salt (error 211).
public struct SaltedVersion: Hashable, Sendable {
    public var version: UInt64
    public var salt: UInt64
    public init(version: UInt64, salt: UInt64) {
        self.version = version
        self.salt = salt
    }
    public static let zero = SaltedVersion(version: 0, salt: 0)
}

/// A client file identity as allocated by the server.
public struct SaltedFileIdent: Hashable, Sendable {
    public var ident: UInt64
    public var salt: UInt64
    public init(ident: UInt64, salt: UInt64) {
        self.ident = ident
        self.salt = salt
    }
}

/// The download cursor: the server version the client has integrated, and the last of its own
/// client versions that the server had integrated at that server version.
public struct DownloadCursor: Hashable, Sendable {
    public var serverVersion: UInt64
    public var lastIntegratedClientVersion: UInt64
    public init(serverVersion: UInt64, lastIntegratedClientVersion: UInt64) {
        self.serverVersion = serverVersion
        self.lastIntegratedClientVersion = lastIntegratedClientVersion
    }
    public static let zero = DownloadCursor(serverVersion: 0, lastIntegratedClientVersion: 0)
}

/// One changeset in an UPLOAD. `writeID` is simulator bookkeeping (the write ledger), not part
/// of the modelled protocol; the server stores it beside the history entry it produces.
public struct UploadEntry: Sendable {
    public var changeset: Changeset
    public var writeID: UInt64
    public init(changeset: Changeset, writeID: UInt64) {
        self.changeset = changeset
        self.writeID = writeID
    }
}

/// One changeset in a DOWNLOAD. `changeset.version` is the server version it produced and
/// `changeset.lastIntegratedRemoteVersion` is, for the receiving client, the last of its own
/// client versions that the server had integrated before this entry.
public typealias DownloadEntry = Changeset

/// A message from a client to the server.
public enum ClientMessage: Sendable {
    /// Ask for a new client file ident and a fresh copy of the server state (first open, or a
    /// client reset's fresh download).
    case requestFreshCopy
    /// Resume syncing an existing client file.
    case ident(IdentMessage)
    /// UPLOAD: the changesets, and the client's `locked_server_version` (see
    /// `IdentMessage.lockedServerVersion`).
    case upload(ContiguousArray<UploadEntry>, lockedServerVersion: UInt64)
    /// MARK: ask the server for a download (possibly empty) once everything integrated so far
    /// has been sent; the client uses the answer as "download complete" (to clear its
    /// pending-reset row after a reset that had nothing to upload).
    case mark
}

public struct IdentMessage: Sendable {
    public var file: SaltedFileIdent
    public var download: DownloadCursor
    public var latestServerVersion: SaltedVersion
    /// The lowest server version the client may still download from or upload a changeset
    /// based on: its download cursor, or the base of its oldest unsynced changeset when that is
    /// lower (the reference's `locked_server_version`). History compaction keeps what follows.
    public var lockedServerVersion: UInt64
    public init(
        file: SaltedFileIdent, download: DownloadCursor, latestServerVersion: SaltedVersion,
        lockedServerVersion: UInt64
    ) {
        self.file = file
        self.download = download
        self.latestServerVersion = latestServerVersion
        self.lockedServerVersion = lockedServerVersion
    }
}

/// A message from the server to a client.
public enum ServerMessage: Sendable {
    /// A fresh copy: a new file ident and the server state at `latest`.
    case freshCopy(FreshCopy)
    case download(DownloadMessage)
    case error(ProtocolError)
}

public struct FreshCopy: Sendable {
    public var file: SaltedFileIdent
    public var latest: SaltedVersion
    public var state: Replica
    /// The length of `state`'s encoded snapshot (`Replica.snapshotChangesets`): what the copy
    /// carries on the wire besides its header (`WireSize`).
    public var payloadBytes: Int
    public init(file: SaltedFileIdent, latest: SaltedVersion, state: Replica, payloadBytes: Int) {
        self.file = file
        self.latest = latest
        self.state = state
        self.payloadBytes = payloadBytes
    }
}

public struct DownloadMessage: Sendable {
    /// The cursor after integrating `entries`.
    public var cursor: DownloadCursor
    public var latest: SaltedVersion
    public var entries: DownloadEntries
    /// The total length of `entries`' encodings, as sent.
    public var payloadBytes: Int
    public init(
        cursor: DownloadCursor, latest: SaltedVersion, entries: DownloadEntries,
        payloadBytes: Int
    ) {
        self.cursor = cursor
        self.latest = latest
        self.entries = entries
        self.payloadBytes = payloadBytes
    }

    /// Leaves the first entry out, and its bytes with it.
    public mutating func removeFirstEntry() {
        payloadBytes -= entries.removeFirst()
    }
}

/// The changesets of a DOWNLOAD (`DownloadEntry`), read where the server's history holds them:
/// the message shares the history's chunks (`HistoryLog`) and names the positions it sends, in
/// runs, each with the `lastIntegratedRemoteVersion` its entries carry for the receiver. An
/// entry is copied, its version set, only when it is read by subscript; `forEach(in:_:)` reads
/// the changesets as stored, for a client that applies them as they are (a call that takes
/// one still retains it for the call).
public struct DownloadEntries: RandomAccessCollection, Sendable {
    /// Consecutive history positions sent, the entries `first ..< first + (end - start)`.
    struct Run: Sendable {
        var first: Int
        var start: Int
        var end: Int
        var lastIntegratedRemoteVersion: UInt64
    }

    /// The history read (a copy that shares the server's chunks; empty when nothing is sent).
    private var history: HistoryLog
    private var runs: ContiguousArray<Run>
    public private(set) var count: Int

    /// The entries of `history` at the runs' positions (`runs`: ascending, each non-empty).
    init(history: HistoryLog, runs: ContiguousArray<Run>) {
        self.history = runs.isEmpty ? HistoryLog() : history
        self.runs = runs
        count = runs.last.map { $0.first + $0.end - $0.start } ?? 0
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// The index in `runs` of the run holding entry `index`.
    private func runIndex(holding index: Int) -> Int {
        var (low, high) = (0, runs.count - 1)
        while low < high {
            let middle = (low + high + 1) / 2
            if runs[middle].first <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The end of the entries from `start` on that carry entry `start`'s
    /// `lastIntegratedRemoteVersion` (runs in a row with one version are one stretch).
    public func endOfVersion(from start: Int) -> Int {
        precondition(start >= 0 && start < count, "download entry out of range")
        var index = runIndex(holding: start)
        let version = runs[index].lastIntegratedRemoteVersion
        while index + 1 < runs.count && runs[index + 1].lastIntegratedRemoteVersion == version {
            index += 1
        }
        return runs[index].first + runs[index].end - runs[index].start
    }

    /// Entry `index`, as sent: a copy of the stored changeset with the receiver's
    /// `lastIntegratedRemoteVersion`.
    public subscript(index: Int) -> DownloadEntry {
        precondition(index >= 0 && index < count, "download entry out of range")
        let run = runs[runIndex(holding: index)]
        var changeset = history[run.start + index - run.first].changeset
        changeset.lastIntegratedRemoteVersion = run.lastIntegratedRemoteVersion
        return changeset
    }

    /// The receiver's `lastIntegratedRemoteVersion` of entry `index`.
    public func lastIntegratedRemoteVersion(_ index: Int) -> UInt64 {
        precondition(index >= 0 && index < count, "download entry out of range")
        return runs[runIndex(holding: index)].lastIntegratedRemoteVersion
    }

    /// Calls `body` with the changesets of entries `indices`, in order, as the history stores
    /// them (their `lastIntegratedRemoteVersion` the server's, not the receiver's), without
    /// copying them; stops at the first false.
    /// - Returns: false when `body` stopped it.
    public func forEach(in indices: Range<Int>, _ body: (borrowing Changeset) -> Bool) -> Bool {
        precondition(
            indices.lowerBound >= 0 && indices.upperBound <= count,
            "download entries out of range")
        guard !indices.isEmpty else { return true }
        var go = true
        var current = runIndex(holding: indices.lowerBound)
        var next = indices.lowerBound
        while go && next < indices.upperBound {
            let run = runs[current]
            let upTo = Swift.min(indices.upperBound, run.first + run.end - run.start)
            let positions = (run.start + next - run.first)..<(run.start + upTo - run.first)
            history.forEach(in: positions) { entry in
                if go { go = body(entry.changeset) }
            }
            next = upTo
            current += 1
        }
        return go
    }

    /// Leaves the first entry out.
    /// - Returns: its encoded length, as sent.
    mutating func removeFirst() -> Int {
        precondition(count > 0, "no download entry to remove")
        let run = runs[0]
        let stored = history[run.start]
        let bytes =
            stored.encodedBytes
            - varintByteCount(stored.changeset.lastIntegratedRemoteVersion)
            + varintByteCount(run.lastIntegratedRemoteVersion)
        if run.end - run.start == 1 {
            runs.removeFirst()
        } else {
            runs[0].start += 1
            runs[0].first += 1
        }
        for index in runs.indices { runs[index].first -= 1 }
        count -= 1
        return bytes
    }
}

/// How many bytes a message puts on the wire, in SyncSim's model: a fixed header per message
/// kind (framing, idents, versions and salts, as the reference's text headers carry them),
/// plus the changesets in MergeCore's compact encoding, and for a fresh copy the encoded
/// snapshot of the state. The reference's own encoding and file format differ, so these are
/// the sizes of the content each message must carry, not the reference's byte counts.
public enum WireSize {
    /// IDENT (with BIND): file ident and salt, download cursor, latest version and salt,
    /// locked version.
    public static let identHeader = 64
    /// UPLOAD: progress fields and the changeset count.
    public static let uploadHeader = 32
    /// MARK, a fresh-copy request and ERROR: a short header.
    public static let shortMessage = 16
    /// DOWNLOAD: cursor, latest version and salt, entry count.
    public static let downloadHeader = 40
    /// A fresh copy: new file ident and salt, latest version and salt, snapshot length.
    public static let freshCopyHeader = 48

    public static func of(_ message: ClientMessage) -> Int {
        switch message {
        case .requestFreshCopy, .mark: shortMessage
        case .ident: identHeader
        case .upload(let entries, _):
            entries.reduce(uploadHeader) { $0 + $1.changeset.encodedByteCount }
        }
    }

    public static func of(_ message: ServerMessage) -> Int {
        switch message {
        case .freshCopy(let copy): freshCopyHeader + copy.payloadBytes
        case .download(let download): downloadHeader + download.payloadBytes
        case .error: shortMessage
        }
    }
}

/// A session-level protocol error (REALM-SEMANTICS §3.3). Codes are the reference's and are
/// never renumbered.
public enum ProtocolErrorCode: UInt16, Sendable, CaseIterable, Comparable {
    /// The user may not read (or write) this partition any more: not a reset; the SDK reports
    /// `permissionDeniedError` and deletes the file (action `DeleteRealm`).
    case permissionDenied = 206
    case badClientFileIdent = 208
    case badServerVersion = 209
    case badClientVersion = 210
    case divergingHistories = 211
    case badChangeset = 212
    case clientFileExpired = 222

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The codes that start a client reset, and 212 (a download that failed to integrate,
    /// which resets too): the causes the per-cause reset counters are kept for, in order.
    public static let resetCauses: [ProtocolErrorCode] = allCases.filter { $0 != .permissionDenied }

    /// True for every code whose client status is SyncClientResetRequired.
    public var requiresClientReset: Bool {
        switch self {
        case .badClientFileIdent, .badServerVersion, .badClientVersion, .divergingHistories,
            .clientFileExpired:
            true
        case .badChangeset, .permissionDenied:
            false
        }
    }

    public var name: String {
        switch self {
        case .permissionDenied: "permission_denied"
        case .badClientFileIdent: "bad_client_file_ident"
        case .badServerVersion: "bad_server_version"
        case .badClientVersion: "bad_client_version"
        case .divergingHistories: "diverging_histories"
        case .badChangeset: "bad_changeset"
        case .clientFileExpired: "client_file_expired"
        }
    }
}

/// What the server tells the client to do about an error (the JSON_ERROR `action` field).
public enum ErrorAction: UInt8, Sendable {
    case clientReset = 1
    /// A client reset on a server with client recovery disabled: `recoverUnsyncedChanges`
    /// fails to the manual fallback, `recoverOrDiscardUnsyncedChanges` discards.
    case clientResetNoRecovery = 2
    case applicationBug = 3
    /// Delete the local file, without a backup (permission denied).
    case deleteRealm = 4
}

public struct ProtocolError: Sendable, Equatable {
    public var code: ProtocolErrorCode
    public var action: ErrorAction
    public init(code: ProtocolErrorCode, action: ErrorAction) {
        self.code = code
        self.action = action
    }
}
