import Foundation
import Measurement
import MergeCore
import MergeWorkloads
import Simulation
import SyncEngine

/// Facts about this build, recorded with every run.
enum BuildInfo {
    #if DEBUG
        static let configuration = "debug"
    #else
        static let configuration = "release"
    #endif

    /// The compiler that built SyncSim. Kept independent of the build configuration so that
    /// debug and release runs of one seed produce identical deterministic CSV.
    static let toolchain: String = {
        #if compiler(>=6.4)
            "swift-6.4+"
        #elseif compiler(>=6.3)
            "swift-6.3"
        #elseif compiler(>=6.2)
            "swift-6.2"
        #else
            "swift-6.1"
        #endif
    }()

    /// The git commit this binary was built from (HEAD of its checkout at build time, with
    /// "+dirty" when tracked files had changes), or "unknown" when it was not built in a git
    /// checkout. Written at build time by the `BuildCommit` plugin (`Plugins/BuildCommit`).
    static let gitCommit: String = buildCommit
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Wall-clock figures of one run: reported, stored apart, never in the digest.
struct Timings {
    var wallSeconds: Double
    var eventsPerSecond: Double
    var speedUp: Double
    var peakResidentBytes: UInt64
    var peakResidentBytesPerClient: Double

    init(wall: Duration, result: RunResult) {
        wallSeconds = wall.seconds
        eventsPerSecond = wallSeconds > 0 ? Double(result.eventsProcessed) / wallSeconds : 0
        let simulated = Double(result.simulatedDurationNs + result.healingDurationNs) / 1e9
        speedUp = wallSeconds > 0 ? simulated / wallSeconds : 0
        peakResidentBytes = ProcessMetrics.peakResidentBytes()
        peakResidentBytesPerClient = Double(peakResidentBytes) / Double(max(result.clientsCount, 1))
    }

    var metrics: [Metric] {
        [
            .real("wallSeconds", wallSeconds),
            .real("eventsPerSecond", eventsPerSecond),
            .real("speedUp", speedUp),
            .integer("peakResidentBytes", Int64(peakResidentBytes)),
            .real("peakResidentBytesPerClient", peakResidentBytesPerClient),
        ]
    }
}

enum RunRecordBuilder {
    /// FNV-1a 64 of the scenario bytes, as 16 hex digits: the scenario's content hash.
    static func contentHash(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hexDigits(hash)
    }

    static func record(
        result: RunResult, scenario: Scenario, scenarioBytes: [UInt8], timings: Timings,
        overrides: RunOverrides
    ) -> RunRecord {
        let options = (try? RunRecord.canonicalJSON(overrides)) ?? "{}"
        return RunRecord(
            seed: result.seed, scenarioName: scenario.name,
            scenarioHash: contentHash(scenarioBytes),
            optionsJSON: options, gitCommit: BuildInfo.gitCommit, toolchain: BuildInfo.toolchain,
            traceDigest: result.traceDigest.hex, simulatedDurationNs: result.simulatedDurationNs,
            clientsCount: result.clientsCount, eventsCount: result.eventsProcessed,
            metrics: runMetrics(result), timings: timings.metrics,
            clients: result.clients.indices.map { index in
                ClientRecord(
                    clientIndex: UInt32(index), metrics: clientMetrics(result, client: index))
            })
    }

