//! Faults drawn from the seed ("swarm testing", as TigerBeetle's simulator does it): with
//! `swarm.faultsPerDay` set, each seed draws its own fault schedule, so a sweep over many
//! seeds runs many different combinations of restores, terminations, schema changes, recovery
//! switched off, revoked access and crashes, each reproducible from its seed alone.

import Randomness

extension SwarmSpec {
    /// The kinds a swarm draws by default: every fault kind but the two that only end an
    /// earlier one (`enableClientRecovery`, `restoreAccess`), which the swarm adds itself, and
    /// `networkOutage` and `revokeWriteAccess`, which came after the swarms of record: listed
    /// in `kinds`, they are drawn too, and every other swarm draws what it drew before they
    /// existed.
    public static let drawableKinds = FaultKind.allCases.filter {
        !$0.endsAnotherFault && $0 != .networkOutage && $0 != .revokeWriteAccess
    }

    /// The fault schedule this spec draws for a run of `durationSeconds`, from `stream`: a
    /// Poisson process of `faultsPerDay`, each fault's kind drawn uniformly from `kinds`.
    /// A drawn `revokeAccess` or `revokeWriteAccess` (of 1–100 % of the partitions) and
    /// `disableClientRecovery` are
    /// undone after an exponential `undoSecondsMean` (if the run lasts that long); a drawn
    /// `appCrash` takes 1–100 % of the clients; a drawn `networkOutage` cuts off 1–100 % of
    /// the clients for an exponential `undoSecondsMean` (at least a second); a drawn
    /// `restoreFromBackup` goes back to a restore point uniform in 0 … `restorePointSecondsMax`
    /// seconds (whole, at most its own time; no draw when that is 0) and takes 0 …
    /// `restoreDurationSecondsMax` seconds (no draw when that is 0); a `breakingSchemaChange`
    /// after the first one (`scheduled` counts) is skipped, since the schema has one property
    /// to remove. With `repeatPercent`, a drawn `restoreFromBackup` or `terminateSync` is
    /// struck again 1–10 s later with that probability (a repeated restore restores the latest
    /// backup).
    /// - Returns: the faults in the order drawn (each undo or repeat right after the fault it
    ///   follows).
    func draw(durationSeconds: UInt64, scheduled: [FaultSpec], stream: RandomStream)
        -> [FaultSpec]
    {
        guard faultsPerDay > 0, !kinds.isEmpty else { return [] }
        var drawn: [FaultSpec] = []
        var schemaChanged = scheduled.contains { $0.kind == .breakingSchemaChange }
        let meanGap = 86_400 / faultsPerDay
        var at = stream.exponential(mean: meanGap)
        while at < Double(durationSeconds) {
            let kind = kinds[Int(stream.uniformInt(below: UInt64(kinds.count)))]
            let second = UInt64(at)
            switch kind {
            case .revokeAccess, .revokeWriteAccess, .disableClientRecovery:
                let percent = kind.takesPartitionsPercent ? 1 + stream.uniformInt(below: 100) : 100
                drawn.append(
                    FaultSpec(kind: kind, atSeconds: second, partitionsPercent: UInt32(percent)))
                let undo = UInt64(at + stream.exponential(mean: undoSecondsMean))
                if undo < durationSeconds {
                    drawn.append(
                        FaultSpec(
                            kind: kind.takesPartitionsPercent
                                ? .restoreAccess : .enableClientRecovery,
                            atSeconds: undo))
                }
            case .appCrash:
                let percent = 1 + stream.uniformInt(below: 100)
                drawn.append(
                    FaultSpec(kind: kind, atSeconds: second, clientsPercent: UInt32(percent)))
            case .networkOutage:
                let percent = 1 + stream.uniformInt(below: 100)
                let length = max(1, UInt64(stream.exponential(mean: undoSecondsMean)))
                drawn.append(
                    FaultSpec(
                        kind: kind, atSeconds: second, clientsPercent: UInt32(percent),
                        durationSeconds: length))
            case .restoreFromBackup:
                let point =
                    restorePointSecondsMax > 0
                    ? stream.uniformInt(below: min(restorePointSecondsMax, second) + 1) : 0
                let duration =
                    restoreDurationSecondsMax > 0
                    ? stream.uniformInt(below: restoreDurationSecondsMax + 1) : 0
                drawn.append(
                    FaultSpec(
                        kind: kind, atSeconds: second, restorePointSecondsAgo: point,
                        durationSeconds: duration))
            case .breakingSchemaChange:
                if !schemaChanged { drawn.append(FaultSpec(kind: kind, atSeconds: second)) }
                schemaChanged = true
            default:
                drawn.append(FaultSpec(kind: kind, atSeconds: second))
            }
            if repeatPercent > 0, kind == .restoreFromBackup || kind == .terminateSync,
                stream.uniformInt(below: 100) < UInt64(repeatPercent)
            {
                let again = second + 1 + stream.uniformInt(below: 10)
                if again < durationSeconds {
                    drawn.append(FaultSpec(kind: kind, atSeconds: again))
                }
            }
            at += stream.exponential(mean: meanGap)
        }
        return drawn
    }
}

extension FaultKind {
    /// `enableClientRecovery` and `restoreAccess`: they end a `disableClientRecovery`, or a
    /// `revokeAccess` or `revokeWriteAccess`, and a swarm draws them only as that end.
    public var endsAnotherFault: Bool { self == .enableClientRecovery || self == .restoreAccess }
}
