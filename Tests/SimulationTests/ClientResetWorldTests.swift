import MergeCore
import SyncEngine
import Testing

@testable import Simulation

/// A small world with list edits and both faults that reset every client: a restore at 3000 s
/// (the backup of 1800 s) and a termination at 5000 s.
func resetScenario(_ mode: ClientResetMode) -> Scenario {
    var scenario = smallScenario()
    scenario.workload.keyDistribution = .zipf
    scenario.workload.objectsPerPartition = 30
    scenario.workload.erasePercent = 15
    scenario.workload.listPercent = 30
    scenario.workload.writesPerMinuteOffline = 1
    scenario.clock.skewMillisecondsMax = 2_000
    scenario.clientReset.mode = mode
    scenario.faults = [
        FaultSpec(kind: .restoreFromBackup, atSeconds: 3_000),
        FaultSpec(kind: .terminateSync, atSeconds: 5_000),
    ]
    return scenario
}

extension RunResult {
    /// Every write is in exactly one final state.
    var ledgerBalances: Bool {
        writesMade
            == writesSynced + writesDiscardedByReset + writesLostToRestore + writesPending
            + writesDroppedByRecovery + writesKeptInBackup + writesDeletedAfterPermissionDenied
    }
}

@Suite struct ClientResetWorldTests {
    @Test(arguments: ClientResetMode.allCases)
    func everyModeDoesWhatItPromisesAndConverges(mode: ClientResetMode) {
        let result = World(scenario: resetScenario(mode), seed: 21).run()
        #expect(result.passed, "\(mode): \(result.failures)")
        #expect(result.converged)
        #expect(result.writesPending == 0)
        #expect(result.ledgerBalances)
        let counters = result.counters
        #expect(counters.resets >= 40, "every client resets after the termination")
        #expect(counters.recoveryPromiseViolations == 0)
        #expect(counters.resetFallbacks.allSatisfy { $0 == 0 })
        switch mode {
        case .recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges:
            #expect(result.resetsRecovered == counters.resets)
            #expect(result.writesDiscardedByReset == 0 && result.writesKeptInBackup == 0)
            #expect(result.writesRecovered > 0)
            #expect(counters.afterResetCallbacks == counters.resets)
            #expect(counters.errorHandlerCalls == 0)
            // The workload erases objects that other clients edit offline.
            #expect(counters.recoveryDrops[RecoveryDropReason.objectDeleted.rawValue] > 0)
        case .discardUnsyncedChanges:
            #expect(result.resetsDiscarded == counters.resets)
            #expect(result.writesDiscardedByReset > 0)
            #expect(result.writesRecovered == 0 && result.writesDroppedByRecovery == 0)
            #expect(counters.recoveryDrops.allSatisfy { $0 == 0 })
        case .manual:
            #expect(result.resetsManual == counters.resets)
            #expect(result.writesKeptInBackup > 0)
            #expect(counters.beforeResetCallbacks == 0 && counters.afterResetCallbacks == 0)
            #expect(counters.errorHandlerCalls == counters.resets)
        }
        if mode != .manual {
            #expect(counters.beforeResetCallbacks == counters.resets)
        }
        // One duration per reset (each file synced again), the clients' downtimes their sum;
        // every mode here takes a round trip or two (manual handling is `immediately`).
        let durations = result.resetDurationsNs
        #expect(UInt64(durations.count) == counters.resets)
        #expect(durations.allSatisfy { $0 > 0 })
        #expect(result.clients.reduce(0) { $0 + $1.resetDowntimeNs } == durations.reduce(0, +))
        #expect(durations.sorted()[durations.count / 2] < 60 * 1_000_000_000)
    }