    /// The deterministic run metrics, in their documented order (README "CSV columns").
    static func runMetrics(_ result: RunResult) -> [Metric] {
        var metrics: [Metric] = [
            .integer("healingDurationNs", Int64(result.healingDurationNs)),
            .integer("passed", result.passed ? 1 : 0),
            .integer("converged", result.converged ? 1 : 0),
            .integer("divergentClients", Int64(result.divergentClients.count)),
            .integer("writesMade", Int64(result.writesMade)),
            .integer("writesSynced", Int64(result.writesSynced)),
            .integer("writesDiscardedByReset", Int64(result.writesDiscardedByReset)),
            .integer("writesLostToRestore", Int64(result.writesLostToRestore)),
            .integer("writesPending", Int64(result.writesPending)),
            .integer("writesDroppedByRecovery", Int64(result.writesDroppedByRecovery)),
            .integer("writesKeptInBackup", Int64(result.writesKeptInBackup)),
            .integer(
                "writesDeletedAfterPermissionDenied",
                Int64(result.writesDeletedAfterPermissionDenied)),
            .integer("writesRecovered", Int64(result.writesRecovered)),
            .integer("writesPartiallyRecovered", Int64(result.writesPartiallyRecovered)),
            .integer("writesIntegratedTwice", Int64(result.writesIntegratedTwice)),
            .integer("resetMode", Int64(resetModeCode(result.resetMode))),
            .integer("resets", Int64(result.counters.resets)),
            .integer("clientsReset", Int64(result.clientsThatReset)),
            .real("resetsPerClientPerDay", result.resetsPerClientPerDay),
        ]
        metrics += Summary.of(result.resetDurationsNs).metrics(base: "resetDurationNs")
        for (cause, count) in result.resetsByCause {
            metrics.append(.integer("resets\(cause.rawValue)", Int64(count)))
        }
        let counters = result.counters
        metrics += [
            .integer("resetsRecovered", Int64(result.resetsRecovered)),
            .integer("resetsDiscarded", Int64(result.resetsDiscarded)),
            .integer("resetsManual", Int64(result.resetsManual)),
        ]
        metrics += perReason(
            "resetFallbacks", ResetFallbackReason.allCases.map(\.name),
            counters.resetFallbacks)
        metrics += [
            .integer("resetCycles", Int64(counters.resetCycles)),
            .integer("beforeResetCallbacks", Int64(counters.beforeResetCallbacks)),
            .integer("afterResetCallbacks", Int64(counters.afterResetCallbacks)),
            .integer("errorHandlerCalls", Int64(counters.errorHandlerCalls)),
        ]
        metrics += perReason(
            "recoveryDropped", RecoveryDropReason.allCases.map(\.name),
            counters.recoveryDrops)
        metrics += [
            .integer("listsCopied", Int64(counters.listsCopied)),
            .integer("recoveryPromiseViolations", Int64(counters.recoveryPromiseViolations)),
            .integer("resetAuditViolations", Int64(counters.resetAuditViolations)),
        ]
        metrics += [
            .integer("uploads", Int64(result.counters.uploads)),
            .integer("downloads", Int64(result.counters.downloads)),
            .integer("changesetsIntegrated", Int64(result.counters.changesetsIntegrated)),
            .integer("messagesLost", Int64(result.counters.messagesLost)),
            .integer("bytesUploaded", Int64(counters.bytesUploaded)),
            .integer("bytesDownloaded", Int64(counters.bytesDownloaded)),
            .integer("freshCopies", Int64(counters.freshCopies)),
            .integer("freshCopyBytes", Int64(counters.freshCopyBytes)),
            .integer("egressMessagesDropped", Int64(counters.egressMessagesDropped)),
            .integer("egressBytesDropped", Int64(counters.egressBytesDropped)),
            .integer("egressBacklogPeakBytes", Int64(counters.egressBacklogPeakBytes)),
            .integer("backups", Int64(result.counters.backups)),
            .integer("restores", Int64(result.counters.restores)),
            .integer("restoresSkippedNoBackup", Int64(result.counters.restoresSkippedNoBackup)),
            .integer(
                "restoreRewindSeconds",
                Int64(result.counters.restoreRewindNs / Time.nanosecondsPerSecond)),
            .integer("restoresShortOfPoint", Int64(counters.restoresShortOfPoint)),
            .integer(
                "restoreShortfallSeconds",
                Int64(counters.restoreShortfallNs / Time.nanosecondsPerSecond)),
            .integer(
                "faultDowntimeSeconds",
                Int64(counters.faultDowntimeNs / Time.nanosecondsPerSecond)),
            .integer("backupsKeptPeak", Int64(counters.backupsKeptPeak)),
            .integer("backupBytesPeak", Int64(counters.backupBytesPeak)),
            .integer("terminations", Int64(result.counters.terminations)),
            .integer("schemaChanges", Int64(result.counters.schemaChanges)),
            .integer("accessRevocations", Int64(result.counters.accessRevocations)),
            .integer("writeAccessRevocations", Int64(result.counters.writeAccessRevocations)),
            .integer(
                "uploadsRefusedWithoutWriteAccess",
                Int64(result.counters.uploadsRefusedWithoutWriteAccess)),
            .integer("permissionDeniedErrors", Int64(result.counters.permissionDeniedErrors)),
            .integer(
                "filesDeletedAfterPermissionDenied",
                Int64(result.counters.filesDeletedAfterPermissionDenied)),
            .integer("serverObjects", Int64(result.serverObjects)),
            .integer("serverVersions", Int64(result.serverVersions)),
            .integer("clientFilesExpired", Int64(result.counters.clientFilesExpired)),
            .integer("historyEntriesTrimmed", Int64(result.counters.historyEntriesTrimmed)),
            .integer("serverHistoryEntries", Int64(result.serverHistoryEntries)),
            .integer("serverHistoryEntriesPeak", Int64(result.serverHistoryEntriesPeak)),
            .integer("appCrashes", Int64(counters.appCrashes)),
            .integer("appCrashesDuringReset", Int64(counters.appCrashesDuringReset)),
            .integer("fileActionsAtCrashRelaunch", Int64(counters.fileActionsAtCrashRelaunch)),
            .integer("serverCrashes", Int64(counters.serverCrashes)),
            .integer("connectionsRefused", Int64(counters.connectionsRefused)),
            .integer("swarmFaults", Int64(result.swarmFaults.count)),
            .integer("networkOutages", Int64(counters.networkOutages)),
            .integer("clientsCutOff", Int64(result.clientsCutOff)),
        ]
        // Per cohort (the rest last), only when the scenario has cohorts.
        guard result.hasCohorts else { return metrics }
        for (index, group) in result.groupResults.enumerated() {
            let prefix = "cohort\(index)"
            metrics += [
                .integer(prefix + "ResetMode", Int64(resetModeCode(group.resetMode))),
                .integer(prefix + "Clients", Int64(group.clients)),
                .integer(prefix + "WritesMade", Int64(group.writesMade)),
            ]
            let ends = WriteState.allCases.filter { $0 != .pending }
            metrics += perReason(
                prefix, ends.map(writesMetricName), ends.map { group.writes($0) })
            metrics += [
                .integer(prefix + "Resets", Int64(group.resets)),
                .real(prefix + "ResetsPerClientPerDay", group.resetsPerClientPerDay),
                .integer(prefix + "ResetDowntimeNs", Int64(group.resetDowntimeNs)),
                .integer(prefix + "AppCrashes", Int64(group.appCrashes)),
            ]
        }
        return metrics
    }

