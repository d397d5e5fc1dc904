import SyncEngine
import Testing

@testable import Simulation

/// Point-in-time restores (`faults[].restorePointSecondsAgo`), the backups kept for them, and
/// `--set` paths that name an array's item (`faults[0].atSeconds`).
@Suite struct RestorePointTests {
    func decode(_ json: String, setting texts: [String] = []) throws -> Scenario {
        let settings = try texts.map { text in try #require(ScenarioSetting(text)) }
        return try Scenario.decode(bytes: Array(json.utf8), file: "test.json", settings: settings)
    }

    func failure(_ json: String, setting texts: [String] = []) -> ScenarioError? {
        do {
            _ = try decode(json, setting: texts)
            return nil
        } catch {
            return error as? ScenarioError
        }
    }

    // MARK: - The field

    @Test func theRestorePointDecodesAndIsCheckedAgainstItsFault() throws {
        let scenario = try decode(
            #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 50400, "restorePointSecondsAgo": 21600 }, { "kind": "restoreFromBackup", "atSeconds": 60000 } ] }"#
        )
        #expect(scenario.faults.map(\.restorePointSecondsAgo) == [21_600, 0])
        // At most the fault's time: a backup before the run's start does not exist.
        let early = try #require(
            failure(
                #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 100, "restorePointSecondsAgo": 101 } ] }"#
            ))
        #expect(early.code == .outOfRange)
        #expect(early.field == "faults[0].restorePointSecondsAgo")
        #expect(early.problem.contains("before the run's start"))
        #expect(early.fix.contains("at most 100"))
        #expect(
            failure(
                #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 100, "restorePointSecondsAgo": 100 } ] }"#
            ) == nil)
        // Only a restore has a restore point.
        let other = try #require(
            failure(
                #"{ "faults": [ { "kind": "terminateSync", "atSeconds": 100, "restorePointSecondsAgo": 0 } ] }"#
            ))
        #expect(other.code == .inconsistent)
        #expect(other.field == "faults[0].restorePointSecondsAgo")
        #expect(other.fix.contains("restoreFromBackup"))
        #expect(
            failure(
                #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 100, "restorePointSecondsAgo": -1 } ] }"#
            )?.code == .outOfRange)
    }

    /// `FaultSpec.json` (the shrinker's and the capsule's form) writes the restore point and a
    /// restore's downtime back, only where they are set.
    @Test func faultsWrittenAsJSONDecodeToTheSameFaults() throws {
        let faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 7_000, restorePointSecondsAgo: 2_500),
            FaultSpec(kind: .restoreFromBackup, atSeconds: 7_100),
            FaultSpec(kind: .restoreFromBackup, atSeconds: 7_200, durationSeconds: 900),
            FaultSpec(kind: .revokeAccess, atSeconds: 10, partitionsPercent: 30),
            FaultSpec(kind: .networkOutage, atSeconds: 20),
        ]
        let json = FaultSpec.json(faults)
        #expect(json.contains("\"restorePointSecondsAgo\":2500"))
        #expect(json.components(separatedBy: "restorePointSecondsAgo").count == 2)
        #expect(json.contains("\"atSeconds\":7200,\"durationSeconds\":900"))
        #expect(json.components(separatedBy: "durationSeconds").count == 2)
        #expect(try decode("{ \"faults\": \(json) }").faults == faults)
    }

    // MARK: - A restore that takes its time

    @Test func aRestoresDurationDecodesWithItsOwnDefault() throws {
        let scenario = try decode(
            #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 100, "durationSeconds": 1800 }, { "kind": "restoreFromBackup", "atSeconds": 200, "durationSeconds": 0 }, { "kind": "restoreFromBackup", "atSeconds": 300 }, { "kind": "networkOutage", "atSeconds": 400 } ] }"#
        )
        // A restore is instant unless it says otherwise; an outage lasts an hour.
        #expect(scenario.faults.map(\.durationSeconds) == [1_800, 0, 0, 3_600])
        #expect(
            failure(
                #"{ "faults": [ { "kind": "networkOutage", "atSeconds": 100, "durationSeconds": 0 } ] }"#
            )?.code == .outOfRange)
        let other = try #require(
            failure(
                #"{ "faults": [ { "kind": "serverCrash", "atSeconds": 100, "durationSeconds": 60 } ] }"#
            ))
        #expect(other.code == .inconsistent && other.field == "faults[0].durationSeconds")
        #expect(
            other.problem.contains(
                "networkOutage, restoreFromBackup, terminateSync and breakingSchemaChange faults only"
            ))
        #expect(
            try decode(
                #"{ "faults": [ { "kind": "terminateSync", "atSeconds": 100, "durationSeconds": 600 } ] }"#
            ).faults[0].durationSeconds == 600)
        // Through --set, as a sweep varies it.
        let set = try decode(
            #"{ "faults": [ { "kind": "restoreFromBackup", "atSeconds": 100 } ] }"#,
            setting: ["faults[0].durationSeconds=600"])
        #expect(set.faults[0].durationSeconds == 600)
    }

    /// A restore that takes 20 minutes keeps the server down that long: no session, no
    /// integration and no reset until it is back, the apps writing on meanwhile; then the
    /// storm, with what they wrote recovered. An instant restore (0) is the run without the
    /// field.
    @Test func aLongRestoreKeepsTheServerDownAndDelaysTheStorm() {
        var results: [UInt64: RunResult] = [:]
        var timelines: [UInt64: [TimelineSample]] = [:]
        for duration in [0, 1_200] as [UInt64] {
            var scenario = smallScenario(durationSeconds: 7_200)
            scenario.faults = [
                FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000, durationSeconds: duration)
            ]
            let world = World(scenario: scenario, seed: 8)
            world.timelineIntervalNs = 100 * Time.nanosecondsPerSecond
            let result = world.run()
            #expect(result.passed, "duration \(duration): \(result.failures)")
            #expect(result.counters.restores == 1)
            results[duration] = result
            timelines[duration] = world.timeline
        }
        var plain = smallScenario(durationSeconds: 7_200)
        plain.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000)]
        #expect(World(scenario: plain, seed: 8).run().traceDigest == results[0]!.traceDigest)
        let (instant, slow) = (results[0]!, results[1_200]!)
        #expect(instant.counters.faultDowntimeNs == 0)
        #expect(slow.counters.faultDowntimeNs == 1_200 * Time.nanosecondsPerSecond)
        #expect(slow.counters.connectionsRefused > instant.counters.connectionsRefused)
        // Down from 4,000 s to 5,200 s: nothing integrated, no one syncing, no reset begun.
        let rows = timelines[1_200]!
        let down = rows.filter {
            $0.endNs > 4_000 * Time.nanosecondsPerSecond
                && $0.endNs <= 5_200 * Time.nanosecondsPerSecond
        }
        #expect(down.count == 12)
        #expect(down.allSatisfy { $0.changesetsIntegrated == 0 && $0.clientsSyncing == 0 })
        #expect(
            down.allSatisfy { $0.resetsStarted == 0 } && down.reduce(0) { $0 + $1.writesMade } > 0)
        let after = rows.first { $0.endNs == 5_300 * Time.nanosecondsPerSecond }
        #expect((after?.resetsStarted ?? 0) > 0)
        // The instant restore's storm is at once.
        let instantRow = timelines[0]!.first { $0.endNs == 4_100 * Time.nanosecondsPerSecond }
        #expect((instantRow?.resetsStarted ?? 0) > 0)
        // The writes made while it was down waited, and recovery replayed them.
        #expect(slow.writesRecovered > instant.writesRecovered)
    }

    /// Sync re-enabled 10 minutes after its termination: down meanwhile, then every client
    /// that synced before resets with 208, as after an instant one.
    @Test func aTerminationReenabledLaterKeepsTheServerDownMeanwhile() {
        var scenario = smallScenario(durationSeconds: 7_200)
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 3_000, durationSeconds: 600)]
        let world = World(scenario: scenario, seed: 4)
        world.timelineIntervalNs = 100 * Time.nanosecondsPerSecond
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.terminations == 1)
        #expect(result.counters.faultDowntimeNs == 600 * Time.nanosecondsPerSecond)
        #expect(result.counters.connectionsRefused > 0)
        let down = world.timeline.filter {
            $0.endNs > 3_000 * Time.nanosecondsPerSecond
                && $0.endNs <= 3_600 * Time.nanosecondsPerSecond
        }
        #expect(down.count == 6)
        #expect(down.allSatisfy { $0.clientsSyncing == 0 && $0.resetsStarted == 0 })
        let cause = ProtocolErrorCode.resetCauses.firstIndex(of: .badClientFileIdent)!
        #expect(result.clients.reduce(0) { $0 + $1.resetsByCause[cause] } > 0)
    }

    // MARK: - `--set` through an array's item

    @Test func aSettingNamesAnArrayItemByItsIndex() throws {
        let json = Scenario.defaultScenarioJSON
        let changed = try decode(
            json,
            setting: [
                "faults[0].restorePointSecondsAgo=43200", "faults[1].atSeconds=80000",
                "faults[1].kind=restoreFromBackup",
            ])
        var expected = try decode(json)
        expected.faults[0].restorePointSecondsAgo = 43_200
        expected.faults[1].atSeconds = 80_000
        expected.faults[1].kind = .restoreFromBackup
        #expect(changed == expected)
        // The decoder checks the item as if the file held it.
        let inconsistent = try #require(
            failure(json, setting: ["faults[1].restorePointSecondsAgo=5"]))
        #expect(inconsistent.code == .inconsistent)
        #expect(inconsistent.field == "faults[1].restorePointSecondsAgo")
        #expect(
            failure(json, setting: ["faults[0].restorePointSecondsAgo=50401"])?.field
                == "faults[0].restorePointSecondsAgo")
    }

    @Test func aSettingThroughAMissingItemOrANonArrayIsNamed() throws {
        let json = Scenario.defaultScenarioJSON
        let beyond = try #require(failure(json, setting: ["faults[2].atSeconds=1"]))
        #expect(beyond.code == .outOfRange)
        #expect(beyond.field == "faults")
        #expect(beyond.problem.contains("item 2") && beyond.problem.contains("2 items"))
        #expect(beyond.fix.contains("from 0 to 1"))
        #expect(beyond.file == "test.json with --set faults[2].atSeconds=1")
        let none = try #require(failure("{}", setting: ["faults[0].atSeconds=1"]))
        #expect(none.code == .outOfRange)
        #expect(none.problem.contains("0 items"))
        #expect(none.fix.contains("faults=[…]"))
        let scalar = try #require(failure(json, setting: ["seed[0]=1"]))
        #expect(scalar.code == .wrongType)
        #expect(scalar.field == "seed")
        let nested = try #require(failure(json, setting: ["server.backupIntervalSeconds[1]=1"]))
        #expect(nested.field == "server.backupIntervalSeconds")
        // A malformed index is not a setting.
        for text in [
            "faults[].atSeconds=1", "faults[x].atSeconds=1", "faults[1]x.atSeconds=1",
            "faults]=1", "[0].atSeconds=1", "faults[-1].atSeconds=1", "faults[1=2",
        ] {
            #expect(ScenarioSetting(text) == nil, "\(text)")
        }
        #expect(ScenarioSetting.item("faults[12]")! == ("faults", 12))
        #expect(ScenarioSetting.item("faults")! == ("faults", nil))
    }

    // MARK: - Runs

    /// Backups at 0, 1,800 and 3,600 s; a restore at 4,000 s goes back to the latest backup
    /// at or before its restore point. The run is the same up to the restore whatever the
    /// point, so an older backup loses the same writes and more.
    @Test func aRestorePointPicksTheLatestBackupAtOrBeforeIt() {
        var results: [RunResult] = []
        for (point, backupAt) in [(0, 3_600), (1_000, 1_800), (1_800, 1_800), (4_000, 0)]
            as [(UInt64, UInt64)]
        {
            var scenario = smallScenario(durationSeconds: 5_400)
            scenario.faults = [
                FaultSpec(
                    kind: .restoreFromBackup, atSeconds: 4_000, restorePointSecondsAgo: point)
            ]
            let result = World(scenario: scenario, seed: 5).run()
            #expect(result.passed, "restore point \(point): \(result.failures)")
            #expect(result.counters.restores == 1)
            #expect(
                result.counters.restoreRewindNs == (4_000 - backupAt) * Time.nanosecondsPerSecond,
                "restore point \(point)")
            results.append(result)
        }
        let lost = results.map(\.writesLostToRestore)
        #expect(lost[0] > 0)
        #expect(lost[1] > lost[0], "\(lost)")
        #expect(lost[2] == lost[1], "\(lost)")
        #expect(lost[3] > lost[1], "\(lost)")
        // Restoring the start's backup, taken before any client had a file ident.
        #expect(results[3].counters.resets > 0)
    }

    /// Only the backups a restore can still reach are kept; a restore drops the backups taken
    /// after the one it restored (the timeline it abandons), so a later restore of the latest
    /// backup goes back to it.
    @Test func backupsAreKeptAsFarBackAsARestoreReaches() {
        var scenario = smallScenario(durationSeconds: 7_200)
        scenario.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 7_000, restorePointSecondsAgo: 2_500)
        ]
        let world = World(scenario: scenario, seed: 9)
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        // Backups at 0, 1,800, 3,600 and 5,400 s; at 5,400 s the one at 0 is out of reach
        // (a restore at 5,400 s or later goes back to 2,900 s at most). The restore at 7,000 s
        // goes back to 3,600 s and drops 5,400 s; healing takes one at 7,200 s, and 1,800 s
        // goes out of reach.
        #expect(
            world.backupCopiesTakenAt == [3_600, 7_200].map { $0 * Time.nanosecondsPerSecond })
        // With no retention limit the policy keeps every backup but those the restore dropped.
        #expect(
            world.backups.map(\.takenAt)
                == [0, 1_800, 3_600, 7_200].map { $0 * Time.nanosecondsPerSecond })
        #expect(result.counters.restoreRewindNs == 3_400 * Time.nanosecondsPerSecond)
        #expect(result.counters.backups == 5)

        var twice = smallScenario(durationSeconds: 7_200)
        twice.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000, restorePointSecondsAgo: 2_500),
            FaultSpec(kind: .restoreFromBackup, atSeconds: 5_000),
        ]
        let again = World(scenario: twice, seed: 9).run()
        #expect(again.passed, "\(again.failures)")
        #expect(again.counters.restores == 2)
        // 4,000 s back to 0 (1,800 and 3,600 s dropped), then 5,000 s back to 0 again.
        #expect(again.counters.restoreRewindNs == 9_000 * Time.nanosecondsPerSecond)

        var latestOnly = smallScenario(durationSeconds: 7_200)
        latestOnly.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 7_000)]
        let latest = World(scenario: latestOnly, seed: 9)
        _ = latest.run()
        #expect(latest.backupCopiesTakenAt == [7_200 * Time.nanosecondsPerSecond])
    }

    @Test func withoutBackupsARestoreIsSkippedAndCounted() {
        var scenario = smallScenario(durationSeconds: 3_600)
        scenario.server.backupIntervalSeconds = 0
        scenario.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 2_000, restorePointSecondsAgo: 600)
        ]
        let result = World(scenario: scenario, seed: 2).run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.restores == 0 && result.counters.restoresSkippedNoBackup == 1)
        #expect(result.counters.restoreRewindNs == 0 && result.writesLostToRestore == 0)
    }

    // MARK: - Shrinking

    static let farRestore = Array(
        Scenario.defaultScenarioJSON.replacingOccurrences(
            of: #"{ "kind": "restoreFromBackup", "atSeconds": 50400 }"#,
            with:
                #"{ "kind": "restoreFromBackup", "atSeconds": 50400, "restorePointSecondsAgo": 43200 }"#
        ).utf8)

    func shrink(failsWhen condition: @escaping (FaultSpec) -> Bool) throws -> (
        ShrinkReport, Shrinker
    ) {
        let shrinker = Shrinker(
            baseBytes: Self.farRestore, file: "test.json", resetMode: nil,
            backupIntervalSeconds: nil, runsMax: 500, anyFailure: false
        ) { scenario in
            let fails = scenario.faults.contains { $0.kind == .restoreFromBackup && condition($0) }
            let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
            return ShrinkOutcome(
                failures: fails ? ["restore lost data"] : [], digest: String(size, radix: 16),
                faults: scenario.faults, events: size)
        }
        #expect(
            try shrinker.scenario(
                for: ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [])
            ).faults[0].restorePointSecondsAgo == 43_200)
        return (
            shrinker.shrink(ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [])),
            shrinker
        )
    }

    /// Moving a restore early keeps its restore point inside the run (no candidate is invalid),
    /// and a restore point the failure does not need goes.
    @Test func shrinkingKeepsRestorePointsInsideTheRunAndDropsThemWhenNotNeeded() throws {
        let (any, anyShrinker) = try shrink { _ in true }
        #expect(
            !any.trials.contains { $0.verdict == .invalid },
            "\(any.trials.filter { $0.verdict == .invalid })")
        let anyFault = try #require(try anyShrinker.scenario(for: any.result.input).faults.first)
        #expect(anyFault.restorePointSecondsAgo == 0)
        #expect(
            any.trials.contains {
                $0.verdict == .kept && $0.step.hasPrefix("restore the latest backup")
            })

        let (far, farShrinker) = try shrink { $0.restorePointSecondsAgo > 0 }
        #expect(!far.trials.contains { $0.verdict == .invalid })
        let farFault = try #require(try farShrinker.scenario(for: far.result.input).faults.first)
        #expect(farFault.atSeconds < 120)
        #expect(farFault.restorePointSecondsAgo > 0)
        #expect(farFault.restorePointSecondsAgo <= farFault.atSeconds)
        #expect(
            far.trials.contains {
                $0.verdict == .passed && $0.step.hasPrefix("restore the latest backup")
            })
    }
}