    /// Atlas needs a termination for a breaking change: every client resets, and every
    /// automatic reset fails the schema check and goes to the manual handler.
    @Test(arguments: [ClientResetMode.recoverUnsyncedChanges, .discardUnsyncedChanges])
    func aBreakingSchemaChangeFallsBackToTheManualHandler(mode: ClientResetMode) {
        var scenario = resetScenario(mode)
        scenario.faults = [FaultSpec(kind: .breakingSchemaChange, atSeconds: 3_000)]
        let world = World(scenario: scenario, seed: 5)
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        let schemaMismatch = result.counters.resetFallbacks[
            ResetFallbackReason.schemaMismatch.rawValue]
        #expect(schemaMismatch == 40)
        #expect(result.resetsManual == 40)
        #expect(result.counters.afterResetCallbacks == 0)
        #expect(result.counters.schemaChanges == 1)
        #expect(result.ledgerBalances)
        for server in world.servers {
            let columns = server.state.schema(of: WorkloadSchema.itemTable)!.columns
            #expect(!columns.contains { $0.field == WorkloadSchema.rankField })
        }
    }

    /// Client Recovery switched off before a termination: recoverUnsyncedChanges must fail to
    /// the manual handler, recoverOrDiscardUnsyncedChanges discards.
    @Test(arguments: [ClientResetMode.recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges])
    func clientRecoveryDisabledOnTheServer(mode: ClientResetMode) {
        var scenario = resetScenario(mode)
        scenario.faults = [
            FaultSpec(kind: .disableClientRecovery, atSeconds: 2_000),
            FaultSpec(kind: .terminateSync, atSeconds: 3_000),
        ]
        let result = World(scenario: scenario, seed: 9).run()
        #expect(result.passed, "\(result.failures)")
        let disabled = result.counters.resetFallbacks[ResetFallbackReason.recoveryDisabled.rawValue]
        if mode == .recoverUnsyncedChanges {
            #expect(disabled == result.counters.resets)
            #expect(result.resetsManual == result.counters.resets)
        } else {
            #expect(disabled == 0)
            #expect(result.resetsDiscarded == result.counters.resets)
        }
        #expect(result.counters.resets >= 40)
    }

    /// With `nextLaunch`, a manual reset waits for the app's next launch; the app keeps writing
    /// into the file meanwhile, and those writes end in the backup. Healing relaunches the apps.
    @Test func nextLaunchIsDeterministicAndHeals() {
        var scenario = resetScenario(.manual)
        scenario.clientReset.manualHandling = .nextLaunch
        scenario.clientReset.relaunchSecondsMean = 600
        scenario.network.lossPerMillion = 3_000
        let first = World(scenario: scenario, seed: 33).run()
        let second = World(scenario: scenario, seed: 33).run()
        #expect(first.passed, "\(first.failures)")
        #expect(first.converged)
        #expect(first.traceDigest == second.traceDigest)
        #expect(first.counters == second.counters)
        #expect(first.ledgerTotals == second.ledgerTotals)
        #expect(first.resetsManual >= 40)
        #expect(first.ledgerBalances)
        // The file syncs again only after the app's relaunch (600 s on average).
        let durations = first.resetDurationsNs.sorted()
        #expect(UInt64(durations.count) == first.counters.resets)
        #expect(durations[durations.count / 2] > 60 * 1_000_000_000)
    }