    static func clientMetrics(_ result: RunResult, client index: Int) -> [Metric] {
        let counters = result.clients[index]
        var metrics: [Metric] = [
            .integer("cohort", Int64(result.clientGroup[index])),
            .integer("writesMade", Int64(counters.writesMade)),
            .integer("resets", Int64(counters.resets)),
        ]
        for (index, cause) in ProtocolErrorCode.resetCauses.enumerated() {
            metrics.append(
                .integer("resets\(cause.rawValue)", Int64(counters.resetsByCause[index])))
        }
        metrics += [
            .integer("resetsRecovered", Int64(counters.resetsRecovered)),
            .integer("resetsDiscarded", Int64(counters.resetsDiscarded)),
            .integer("resetsManual", Int64(counters.resetsManual)),
            .integer("resetFallbacks", Int64(counters.resetFallbacks)),
            .integer("messagesLost", Int64(counters.messagesLost)),
            .integer("connections", Int64(counters.connections)),
            .integer("bytesUploaded", Int64(counters.bytesUploaded)),
            .integer("bytesDownloaded", Int64(counters.bytesDownloaded)),
            .integer("resetDowntimeNs", Int64(counters.resetDowntimeNs)),
            .integer("appCrashes", Int64(counters.appCrashes)),
            .integer("outagesCutOff", Int64(counters.outagesCutOff)),
        ]
        // Where its writes ended (the ledger's states but pending, none left after healing).
        for (state, count) in zip(WriteState.allCases, result.writes(ofClient: index))
        where state != .pending {
            metrics.append(.integer(writesMetricName(state), Int64(count)))
        }
        return metrics
    }

