import Testing

@testable import Simulation

/// The backup retention policy (`server.backupRetentionSeconds`): which backups it keeps, what
/// they take to store, and restores whose restore point lies before every backup kept.
@Suite struct BackupRetentionTests {
    static let second = Time.nanosecondsPerSecond

    /// A small world with backups every 1,800 s.
    func scenario(durationSeconds: UInt64, retention: UInt64, faults: [FaultSpec] = [])
        -> Scenario
    {
        var scenario = smallScenario(durationSeconds: durationSeconds)
        scenario.clientsCount = 16
        scenario.server.backupRetentionSeconds = retention
        scenario.faults = faults
        return scenario
    }

    @Test func theFieldDecodesAndIsChecked() throws {
        let scenario = try Scenario.decode(
            bytes: Array(#"{ "server": { "backupRetentionSeconds": 86400 } }"#.utf8),
            file: "test.json")
        #expect(scenario.server.backupRetentionSeconds == 86_400)
        #expect(Scenario().server.backupRetentionSeconds == 0)
        do {
            _ = try Scenario.decode(
                bytes: Array(#"{ "server": { "backupRetentionSeconds": -1 } }"#.utf8),
                file: "test.json")
            Issue.record("a negative retention decoded")
        } catch {
            #expect(error.code == .outOfRange)
            #expect(error.field == "server.backupRetentionSeconds")
        }
    }

    /// Backups at 0, 1,800, 3,600, 5,400 s and (healing) 7,200 s. Kept 3,600 s, each backup
    /// goes once it is older than that; without a limit every one is kept.
    @Test func backupsAreKeptForTheRetentionAndTheLatestAlways() {
        let limited = World(scenario: scenario(durationSeconds: 7_200, retention: 3_600), seed: 3)
        let kept = limited.run()
        #expect(kept.passed, "\(kept.failures)")
        #expect(kept.counters.backups == 5)
        #expect(limited.backups.map(\.takenAt) == [3_600, 5_400, 7_200].map { $0 * Self.second })
        #expect(kept.counters.backupsKeptPeak == 3)
        // Only the latest backup holds its copy of the files: no restore needs another.
        #expect(limited.backupCopiesTakenAt == [7_200 * Self.second])
        #expect(limited.backupBytes == limited.backups.reduce(0) { $0 + $1.bytes })

        let forever = World(scenario: scenario(durationSeconds: 7_200, retention: 0), seed: 3)
        let all = forever.run()
        #expect(all.counters.backupsKeptPeak == 5)
        #expect(forever.backups.count == 5)
        // The same run: retention changes what is stored, not what happens.
        #expect(all.traceDigest == kept.traceDigest)
        // Every backup holds at least the one before it here (no compaction, no restore), so
        // keeping them all stores more, and the peak is the sum at the end.
        let bytes = forever.backups.map(\.bytes)
        #expect(zip(bytes, bytes.dropFirst()).allSatisfy { $0 <= $1 }, "\(bytes)")
        #expect(all.counters.backupBytesPeak == bytes.reduce(0, +))
        #expect(kept.counters.backupBytesPeak == bytes.suffix(3).reduce(0, +))
        #expect(all.counters.backupBytesPeak > kept.counters.backupBytesPeak)

        // Kept for less than the interval: only the latest is ever kept.
        let brief = World(scenario: scenario(durationSeconds: 7_200, retention: 600), seed: 3)
        #expect(brief.run().counters.backupsKeptPeak == 1)
        #expect(brief.backups.map(\.takenAt) == [7_200 * Self.second])
    }

    /// One restore at `at` going back `point` seconds, with backups every 1,800 s kept
    /// `retention` seconds: the backup restored is the one the policy says, and a restore
    /// point before every backup kept restores the oldest kept, short of the point. The
    /// expectation is worked out here from the backup times alone.
    @Test func aRestorePointBeforeEveryKeptBackupRestoresTheOldestKept() {
        let cases: [(at: UInt64, point: UInt64, retention: UInt64)] = [
            (4_000, 3_000, 1_800), (4_000, 3_000, 3_600), (4_000, 3_000, 0),
            (4_000, 0, 1_800), (4_000, 400, 1_800), (4_000, 2_200, 1_800),
            (5_000, 5_000, 3_600), (5_000, 1_000, 600), (3_700, 3_700, 3_699),
            (3_700, 3_700, 3_700),
        ]
        for (at, point, retention) in cases {
            let taken = Array(stride(from: 0, through: at, by: 1_800)) as [UInt64]
            let kept = taken.filter { retention == 0 || $0 + retention >= at || $0 == taken.last }
            let target = kept.last(where: { $0 <= at - point }) ?? kept[0]
            let short = target > at - point

            let world = World(
                scenario: scenario(
                    durationSeconds: 5_400, retention: retention,
                    faults: [
                        FaultSpec(
                            kind: .restoreFromBackup, atSeconds: at, restorePointSecondsAgo: point)
                    ]), seed: 11)
            let result = world.run()
            let label = "restore at \(at) s, \(point) s back, kept \(retention) s"
            #expect(result.passed, "\(label): \(result.failures)")
            #expect(result.counters.restores == 1, "\(label)")
            #expect(result.counters.restoreRewindNs == (at - target) * Self.second, "\(label)")
            #expect(result.counters.restoresShortOfPoint == (short ? 1 : 0), "\(label)")
            #expect(
                result.counters.restoreShortfallNs
                    == (short ? (target - (at - point)) * Self.second : 0), "\(label)")
        }
    }

    /// The shrinker tries keeping every backup (`server.backupRetentionSeconds=0`), and keeps
    /// that only when the failure does not need the retention. Stand-in runs.
    @Test func shrinkingDropsARetentionTheFailureDoesNotNeed() throws {
        let base = Array(
            Scenario.defaultScenarioJSON.replacingOccurrences(
                of: #""backupIntervalSeconds": 21600,"#,
                with: #""backupIntervalSeconds": 21600, "backupRetentionSeconds": 7200,"#
            ).utf8)
        func shrink(failsWhen condition: @escaping (Scenario) -> Bool) throws -> (
            ShrinkReport, Scenario
        ) {
            let shrinker = Shrinker(
                baseBytes: base, file: "test.json", resetMode: nil, backupIntervalSeconds: nil,
                runsMax: 300, anyFailure: false
            ) { scenario in
                let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
                return ShrinkOutcome(
                    failures: condition(scenario) ? ["restore fell short"] : [],
                    digest: String(size, radix: 16), faults: scenario.faults, events: size)
            }
            let start = ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [])
            #expect(try shrinker.scenario(for: start).server.backupRetentionSeconds == 7_200)
            let report = shrinker.shrink(start)
            return (report, try shrinker.scenario(for: report.result.input))
        }
        let (any, anyScenario) = try shrink { _ in true }
        #expect(anyScenario.server.backupRetentionSeconds == 0)
        #expect(
            any.trials.contains {
                $0.verdict == .kept && $0.step == "set server.backupRetentionSeconds=0"
            })
        let (needed, neededScenario) = try shrink { $0.server.backupRetentionSeconds > 0 }
        #expect(neededScenario.server.backupRetentionSeconds == 7_200)
        #expect(
            needed.trials.contains {
                $0.verdict == .passed && $0.step == "set server.backupRetentionSeconds=0"
            })
    }

    /// A retention longer than the run changes nothing: the same run, digest and figures as
    /// keeping every backup, restore points and all.
    @Test func aRetentionLongerThanTheRunChangesNothing() {
        let faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000, restorePointSecondsAgo: 2_500),
            FaultSpec(kind: .restoreFromBackup, atSeconds: 5_000),
        ]
        let forever = World(
            scenario: scenario(durationSeconds: 5_400, retention: 0, faults: faults), seed: 4
        ).run()
        let long = World(
            scenario: scenario(durationSeconds: 5_400, retention: 86_400, faults: faults), seed: 4
        ).run()
        #expect(forever.passed && long.passed, "\(forever.failures) \(long.failures)")
        #expect(forever.traceDigest == long.traceDigest)
        #expect(forever.counters.restoreRewindNs == long.counters.restoreRewindNs)
        #expect(long.counters.restoresShortOfPoint == 0)
        #expect(forever.counters.backupBytesPeak == long.counters.backupBytesPeak)
        #expect(forever.writesLostToRestore == long.writesLostToRestore)
    }
}
