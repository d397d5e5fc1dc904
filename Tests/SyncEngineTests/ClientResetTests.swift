//! The client reset modes, the pending-reset cycle table, the server's Client Recovery setting
//! and the schema check, on one client and one server file, without a simulator.

import MergeCore
import Testing

@testable import SyncEngine

/// One client and its server file, and a loop that carries messages both ways at once.
struct ResetHarness {
    var server = ServerFile(initialState: ServerFileTests.schema(), baseSalt: 7)
    var client: SyncClient
    var transformer = Transformer()
    var salt: UInt64 = 1_000
    /// When true, reset errors carry `ClientResetNoRecovery` (Client Recovery switched off).
    var recoveryDisabled = false
    /// Every reaction, in order.
    var reactions: [ClientReaction] = []

    init(_ mode: ClientResetMode) {
        client = SyncClient(initialState: ServerFileTests.schema(), resetMode: mode)
    }

    /// The server's answer to one client message.
    mutating func serve(_ message: ClientMessage) -> ServerMessage {
        switch message {
        case .requestFreshCopy:
            salt += 1
            return .freshCopy(server.allocateFreshCopy(fileSalt: salt, at: 0))
        case .ident(let ident):
            if var error = server.checkIdent(ident) {
                if recoveryDisabled { error.action = .clientResetNoRecovery }
                return .error(error)
            }
            return .download(server.download(for: ident.file.ident, after: ident.download))
        case .upload(let entries, _):
            let ident = client.file!.ident
            var salts = salt
            let outcome = server.integrate(
                upload: entries, from: ident, transformer: &transformer,
                nextSalt: {
                    salts += 1
                    return salts
                })
            salt = salts
            #expect(outcome.error == nil)
            return .download(server.download(for: ident, after: client.downloadCursor))
        case .mark:
            return .download(server.download(for: client.file!.ident, after: client.downloadCursor))
        }
    }

    /// (Re)connects and carries messages until the client has nothing to send, or until `limit`
    /// messages went to the server (to stop a conversation half-way).
    mutating func converse(limit: Int = 100) {
        if client.session != .disconnected, client.session != .inactive { client.disconnect() }
        var next: ClientMessage? = client.connect()
        var sent = 0
        while let message = next, sent < limit {
            sent += 1
            let reaction = client.receive(serve(message), transformer: &transformer)
            reactions.append(reaction)
            next = reaction.send
        }
    }

    mutating func write(key: Int64, value: Int64, id: UInt64) {
        _ = ServerFileTests.write(&client, key: key, value: value, at: 10 + id, id: id)
    }

    /// Synced write 0 (key 1), then offline writes 1 (key 2) and 2 (key 1 again), then sync is
    /// terminated and re-enabled on the server.
    static func offlineWritesThenTermination(_ mode: ClientResetMode) -> ResetHarness {
        var harness = ResetHarness(mode)
        harness.converse()
        harness.write(key: 1, value: 10, id: 0)
        harness.converse()
        #expect(harness.client.unsynced.isEmpty)
        harness.client.disconnect()
        harness.write(key: 2, value: 20, id: 1)
        harness.write(key: 1, value: 11, id: 2)
        harness.server.terminateAndReenable(baseSalt: 99)
        harness.reactions = []
        return harness
    }

    var outcomes: [ResetOutcome] { reactions.compactMap(\.resetOutcome) }
    var fallbacks: [ResetFallbackReason] { reactions.compactMap { $0.reportedError?.fallback } }
}

private let key1 = ObjectRef(table: ServerFileTests.table, key: .int(1))
private let key2 = ObjectRef(table: ServerFileTests.table, key: .int(2))

@Suite struct ClientResetTests {
    @Test func recoverReplaysTheUnsyncedWritesAndClearsItsRowOnceAcknowledged() {
        var harness = ResetHarness.offlineWritesThenTermination(.recoverUnsyncedChanges)
        harness.converse()
        let reset = harness.reactions.first { $0.resetOutcome != nil }
        #expect(harness.reactions.first?.resetStarted == .badClientFileIdent)
        #expect(reset?.resetOutcome == .recovered)
        #expect(reset?.recoveredWriteIDs == [1, 2])
        #expect(reset?.beforeResetCallback == true && reset?.afterResetCallback == true)
        #expect(reset?.promiseViolations == [])
        #expect(harness.reactions.contains { $0.resetTrackerCleared })
        #expect(harness.client.pendingReset == nil)
        #expect(harness.client.unsynced.isEmpty)
        #expect(harness.server.state.value(of: key1, field: 1) == .int(11))
        #expect(harness.server.state.value(of: key2, field: 1) == .int(20))
        #expect(harness.client.replica == harness.server.state)
    }