    /// The metric of the writes that ended in `state`: `writesSynced`, `writesDiscardedByReset`, …
    /// (`writes_` and the state's name in the CSV files).
    static func writesMetricName(_ state: WriteState) -> String {
        "writes"
            + state.name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }
            .joined()
    }

    /// The `reset_mode` column: 1 recoverUnsyncedChanges, 2 recoverOrDiscardUnsyncedChanges,
    /// 3 discardUnsyncedChanges, 4 manual (README "CSV columns").
    static func resetModeCode(_ mode: ClientResetMode) -> Int {
        ClientResetMode.allCases.firstIndex(of: mode)! + 1
    }

    /// One metric per reason, `prefix` + the reason's name capitalized, in the reasons' order.
    static func perReason(_ prefix: String, _ names: [String], _ counts: [UInt64]) -> [Metric] {
        zip(names, counts).map { name, count in
            .integer(prefix + name.prefix(1).uppercased() + name.dropFirst(), Int64(count))
        }
    }
}

enum RunSummaryPrinter {
    static func print(result: RunResult, timings: Timings, outputDirectory: String) {
        let days = Double(result.simulatedDurationNs) / 86_400e9
        func line(_ label: String, _ value: String) {
            Swift.print(label.padding(toLength: 34, withPad: " ", startingAt: 0) + value)
        }
        Swift.print("")
        Swift.print("Deterministic results (a function of seed and scenario)")
        line(
            "  simulated",
            "\(format(days * 24, 2)) h + \(format(Double(result.healingDurationNs) / 60e9, 1)) min healing, \(result.clientsCount) clients"
        )
        line("  events", "\(result.eventsProcessed)")
        line("  writes made", "\(result.writesMade)")
        line("    synced", "\(result.writesSynced)")
        line("    discarded by a reset", "\(result.writesDiscardedByReset)")
        line("    dropped by recovery rules", "\(result.writesDroppedByRecovery)")
        line("    only in a manual backup", "\(result.writesKeptInBackup)")
        line("    deleted, permission denied", "\(result.writesDeletedAfterPermissionDenied)")
        line("    lost to a server restore", "\(result.writesLostToRestore)")
        line("    still pending", "\(result.writesPending)")
        line(
            "  writes replayed by recovery",
            "\(result.writesRecovered) (\(result.writesPartiallyRecovered) lost instructions), \(result.writesIntegratedTwice) integrated twice"
        )
        let counters = result.counters
        let causes = result.resetsByCause.filter { $0.count > 0 }
            .map { "\($0.cause.rawValue): \($0.count)" }.joined(separator: ", ")
        let ownModes = result.groups.compactMap { group in
            group.resetMode.map { "\(group.name) \($0.rawValue)" }
        }
        line(
            "  client reset mode",
            result.resetMode.rawValue
                + (ownModes.isEmpty
                    ? "" : " (cohorts with their own: \(ownModes.joined(separator: ", ")))"))
        line(
            "  client resets",
            "\(counters.resets) (\(causes.isEmpty ? "none" : causes)) across \(result.clientsThatReset) clients"
        )
        line(
            "    by outcome",
            "recovered \(result.resetsRecovered), discarded \(result.resetsDiscarded), manual \(result.resetsManual)"
        )
        line(
            "    fallbacks to manual",
            breakdown(ResetFallbackReason.allCases.map(\.name), counters.resetFallbacks))
        line("    cycles detected", "\(counters.resetCycles)")
        line(
            "    reset audit",
            counters.resetAuditViolations == 0
                ? "no rule broken (\(counters.beforeResetCallbacks) reset decisions, every pending-reset row and file action)"
                : "\(counters.resetAuditViolations) rules broken (see the failures)")
        line(
            "    callbacks",
            "before \(counters.beforeResetCallbacks), after \(counters.afterResetCallbacks), error handler \(counters.errorHandlerCalls)"
        )
        line(
            "    instructions dropped",
            breakdown(RecoveryDropReason.allCases.map(\.name), counters.recoveryDrops)
                + ", \(counters.listsCopied) lists copied")
        line("  resets per client per day", format(result.resetsPerClientPerDay, 3))
        let durations = Summary.of(result.resetDurationsNs)
        let seconds = { (ns: Double) in format(ns / 1e9, 1) + " s" }
        line(
            "  time to sync again",
            durations.count == 0
                ? "no resets"
                : "median \(seconds(durations.p50)), p95 \(seconds(durations.p95)), max \(seconds(durations.max)) over \(durations.count) resets"
        )
        if result.hasCohorts {
            line(
                "  cohorts",
                "reset mode, resets per client per day, app crashes; writes made: where they ended")
            for (index, group) in result.groupResults.enumerated() {
                let ends = WriteState.allCases.filter { $0 != .pending && $0 != .synced }
                    .compactMap { state in
                        group.writes(state) == 0
                            ? nil
                            : "\(group.writes(state)) \(state.name.replacingOccurrences(of: "_", with: " "))"
                    }
                let crashes = group.appCrashes == 0 ? "" : ", \(group.appCrashes) app crashes"
                line(
                    "    \(index) \(group.name) (\(group.clients) clients)",
                    "\(group.resetMode.rawValue), \(format(group.resetsPerClientPerDay, 3))\(crashes); \(group.writesMade): \(group.writes(.synced)) synced"
                        + (ends.isEmpty ? "" : ", " + ends.joined(separator: ", ")))
            }
        }
        let rewoundSeconds = result.counters.restoreRewindNs / Time.nanosecondsPerSecond
        let skipped = result.counters.restoresSkippedNoBackup
        let short = result.counters.restoresShortOfPoint
        let shortText =
            short == 0
            ? ""
            : "; \(short) short of the restore point by \(result.counters.restoreShortfallNs / Time.nanosecondsPerSecond) s in all, the backups before it expired under server.backupRetentionSeconds"
        let downtime = result.counters.faultDowntimeNs / Time.nanosecondsPerSecond
        let downtimeText =
            downtime == 0 ? "" : "; the server down \(downtime) s restoring or re-enabling sync"
        let rewound =
            (result.counters.restores == 0
                ? "" : " (back \(rewoundSeconds) s in all\(shortText))")
            + (skipped == 0
                ? "" : ", \(skipped) skipped (no backup: server.backupIntervalSeconds is 0)")
        let kept =
            result.counters.backups == 0
            ? ""
            : " (at most \(result.counters.backupsKeptPeak) kept at once, \(megabytes(result.counters.backupBytesPeak)))"
        line(
            "  faults",
            "\(result.counters.restores) restores\(rewound), \(result.counters.terminations) terminations, \(result.counters.schemaChanges) schema changes, \(result.counters.backups) backups\(kept)\(downtimeText)"
        )
        line(
            "  permission denied",
            "\(result.counters.accessRevocations) revocations, \(result.counters.writeAccessRevocations) of write access (\(result.counters.uploadsRefusedWithoutWriteAccess) uploads refused), \(result.counters.permissionDeniedErrors) errors reported, \(result.counters.filesDeletedAfterPermissionDenied) files deleted"
        )
        if !result.swarmFaults.isEmpty {
            line(
                "  swarm faults (from the seed)",
                // In time order (an undo is drawn right after the fault it ends).
                result.swarmFaults.enumerated().sorted {
                    ($0.element.atSeconds, $0.offset) < ($1.element.atSeconds, $1.offset)
                }.map(\.element).map { fault in
                    let percent =
                        switch fault.kind {
                        case .revokeAccess, .revokeWriteAccess: " \(fault.partitionsPercent) %"
                        case .appCrash: " \(fault.clientsPercent) %"
                        case .networkOutage:
                            " \(fault.clientsPercent) % for \(SweepPlan.shortDuration(fault.durationSeconds))"
                        default: ""
                        }
                    return
                        "\(fault.kind.rawValue)\(percent) at \(Time.clockText(fault.atSeconds * Time.nanosecondsPerSecond))"
                }.joined(separator: ", "))
        }
        line(
            "  crashes",
            "\(counters.appCrashes) app crashes (\(counters.appCrashesDuringReset) during a reset, \(counters.fileActionsAtCrashRelaunch) relaunches ran a file action), \(counters.serverCrashes) server crashes (\(counters.connectionsRefused) connections refused)"
        )
        if counters.networkOutages > 0 {
            line(
                "  network outages",
                "\(counters.networkOutages) outages, \(result.clientsCutOff) clients cut off (once per outage that drew them)"
            )
        }
        line(
            "  server history",
            "\(result.serverHistoryEntries) entries at the end (peak \(result.serverHistoryEntriesPeak)), \(result.counters.historyEntriesTrimmed) trimmed, \(result.counters.clientFilesExpired) client files expired"
        )
        line(
            "  messages",
            "\(result.counters.uploads) uploads, \(result.counters.downloads) downloads, \(result.counters.messagesLost) lost"
        )
        line(
            "  traffic",
            "\(megabytes(counters.bytesUploaded)) up, \(megabytes(counters.bytesDownloaded)) down (\(megabytes(counters.freshCopyBytes)) in \(counters.freshCopies) fresh copies)"
        )
        if counters.egressBacklogPeakBytes > 0 {
            line(
                "  server egress",
                "peak queue \(megabytes(counters.egressBacklogPeakBytes)); \(counters.egressMessagesDropped) messages (\(megabytes(counters.egressBytesDropped))) dropped unsent, their sessions ended"
            )
        }
        line(
            "  converged after healing",
            result.converged
                ? "yes, every replica equals its server file"
                : "NO: \(result.divergentClients.count) clients differ")
        Swift.print("")
        Swift.print("Wall-clock figures (this machine, not deterministic)")
        line("  wall time", "\(format(timings.wallSeconds, 2)) s")
        line("  simulated events per second", format(timings.eventsPerSecond, 0))
        line("  speed-up over real time", "\(format(timings.speedUp, 0))x")
        line(
            "  peak memory",
            "\(format(Double(timings.peakResidentBytes) / 1_048_576, 1)) MiB (\(format(timings.peakResidentBytesPerClient / 1024, 1)) KiB per client)"
        )
        Swift.print("")
        Swift.print(
            "Results: \(outputDirectory)/results.sqlite, \(outputDirectory)/runs.csv, \(outputDirectory)/clients.csv, \(outputDirectory)/timings.csv"
        )
    }

    /// "total (name: count, …)" over the non-zero counts, or "total" when all are zero.
    static func breakdown(_ names: [String], _ counts: [UInt64]) -> String {
        let parts = zip(names, counts).filter { $0.1 > 0 }.map { "\($0.0): \($0.1)" }
        let total = "\(counts.reduce(0, +))"
        return parts.isEmpty ? total : total + " (" + parts.joined(separator: ", ") + ")"
    }

    /// Bytes as decimal megabytes, two decimals ("12.34 MB").
    static func megabytes(_ bytes: UInt64) -> String {
        format(Double(bytes) / 1e6, 2) + " MB"
    }

    static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
