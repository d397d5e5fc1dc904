import SyncEngine

/// The reset audit: every automatic client reset's decision, the pending-reset row, the
/// callbacks and the file action, checked against REALM-SEMANTICS §4.5 and §4.6 as written,
/// apart from the client's own code.
///
/// The client (`SyncClient.performReset`) decides a reset from the row it keeps. The audit
/// keeps its own copy of that row, written and cleared by the documented rules from what the
/// world sees the client do (a reset that got past the cycle check writes it; a download that
/// leaves nothing unsynced clears it; deleting the file deletes it), and works out each
/// decision from the table below. The recovery promises (`RecoveryPromises`) check what a
/// recovery wrote; this checks the path a reset took. A reset sabotage that skips the cycle
/// check, or keeps the row past its acknowledgement, or deletes a file with no backup, is
/// caught here (`ResetAuditTests`).
struct ResetAudit {
    /// What the audit reads of a client after a message: four of its fields, read in place
    /// (`World.seenByAudit`), not a copy of the client (the audit runs at every message a
    /// client receives).
    struct Seen {
        var mode: ClientResetMode
        var active: Bool
        var nothingUnsynced: Bool
        var row: PendingReset?
    }

    /// What the rules make of a reset once its fresh copy is in: go on and recover or
    /// discard, or give up to the manual handler before the row is written.
    enum Decision: Equatable {
        case proceed(PerformedResetMode)
        case fail(ResetFallbackReason)
    }

    /// REALM-SEMANTICS §4.5's decision table, then §4.2's `ClientResetNoRecovery` rule.
    ///
    /// | pending row (same action) | mode | result |
    /// | --- | --- | --- |
    /// | none (or another action's) | discard | discard |
    /// | none (or another action's) | recover, recoverOrDiscard | recover |
    /// | discard | any | fail: cycle |
    /// | recover | recover | fail: cycle |
    /// | recover | recoverOrDiscard, discard | discard |
    ///
    /// Then, for a recovery when the server forbids it: `recoverUnsyncedChanges` fails,
    /// `recoverOrDiscardUnsyncedChanges` discards.
    static func decide(row: PendingReset?, mode: ClientResetMode, action: ErrorAction) -> Decision {
        precondition(mode != .manual, "a manual reset decides nothing")
        var performed: PerformedResetMode = mode == .discardUnsyncedChanges ? .discard : .recover
        if let row, row.action == action {
            if row.mode == .discard || mode == .recoverUnsyncedChanges {
                return .fail(.cycleDetected)
            }
            performed = .discard
        }
        if performed == .recover, action == .clientResetNoRecovery {
            guard mode == .recoverOrDiscardUnsyncedChanges else {
                return .fail(.recoveryDisabled)
            }
            performed = .discard
        }
        return .proceed(performed)
    }

    /// One client's side of the audit.
    struct Client {
        /// The row the rules say the client's file holds.
        var row: PendingReset?
        /// The error behind the reset under way (the last one that started it).
        var requested: ProtocolError?
        /// The file's row differs from `row` and that was reported: not again until they agree.
        var rowDiffers = false
    }

    var clients: [Client]
    /// Broken rules, in the order found: each names the client and the rule.
    var violations: [String] = []

    init(clients count: Int) {
        clients = Array(repeating: Client(), count: count)
    }

    /// Checks one client reaction against the rules and moves the audit's row as they say.
    /// `message` is what the client received, `sync` the client after it.
    mutating func check(
        client: UInt32, message: ServerMessage, reaction: ClientReaction, sync: Seen
    ) {
        let slot = Int(client)
        if reaction.resetStarted != nil {
            // A download the client could not integrate resets with `ClientReset` (212).
            if case .error(let error) = message {
                clients[slot].requested = error
            } else {
                clients[slot].requested = ProtocolError(code: .badChangeset, action: .clientReset)
            }
        }
        let mode = sync.mode
        if reaction.beforeResetCallback {
            decided(client: client, mode: mode, reaction: reaction)
        } else if reaction.afterResetCallback || reaction.resetCompleted != nil {
            note(client, "a reset completed without its fresh copy's before callback")
        }
        if reaction.afterResetCallback != (reaction.resetCompleted != nil) {
            note(client, "the after callback must run exactly when an automatic reset completes")
        }
        if let error = reaction.reportedError, error.cause != .permissionDenied {
            if (error.fallback == nil) != (mode == .manual) {
                note(
                    client,
                    mode == .manual
                        ? "a manual reset reported a fallback reason"
                        : "an automatic reset reached the error handler without a fallback reason")
            }
        }
        if case .download = message, reaction.resetStarted == nil, sync.active,
            sync.nothingUnsynced
        {
            // Uploads and downloads after the reset are complete: the row is cleared.
            clients[slot].row = nil
        }
        compareRow(client: client, sync: sync)
    }

