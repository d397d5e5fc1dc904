//! Client reset modes and what a reset reports (REALM-SEMANTICS §4; the Swift SDK's
//! `ClientResetMode`).
//!
//! - `recoverUnsyncedChanges` (the Swift SDK's default): download a fresh copy, replay the
//!   unacknowledged local changes onto it by the recovery rules (`Replica.recover`), upload
//!   them. Fails to the manual fallback when the server has client recovery disabled
//!   (`ClientResetNoRecovery`), on a reset cycle, or when recovery or the schema check fails.
//! - `recoverOrDiscardUnsyncedChanges`: the same, but a cycle after a recovery, or recovery
//!   disabled on the server, discards instead of failing.
//! - `discardUnsyncedChanges`: the local file becomes the fresh copy; unsynced changes are
//!   dropped. Fails to the manual fallback on a cycle or a breaking schema change.
//! - `manual`: nothing automatic; the sync manager's error handler receives a client reset
//!   error, and the app backs the file up and deletes it (`immediatelyHandleError`) at once or
//!   at its next launch; the next open downloads a fresh copy.
//!
//! Before/after callbacks are counted, not run: `before` is called once an automatic reset has
//! its fresh copy (before the cycle check, as in the reference, so a failing reset calls it
//! too), `after` only when the reset completes (never after a failure, never in manual mode).

/// How a client handles a client reset. Raw values are the Swift SDK's case names.
public enum ClientResetMode: String, Sendable, CaseIterable, Codable {
    case recoverUnsyncedChanges
    case recoverOrDiscardUnsyncedChanges
    case discardUnsyncedChanges
    case manual
}

/// The mode a reset actually ran in, as the pending-reset row records it (a
/// `recoverOrDiscardUnsyncedChanges` reset that recovers is stored as a recovery).
public enum PerformedResetMode: UInt8, Sendable {
    case recover = 1
    case discard = 2
}

/// The pending-reset row (REALM-SEMANTICS §4.5): written when an automatic reset starts its
/// diff, cleared once the server has acknowledged the uploads and downloads that follow. A
/// second reset while it is present is a cycle.
public struct PendingReset: Sendable, Equatable {
    public var mode: PerformedResetMode
    public var action: ErrorAction
    public var cause: ProtocolErrorCode

    public init(mode: PerformedResetMode, action: ErrorAction, cause: ProtocolErrorCode) {
        self.mode = mode
        self.action = action
        self.cause = cause
    }
}

/// Why an automatic reset gave up and handed the file to the manual error handler (the
/// reference's `AutoClientResetFailed`). Raw values index the per-reason counters.
public enum ResetFallbackReason: Int, Sendable, CaseIterable {
    /// A second reset before the first was acknowledged, where the decision table (§4.5) fails.
    case cycleDetected = 0
    /// The server has client recovery disabled (`ClientResetNoRecovery`) and the mode is
    /// `recoverUnsyncedChanges`.
    case recoveryDisabled = 1
    /// A table or column of the local file is missing from, or differs in, the fresh copy (a
    /// breaking schema change), or recovered schema instructions do not fit it.
    case schemaMismatch = 2
    /// The local changes hold a destructive schema change, or an instruction that cannot be
    /// applied.
    case recoveryFailed = 3

    /// The name used in CSV columns and reports: the case's name.
    public var name: String { String(describing: self) }
}

/// How a completed client reset ended.
public enum ResetOutcome: UInt8, Sendable {
    /// Automatic, with the local changes recovered.
    case recovered = 1
    /// Automatic, with the local changes discarded.
    case discarded = 2
    /// The app backed the file up and deleted it (manual mode, or the manual fallback).
    case manual = 3
}

/// An error the SDK hands to the sync manager's error handler.
public struct ReportedSyncError: Sendable, Equatable {
    /// The protocol error behind it. 206 is `SyncError.Code.permissionDeniedError` (9): the
    /// handler gets a token that deletes the file. Every other cause is
    /// `SyncError.Code.clientResetError` (7): a manual reset, or the fallback of an automatic
    /// one; the handler gets the backup path and the token for `immediatelyHandleError`.
    public var cause: ProtocolErrorCode
    /// Nil in manual mode; the reason an automatic reset gave up otherwise.
    public var fallback: ResetFallbackReason?
    public var message: String
}

/// What the app's file action does to the local file.
public enum FileActionKind: UInt8, Sendable {
    /// A client reset error: the file is copied to the recovery path, then deleted.
    case backUpThenDelete = 1
    /// Permission denied: the file is deleted, with no backup.
    case delete = 2
}

/// An error waiting for the app's file action (at once with the error's token, or at the
/// app's next launch).
public struct PendingFileAction: Sendable, Equatable {
    public var kind: FileActionKind
    public var cause: ProtocolErrorCode
    public var fallback: ResetFallbackReason?
}
