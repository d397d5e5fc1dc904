import SyncEngine
import Testing

@testable import Simulation

/// The reset audit (`ResetAudit`): REALM-SEMANTICS §4.5's decision table as written, clean
/// runs that meet every row of it, and the reset sabotages it alone catches.
@Suite struct ResetAuditTests {
    /// The table, case by case, as REALM-SEMANTICS §4.5 and §4.2 write it (not derived from
    /// `decide`): the pending row (nil, or its mode and action), the requested mode and the
    /// server's action, and the result.
    @Test func theDecisionTableIsTheDocumentedOne() {
        func Row(mode: PerformedResetMode, action: ErrorAction) -> PendingReset {
            PendingReset(mode: mode, action: action, cause: .badClientFileIdent)
        }
        let reset = ErrorAction.clientReset
        let noRecovery = ErrorAction.clientResetNoRecovery
        let recoverRow = Row(mode: .recover, action: reset)
        let discardRow = Row(mode: .discard, action: reset)
        let otherActionRow = Row(mode: .discard, action: noRecovery)
        let cases: [(PendingReset?, ClientResetMode, ErrorAction, ResetAudit.Decision)] = [
            // No row: proceed in the mode (recoverOrDiscard recovers).
            (nil, .recoverUnsyncedChanges, reset, .proceed(.recover)),
            (nil, .recoverOrDiscardUnsyncedChanges, reset, .proceed(.recover)),
            (nil, .discardUnsyncedChanges, reset, .proceed(.discard)),
            // A discard row: every mode gives up.
            (discardRow, .recoverUnsyncedChanges, reset, .fail(.cycleDetected)),
            (discardRow, .recoverOrDiscardUnsyncedChanges, reset, .fail(.cycleDetected)),
            (discardRow, .discardUnsyncedChanges, reset, .fail(.cycleDetected)),
            // A recovery row: recover gives up, the others discard.
            (recoverRow, .recoverUnsyncedChanges, reset, .fail(.cycleDetected)),
            (recoverRow, .recoverOrDiscardUnsyncedChanges, reset, .proceed(.discard)),
            (recoverRow, .discardUnsyncedChanges, reset, .proceed(.discard)),
            // A row for another action is no row.
            (otherActionRow, .recoverUnsyncedChanges, reset, .proceed(.recover)),
            (otherActionRow, .discardUnsyncedChanges, reset, .proceed(.discard)),
            // ClientResetNoRecovery: recover gives up, recoverOrDiscard discards.
            (nil, .recoverUnsyncedChanges, noRecovery, .fail(.recoveryDisabled)),
            (nil, .recoverOrDiscardUnsyncedChanges, noRecovery, .proceed(.discard)),
            (nil, .discardUnsyncedChanges, noRecovery, .proceed(.discard)),
            // The cycle check comes first.
            (
                Row(mode: .recover, action: noRecovery), .recoverUnsyncedChanges, noRecovery,
                .fail(.cycleDetected)
            ),
            (
                Row(mode: .recover, action: noRecovery), .recoverOrDiscardUnsyncedChanges,
                noRecovery, .proceed(.discard)
            ),
        ]
        for (row, mode, action, expected) in cases {
            #expect(
                ResetAudit.decide(row: row, mode: mode, action: action) == expected,
                "\(String(describing: row)) \(mode) \(action)")
        }
    }

    /// 8 clients in 2 partitions for 2 hours; from 1 h, ten restores 3 s apart, with quick
    /// reconnects: a client reset by one restore is often caught by the next before the
    /// server acknowledged it, so it meets its own pending-reset row.
    static let restoreBurst: String = {
        let faults = (0..<10).map {
            "{ \"kind\": \"restoreFromBackup\", \"atSeconds\": \(3_600 + 3 * $0) }"
        }
        return """
            { "name": "restore-burst", "clientsCount": 8, "partitionsCount": 2,
              "durationSeconds": 7200,
              "workload": { "writesPerMinuteOnline": 2, "writesPerMinuteOffline": 2,
                            "objectsPerPartition": 50, "listPercent": 10 },
              "connectivity": { "onlineSecondsMean": 1800, "offlineSecondsMean": 600 },
              "network": { "latencyMillisecondsMedian": 200, "reconnectSecondsMin": 1,
                           "reconnectSecondsMax": 2 },
              "server": { "backupIntervalSeconds": 600 },
              "faults": [ \(faults.joined(separator: ", ")) ] }
            """
    }()

    func run(_ mode: ClientResetMode, seed: UInt64, sabotage: SabotageKind? = nil) throws
        -> RunResult
    {
        var settings = ["clientReset.mode=\(mode.rawValue)"]
        if let sabotage { settings.append("sabotage.kind=\(sabotage.rawValue)") }
        return try ShrinkTests().run(Self.restoreBurst, settings: settings, seed: seed)
    }

    /// Clean runs break no rule, and between them meet the table's rows that need a cycle: a
    /// recovery row failing `recoverUnsyncedChanges`, the same row turning
    /// `recoverOrDiscardUnsyncedChanges` into a discard, and a discard row failing
    /// `discardUnsyncedChanges`.
    @Test func cleanRunsMeetTheCycleRowsAndBreakNoRule() throws {
        let recover = try run(.recoverUnsyncedChanges, seed: 1)
        let downgrade = try run(.recoverOrDiscardUnsyncedChanges, seed: 1)
        let discard = try run(.discardUnsyncedChanges, seed: 3)
        for result in [recover, downgrade, discard] {
            #expect(result.passed, "\(result.failures)")
            #expect(result.counters.resetAuditViolations == 0)
            #expect(result.counters.resets > 40)
        }
        #expect(recover.counters.resetCycles > 0)
        #expect(
            recover.counters.resetFallbacks[ResetFallbackReason.cycleDetected.rawValue]
                == recover.counters.resetCycles)
        #expect(downgrade.counters.resetCycles > 0)
        #expect(downgrade.counters.resetFallbacks.allSatisfy { $0 == 0 })
        #expect(downgrade.resetsDiscarded == downgrade.counters.resetCycles)
        #expect(discard.counters.resetCycles > 0)
        #expect(
            discard.counters.resetFallbacks[ResetFallbackReason.cycleDetected.rawValue]
                == discard.counters.resetCycles)
    }

    /// Each reset sabotage is caught by the audit, by the rule it breaks; no other check
    /// catches them.
    @Test func theResetSabotagesAreCaughtByTheAudit() throws {
        func audited(_ result: RunResult, _ rule: String) {
            #expect(!result.passed)
            #expect(result.counters.resetAuditViolations > 0)
            #expect(
                result.failures.contains {
                    $0.contains("the reset audit found") && $0.contains(rule)
                },
                "\(result.failures)")
        }
        // A cycle taken for a first reset: the rules give up, the client recovers.
        let skipped = try run(.recoverUnsyncedChanges, seed: 1, sabotage: .cycleCheckSkipped)
        audited(skipped, "the rules give up (cycleDetected), the client recovered")
        // The row outlives the acknowledgement.
        let kept = try run(.recoverUnsyncedChanges, seed: 1, sabotage: .resetTrackerKept)
        audited(kept, "the file's pending-reset row is a pending recovery row")
        // The file of a manual reset deleted with no backup: its writes are gone, not kept.
        let deleted = try run(.manual, seed: 1, sabotage: .manualDeletesWithoutBackup)
        audited(deleted, "deleted the file without backing it up")
        let clean = try run(.manual, seed: 1)
        #expect(clean.passed, "\(clean.failures)")
        #expect(clean.writesKeptInBackup > 0 && deleted.writesKeptInBackup == 0)
        // Without the audit, nothing else in those runs fails: it is the only check of them.
        for result in [skipped, kept, deleted] {
            #expect(result.failures.count == 1, "\(result.failures)")
        }
    }
}