    @Test func discardDropsTheUnsyncedWritesAndMarksToFinish() {
        var harness = ResetHarness.offlineWritesThenTermination(.discardUnsyncedChanges)
        harness.converse()
        let reset = harness.reactions.first { $0.resetOutcome != nil }
        #expect(reset?.resetOutcome == .discarded)
        #expect(reset?.discardedWriteIDs == [1, 2])
        if case .mark = reset?.send {} else { Issue.record("a reset with nothing to upload marks") }
        #expect(harness.client.pendingReset == nil)
        #expect(!harness.server.state.contains(key2))
        #expect(harness.server.state.value(of: key1, field: 1) == .int(10))
        #expect(harness.client.replica == harness.server.state)
    }

    @Test func manualHandsTheFileToTheErrorHandlerUntilTheFileAction() {
        var harness = ResetHarness.offlineWritesThenTermination(.manual)
        harness.converse()
        #expect(harness.client.session == .inactive)
        let reported = harness.reactions.last?.reportedError
        #expect(reported?.cause == .badClientFileIdent)
        #expect(reported?.fallback == nil)
        #expect(!harness.reactions.contains { $0.beforeResetCallback || $0.afterResetCallback })
        // The app still writes to the file; it all goes to the backup.
        harness.write(key: 3, value: 30, id: 3)
        harness.client.disconnect()
        #expect(harness.client.session == .inactive)
        let action = harness.client.runFileAction()
        #expect(action?.action.cause == .badClientFileIdent)
        #expect(action?.action.kind == .backUpThenDelete)
        #expect(action?.unsyncedWriteIDs == [1, 2, 3])
        #expect(harness.client.file == nil)
        harness.converse()
        #expect(harness.client.session == .active)
        #expect(harness.client.replica == harness.server.state)
        #expect(harness.client.runFileAction() == nil)
    }

    /// A second reset before the first was acknowledged (§4.5): the recovered upload is never
    /// delivered, and the server forgets the client again.
    static func secondResetBeforeAcknowledgement(_ mode: ClientResetMode) -> ResetHarness {
        var harness = ResetHarness.offlineWritesThenTermination(mode)
        // IDENT (208), then the fresh-copy request: stop before the upload or mark.
        harness.converse(limit: 2)
        #expect(harness.client.pendingReset != nil)
        harness.client.disconnect()
        harness.server.terminateAndReenable(baseSalt: 98)
        harness.reactions = []
        harness.converse()
        return harness
    }

    @Test func aCycleFailsRecoverToTheManualFallback() {
        let harness = ClientResetTests.secondResetBeforeAcknowledgement(.recoverUnsyncedChanges)
        #expect(harness.fallbacks == [.cycleDetected])
        #expect(harness.outcomes == [])
        let failed = harness.reactions.last
        #expect(failed?.cycleDetected == true)
        #expect(failed?.beforeResetCallback == true)
        #expect(failed?.afterResetCallback == false)
        #expect(harness.client.session == .inactive)
    }

    @Test func aCycleDowngradesRecoverOrDiscardToADiscard() {
        let harness = ClientResetTests.secondResetBeforeAcknowledgement(
            .recoverOrDiscardUnsyncedChanges)
        #expect(harness.fallbacks == [])
        #expect(harness.outcomes == [.discarded])
        #expect(harness.reactions.contains { $0.cycleDetected })
        #expect(harness.client.pendingReset == nil)
        #expect(harness.client.replica == harness.server.state)
    }

    /// A row left by a reset for another action is cleared, and the reset starts over as if
    /// there were none (§4.5): here the recovery row of a `ClientReset`, then a second reset
    /// with Client Recovery switched off, which `recoverUnsyncedChanges` gives up on, but
    /// not as a cycle, and without the old row left behind.
    @Test func aRowForAnotherActionIsClearedNotACycle() {
        var harness = ResetHarness.offlineWritesThenTermination(.recoverUnsyncedChanges)
        harness.converse(limit: 2)
        #expect(harness.client.pendingReset?.action == .clientReset)
        harness.client.disconnect()
        harness.server.terminateAndReenable(baseSalt: 98)
        harness.recoveryDisabled = true
        harness.reactions = []
        harness.converse()
        #expect(harness.fallbacks == [.recoveryDisabled])
        #expect(!harness.reactions.contains { $0.cycleDetected })
        #expect(harness.client.pendingReset == nil)
    }

