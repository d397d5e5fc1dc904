import SyncEngine
import Testing

@testable import Simulation

/// Cohorts (`cohorts`): shares of the clients that sync and write differently, and what the
/// run made of each.
@Suite struct CohortTests {
    func decode(_ json: String) throws(ScenarioError) -> Scenario {
        try Scenario.decode(bytes: Array(json.utf8), file: "cohorts.json")
    }

    func failure(_ json: String) -> ScenarioError? {
        do throws(ScenarioError) {
            _ = try decode(json)
            return nil
        } catch { return error }
    }

    /// A cohort takes the scenario's connectivity and write rates where it gives none, and
    /// consecutive clients by its share; the clients left over form the rest.
    @Test func cohortsInheritAndTakeConsecutiveClients() throws {
        let scenario = try decode(
            #"""
            { "clientsCount": 10,
              "connectivity": { "onlineSecondsMean": 500 },
              "workload": { "writesPerMinuteOffline": 0.5 },
              "cohorts": [
                { "name": "field", "clientsPercent": 25,
                  "connectivity": { "offlineSecondsMean": 7200 },
                  "workload": { "writesPerMinuteOnline": 3 } },
                { "name": "office", "clientsPercent": 50 } ] }
            """#)
        let groups = scenario.clientGroups
        #expect(groups.map(\.name) == ["field", "office", CohortSpec.restName])
        #expect(groups.map(\.clientsPercent) == [25, 50, 25])
        #expect(groups[0].connectivity.onlineSecondsMean == 500)
        #expect(groups[0].connectivity.offlineSecondsMean == 7_200)
        #expect(groups[0].writesPerMinuteOnline == 3)
        #expect(groups[0].writesPerMinuteOffline == 0.5)
        #expect(groups[1].connectivity == scenario.connectivity)
        #expect(groups[1].writesPerMinuteOnline == scenario.workload.writesPerMinuteOnline)
        // ⌊10 · 25 / 100⌋ = 2, ⌊10 · 75 / 100⌋ = 7.
        #expect(scenario.clientGroupOfClient == [0, 0, 1, 1, 1, 1, 1, 2, 2, 2])

        let whole = try decode(
            #"{ "clientsCount": 3, "cohorts": [ { "name": "a", "clientsPercent": 100 } ] }"#)
        #expect(whole.clientGroups.map(\.name) == ["a"])
        #expect(whole.clientGroupOfClient == [0, 0, 0])
        #expect(try decode("{}").clientGroups.map(\.name) == [CohortSpec.restName])
    }

    /// A cohort with a reset mode of its own (an app version) keeps it whatever the scenario's
    /// mode (a sweep's `--reset-modes` sets only that one); the others follow the scenario's.
    @Test func aCohortKeepsItsOwnResetMode() throws {
        let decoded = try decode(
            #"{ "cohorts": [ { "name": "old", "clientsPercent": 50, "clientReset": { "mode": "manual" } } ] }"#
        )
        #expect(decoded.cohorts[0].resetMode == .manual)
        #expect(decoded.clientGroups[1].resetMode == nil)
        #expect(
            failure(
                #"{ "cohorts": [ { "name": "a", "clientsPercent": 5, "clientReset": { "manualHandling": "later" } } ] }"#
            )?.field == "cohorts[0].clientReset.manualHandling")

        var scenario = smallScenario(durationSeconds: 3_000)
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 2_000)]
        scenario.cohorts = [
            CohortSpec(
                name: "old", clientsPercent: 50, connectivity: scenario.connectivity,
                writesPerMinuteOnline: scenario.workload.writesPerMinuteOnline,
                writesPerMinuteOffline: scenario.workload.writesPerMinuteOffline,
                resetMode: .manual)
        ]
        for mode in [ClientResetMode.recoverUnsyncedChanges, .discardUnsyncedChanges] {
            scenario.clientReset.mode = mode
            let result = World(scenario: scenario, seed: 3).run()
            #expect(result.passed, "\(result.failures)")
            #expect(result.groupResults.map(\.resetMode) == [.manual, mode])
            let old = result.clients.indices.filter { result.clientGroup[$0] == 0 }
            let rest = result.clients.indices.filter { result.clientGroup[$0] == 1 }
            #expect(old.count == 20 && rest.count == 20)
            #expect(old.allSatisfy { result.clients[$0].resets == result.clients[$0].resetsManual })
            #expect(old.contains { result.clients[$0].resetsManual > 0 })
            #expect(rest.allSatisfy { result.clients[$0].resetsManual == 0 })
            #expect(rest.contains { result.clients[$0].resets > 0 })
            let keptByRest = rest.reduce(0) {
                $0 + result.writes(ofClient: $1)[Int(WriteState.keptInBackup.rawValue)]
            }
            #expect(keptByRest == 0)
        }
    }

    /// Bad cohorts are errors that name the field and the fix.
    @Test func badCohortsAreNamed() {
        let over = failure(
            #"{ "cohorts": [ { "name": "a", "clientsPercent": 60 }, { "name": "b", "clientsPercent": 50 } ] }"#
        )
        #expect(over?.code == .inconsistent)
        #expect(over?.field == "cohorts[1].clientsPercent")
        let twice = failure(
            #"{ "cohorts": [ { "name": "a", "clientsPercent": 10 }, { "name": "a", "clientsPercent": 10 } ] }"#
        )
        #expect(twice?.field == "cohorts[1].name")
        #expect(
            failure(#"{ "cohorts": [ { "clientsPercent": 10 } ] }"#)?.field == "cohorts[0].name")
        #expect(
            failure(#"{ "cohorts": [ { "name": "rest", "clientsPercent": 10 } ] }"#)?.field
                == "cohorts[0].name")
        #expect(
            failure(#"{ "cohorts": [ { "name": "a b", "clientsPercent": 10 } ] }"#)?.field
                == "cohorts[0].name")
        #expect(
            failure(#"{ "cohorts": [ { "name": "a" } ] }"#)?.field == "cohorts[0].clientsPercent")
        #expect(
            failure(#"{ "cohorts": [ { "name": "a", "clientsPercent": 0 } ] }"#)?.code
                == .outOfRange)
        // A field of the cohort's own that is unknown, or out of range: the error names it.
        let fields: [(fields: String, code: ScenarioError.Code, field: String)] = [
            (#""workload": { "erasePercent": 5 }"#, .unknownField, "workload.erasePercent"),
            (
                #""connectivity": { "onlineSecondsMean": 0 }"#, .outOfRange,
                "connectivity.onlineSecondsMean"
            ),
            (#""crashes": { "appCrashesPerDay": -1 }"#, .outOfRange, "crashes.appCrashesPerDay"),
            (
                #""crashes": { "serverRestartSeconds": 5 }"#, .unknownField,
                "crashes.serverRestartSeconds"
            ),
        ]
        for (fields, code, field) in fields {
            let error = failure(
                #"{ "cohorts": [ { "name": "a", "clientsPercent": 10, "# + fields + " } ] }")
            #expect(error?.code == code, "\(fields)")
            #expect(error?.field == "cohorts[0]." + field, "\(fields)")
        }
    }

    /// An app version: a cohort with its own crash rate and manual handling. Only its apps
    /// crash at random; its manual resets wait for the app's next launch, the others' do not.
    @Test func aCohortIsAnAppVersionWithItsOwnCrashesAndHandling() throws {
        let decoded = try decode(
            #"""
            { "crashes": { "appCrashesPerDay": 2 },
              "clientReset": { "mode": "manual" },
              "cohorts": [
                { "name": "old", "clientsPercent": 50, "crashes": { "appCrashesPerDay": 48 },
                  "clientReset": { "manualHandling": "nextLaunch" } },
                { "name": "new", "clientsPercent": 25, "crashes": { "appCrashesPerDay": 0 } } ] }
            """#)
        #expect(decoded.clientGroups.map(\.appCrashesPerDay) == [48, 0, 2])
        #expect(decoded.clientGroups.map(\.manualHandling) == [.nextLaunch, nil, nil])

        var scenario = smallScenario(durationSeconds: 6_000)
        scenario.clientReset.mode = .manual
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 3_000)]
        let old = { (handling: ManualHandling?, crashes: Double) in
            CohortSpec(
                name: "old", clientsPercent: 50, connectivity: scenario.connectivity,
                writesPerMinuteOnline: scenario.workload.writesPerMinuteOnline,
                writesPerMinuteOffline: scenario.workload.writesPerMinuteOffline,
                manualHandling: handling, appCrashesPerDay: crashes)
        }
        // Crashes: only the old version's apps crash at random.
        scenario.cohorts = [old(nil, 48)]
        let crashing = World(scenario: scenario, seed: 6).run()
        #expect(crashing.passed, "\(crashing.failures)")
        #expect(crashing.groupResults.map(\.name) == ["old", CohortSpec.restName])
        #expect(crashing.groupResults[0].appCrashes > 20)
        #expect(crashing.groupResults[1].appCrashes == 0)
        #expect(
            crashing.groupResults.reduce(0) { $0 + $1.appCrashes } == crashing.counters.appCrashes)
        // Handling, without crashes: both cohorts reset at the termination, on `manual`. The
        // rest's apps back up and delete the file at once, the old version's at their next
        // launch (an hour on average), so its resets last far longer.
        scenario.cohorts = [old(.nextLaunch, 0)]
        let result = World(scenario: scenario, seed: 6).run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.appCrashes == 0)
        let groups = result.groupResults
        #expect(groups.allSatisfy { $0.resets > 0 })
        let downtime = groups.map { Double($0.resetDowntimeNs) / Double($0.resets) }
        #expect(downtime[0] > 10 * downtime[1])
    }

    /// One cohort of every client with nothing of its own is the scenario without cohorts,
    /// event for event.
    @Test func aCohortOfEveryoneChangesNothing() {
        var scenario = smallScenario(durationSeconds: 3_000)
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 2_000)]
        let plain = World(scenario: scenario, seed: 7).run()
        scenario.cohorts = [
            CohortSpec(
                name: "everyone", clientsPercent: 100, connectivity: scenario.connectivity,
                writesPerMinuteOnline: scenario.workload.writesPerMinuteOnline,
                writesPerMinuteOffline: scenario.workload.writesPerMinuteOffline)
        ]
        let grouped = World(scenario: scenario, seed: 7).run()
        #expect(plain.passed, "\(plain.failures)")
        #expect(grouped.traceDigest == plain.traceDigest)
        #expect(grouped.groupResults.map(\.name) == ["everyone"])
        #expect(plain.groupResults.map(\.name) == [CohortSpec.restName])
    }

    /// Each cohort writes at its own rates, and the cohorts' results add up to the run's:
    /// clients, writes in every ledger state, resets.
    @Test func cohortsBehaveApartAndAddUp() {
        var scenario = smallScenario(durationSeconds: 6_000)
        scenario.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000)]
        scenario.cohorts = [
            CohortSpec(
                name: "silent", clientsPercent: 25, connectivity: scenario.connectivity,
                writesPerMinuteOnline: 0, writesPerMinuteOffline: 0),
            CohortSpec(
                name: "busy", clientsPercent: 25, connectivity: scenario.connectivity,
                writesPerMinuteOnline: 8, writesPerMinuteOffline: 4),
        ]
        let result = World(scenario: scenario, seed: 4).run()
        #expect(result.passed, "\(result.failures)")
        let groups = result.groupResults
        #expect(groups.map(\.name) == ["silent", "busy", CohortSpec.restName])
        #expect(groups.map(\.clients) == [10, 10, 20])
        #expect(groups[0].writesMade == 0)
        // Per client, busy clients write about eight times as much as the rest.
        #expect(groups[1].writesMade > 3 * groups[2].writesMade / 2)
        #expect(groups[1].writes(.lostToRestore) > 0 && groups[2].writes(.lostToRestore) > 0)
        for state in WriteState.allCases {
            #expect(
                groups.reduce(0) { $0 + $1.writes(state) }
                    == result.ledgerTotals[Int(state.rawValue)])
        }
        #expect(groups.reduce(0) { $0 + $1.resets } == result.counters.resets)
        for index in result.clients.indices {
            #expect(
                result.writes(ofClient: index).reduce(0, +) == result.clients[index].writesMade)
        }
    }
}