    /// Half the partitions lose access for a while: their users' sessions end with 206, the
    /// apps delete their files and retry opening them, and they sync again once access is back.
    @Test func revokedAccessDeletesFilesAndHeals() {
        var scenario = resetScenario(.recoverUnsyncedChanges)
        scenario.faults = [
            FaultSpec(kind: .revokeAccess, atSeconds: 2_000, partitionsPercent: 50),
            FaultSpec(kind: .restoreAccess, atSeconds: 4_000),
        ]
        let result = World(scenario: scenario, seed: 12).run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.converged)
        #expect(result.counters.accessRevocations == 1)
        #expect(result.counters.permissionDeniedErrors > 0)
        #expect(result.counters.filesDeletedAfterPermissionDenied > 0)
        #expect(result.writesDeletedAfterPermissionDenied > 0)
        #expect(result.counters.resets == 0, "permission denied is not a client reset")
        #expect(result.ledgerBalances)
        // Only the clients of the partitions that lost access were refused.
        let refused = result.counters.filesDeletedAfterPermissionDenied
        #expect(refused < UInt64(scenario.clientsCount) * 40)
    }

    /// Half the partitions become read-only for a while (`revokeWriteAccess`): their users keep
    /// opening and downloading, but the server refuses each upload of theirs with 206, and the
    /// apps delete their files (losing those writes) and open them again; once write access
    /// is back (`restoreAccess`), they sync their writes again, and everyone converges.
    @Test func revokedWriteAccessLosesTheReadOnlyUsersWrites() {
        var scenario = resetScenario(.recoverUnsyncedChanges)
        scenario.faults = [
            FaultSpec(kind: .revokeWriteAccess, atSeconds: 2_000, partitionsPercent: 50),
            FaultSpec(kind: .restoreAccess, atSeconds: 4_000),
        ]
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        let world = World(scenario: scenario, seed: 12)
        world.syncLog = SyncLog(level: .info) { lines.all.append($0) }
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.converged)
        #expect(result.ledgerBalances)
        #expect(result.counters.writeAccessRevocations == 1)
        #expect(result.counters.accessRevocations == 0)
        #expect(result.counters.uploadsRefusedWithoutWriteAccess > 0)
        #expect(result.counters.permissionDeniedErrors > 0)
        #expect(result.counters.filesDeletedAfterPermissionDenied > 0)
        #expect(result.writesDeletedAfterPermissionDenied > 0)
        #expect(result.counters.resets == 0, "permission denied is not a client reset")
        // Refused for writing only: never at opening (IDENT) or for a fresh copy.
        #expect(lines.all.contains { $0.contains("may only read its partition: 206") })
        #expect(!lines.all.contains { $0.contains("has no access to its partition") })
        // The log changes nothing, and the same seed gives the same run. So does a timeline,
        // whose 206s all fall from the fault on, and add up to the run's.
        let sampled = World(scenario: scenario, seed: 12)
        sampled.timelineIntervalNs = 500 * Time.nanosecondsPerSecond
        #expect(sampled.run().traceDigest == result.traceDigest)
        #expect(
            sampled.timeline.reduce(0) { $0 + $1.permissionDeniedErrors }
                == result.counters.permissionDeniedErrors)
        #expect(
            sampled.timeline.filter { $0.endNs <= 2_000 * Time.nanosecondsPerSecond }
                .allSatisfy { $0.permissionDeniedErrors == 0 })
        // Without the fault no write is lost that way.
        scenario.faults = []
        let plain = World(scenario: scenario, seed: 12).run()
        #expect(plain.writesDeletedAfterPermissionDenied == 0)
        #expect(plain.counters.uploadsRefusedWithoutWriteAccess == 0)
    }

    /// A relaunch far in the future: healing relaunches the app at once, and the queued
    /// relaunch event, spent, must not keep healing open until it fires.
    @Test func healingDoesNotWaitForASpentRelaunch() {
        var scenario = resetScenario(.manual)
        scenario.clientReset.manualHandling = .nextLaunch
        scenario.clientReset.relaunchSecondsMean = 36_000
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 6_000)]
        let result = World(scenario: scenario, seed: 2).run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.resetsManual > 0)
        #expect(
            result.healingDurationNs < 600 * 1_000_000_000,
            "healing took \(result.healingDurationNs) ns")
    }

    /// The log shows what happened, in simulated time, and changes nothing.
    @Test func theSyncLogNamesTheResetsAndChangesNothing() {
        let scenario = resetScenario(.recoverUnsyncedChanges)
        let quiet = World(scenario: scenario, seed: 8).run()
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        let world = World(scenario: scenario, seed: 8)
        world.syncLog = SyncLog(level: .info) { lines.all.append($0) }
        let logged = world.run()
        #expect(logged.traceDigest == quiet.traceDigest)
        #expect(lines.all.contains { $0.contains("fault: terminateSync") })
        #expect(
            lines.all.contains { $0.contains("client reset required (208 bad_client_file_ident)") })
        #expect(lines.all.contains { $0.hasPrefix("[1h23m20.000s] info   fault: terminateSync") })
        #expect(!lines.all.contains { $0.contains(" debug ") || $0.contains(" detail ") })
        let resets = lines.all.filter { $0.contains("client reset complete") }.count
        #expect(UInt64(resets) == logged.counters.resets)
    }
}