    @Test func aCycleAfterADiscardFails() {
        let harness = ClientResetTests.secondResetBeforeAcknowledgement(.discardUnsyncedChanges)
        #expect(harness.fallbacks == [.cycleDetected])
        #expect(harness.client.session == .inactive)
    }

    @Test(arguments: [
        (ClientResetMode.recoverUnsyncedChanges, nil as ResetOutcome?),
        (.recoverOrDiscardUnsyncedChanges, .discarded),
        (.discardUnsyncedChanges, .discarded),
    ])
    func recoveryDisabledOnTheServer(mode: ClientResetMode, outcome: ResetOutcome?) {
        var harness = ResetHarness.offlineWritesThenTermination(mode)
        harness.recoveryDisabled = true
        harness.converse()
        #expect(harness.outcomes == (outcome.map { [$0] } ?? []))
        #expect(harness.fallbacks == (outcome == nil ? [.recoveryDisabled] : []))
    }

    @Test(arguments: [
        ClientResetMode.recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges,
        .discardUnsyncedChanges,
    ])
    func aBreakingSchemaChangeFailsEveryAutomaticMode(mode: ClientResetMode) {
        var harness = ResetHarness.offlineWritesThenTermination(mode)
        harness.server.changeSchemaBreaking(erasing: ServerFileTests.table, field: 1, baseSalt: 5)
        harness.converse()
        #expect(harness.fallbacks == [.schemaMismatch])
        #expect(harness.reactions.last?.afterResetCallback == false)
        let action = harness.client.runFileAction()
        #expect(action?.action.fallback == .schemaMismatch)
        #expect(action?.unsyncedWriteIDs == [1, 2])
        harness.converse()
        #expect(harness.client.replica == harness.server.state)
        #expect(harness.client.replica.schema(of: ServerFileTests.table)?.columns.isEmpty == true)
    }

    @Test func permissionDeniedDeletesTheFileWithoutABackup() {
        var harness = ResetHarness(.recoverUnsyncedChanges)
        harness.converse()
        harness.write(key: 1, value: 10, id: 0)
        let reaction = harness.client.receive(
            .error(ProtocolError(code: .permissionDenied, action: .deleteRealm)),
            transformer: &harness.transformer)
        #expect(reaction.reportedError?.cause == .permissionDenied)
        #expect(reaction.resetStarted == nil)
        #expect(!reaction.beforeResetCallback)
        #expect(harness.client.session == .inactive)
        let action = harness.client.runFileAction()
        #expect(action?.action.kind == .delete)
        #expect(action?.unsyncedWriteIDs == [0])
        #expect(harness.client.file == nil)
        #expect(harness.client.unsynced.isEmpty)
    }

    @Test func thePromiseCheckerCatchesAWrongRecovery() throws {
        let schema = ServerFileTests.schema()
        var preReset = schema
        let local = Changeset(
            version: 1,
            instructions: [
                .createObject(key2),
                .update(object: key2, field: 1, value: .int(5), isDefault: false),
            ])
        try preReset.apply(local)
        let recovery = try preReset.recover([local], onto: schema)
        #expect(
            RecoveryPromises.violations(
                localChanges: [local], preReset: preReset, fresh: schema,
                recovered: recovery.state
            ).isEmpty)
        // A recovery that lost the offline object, or its field, breaks promises 1 and 4.
        #expect(
            RecoveryPromises.violations(
                localChanges: [local], preReset: preReset, fresh: schema, recovered: schema
            ).count == 1)
        var wrongValue = recovery.state
        try wrongValue.apply(.update(object: key2, field: 1, value: .int(6), isDefault: false))
        let violations = RecoveryPromises.violations(
            localChanges: [local], preReset: preReset, fresh: schema, recovered: wrongValue)
        #expect(violations.count == 1)
        #expect(violations.first?.contains("offline update set") == true)
        // An object the server deleted and the client only edited must stay deleted.
        let edit = Changeset(
            version: 1,
            instructions: [.update(object: key2, field: 1, value: .int(7), isDefault: false)])
        let resurrected = RecoveryPromises.violations(
            localChanges: [edit], preReset: preReset, fresh: schema, recovered: preReset)
        #expect(resurrected.contains { $0.contains("deleted on the server") })
    }
}