    /// The reset got its fresh copy (its before callback ran): the rules' decision against
    /// the one the client took.
    private mutating func decided(client: UInt32, mode: ClientResetMode, reaction: ClientReaction) {
        let slot = Int(client)
        guard mode != .manual else {
            return note(client, "a manual reset ran the before callback")
        }
        guard let request = clients[slot].requested else {
            return note(client, "a reset got a fresh copy with no error behind it")
        }
        let action = request.action
        if let row = clients[slot].row, row.action != action {
            // "A row with a different action is cleared, and the reset starts over" (§4.5).
            clients[slot].row = nil
        }
        let expected = ResetAudit.decide(row: clients[slot].row, mode: mode, action: action)
        let fallback = reaction.reportedError?.fallback
        let outcome = reaction.resetOutcome
        switch expected {
        case .fail(let reason):
            if fallback != reason {
                note(
                    client,
                    "\(Self.describe(row: clients[slot].row)), mode \(mode.rawValue), action \(action): the rules give up (\(reason.name)), the client \(Self.describe(outcome: outcome, fallback: fallback))"
                )
            }
        case .proceed(let performed):
            // Past the cycle check the row is written, and a failure after it leaves it there.
            let allowed: Bool
            switch (outcome, fallback) {
            case (.recovered?, nil): allowed = performed == .recover
            case (.discarded?, nil): allowed = performed == .discard
            case (nil, .schemaMismatch?): allowed = true
            case (nil, .recoveryFailed?): allowed = performed == .recover
            default: allowed = false
            }
            if !allowed {
                note(
                    client,
                    "\(Self.describe(row: clients[slot].row)), mode \(mode.rawValue), action \(action): the rules \(performed == .recover ? "recover" : "discard"), the client \(Self.describe(outcome: outcome, fallback: fallback))"
                )
            }
            clients[slot].row = PendingReset(
                mode: performed, action: action, cause: request.code)
        }
        clients[slot].requested = nil
    }

    /// The app ran its file action: a client reset error backs the file up before deleting
    /// it (§4.6), permission denied deletes it; either way the row goes with the file.
    mutating func fileAction(client: UInt32, action: PendingFileAction, sync: Seen) {
        let slot = Int(client)
        let backUp = action.cause != .permissionDenied
        if backUp != (action.kind == .backUpThenDelete) {
            note(
                client,
                backUp
                    ? "a client reset error's file action deleted the file without backing it up"
                    : "a permission-denied file action backed the file up")
        }
        clients[slot] = Client()
        compareRow(client: client, sync: sync)
    }

    private mutating func compareRow(client: UInt32, sync: Seen) {
        let held = sync.row
        let row = clients[Int(client)].row
        let differed = clients[Int(client)].rowDiffers
        clients[Int(client)].rowDiffers = held != row
        if held != row, !differed {
            // Reported once, not at every message until the two agree again.
            note(
                client,
                "the file's pending-reset row is \(Self.describe(row: held)), the rules say \(Self.describe(row: row))"
            )
        }
    }

    private mutating func note(_ client: UInt32, _ rule: String) {
        violations.append("client \(client): reset audit: \(rule)")
    }

    static func describe(row: PendingReset?) -> String {
        guard let row else { return "no pending-reset row" }
        return
            "a pending \(row.mode == .recover ? "recovery" : "discard") row for \(row.action) (\(row.cause.rawValue))"
    }

    static func describe(outcome: ResetOutcome?, fallback: ResetFallbackReason?) -> String {
        if let fallback { return "gave up (\(fallback.name))" }
        switch outcome {
        case .recovered?: return "recovered"
        case .discarded?: return "discarded"
        case .manual?: return "reset by hand"
        case nil: return "did neither"
        }
    }
}
