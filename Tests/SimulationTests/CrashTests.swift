import Testing

@testable import Simulation

/// App crashes and server crashes (`crashes`, and the `appCrash` and `serverCrash` faults).
@Suite struct CrashTests {
    /// A scenario without random crashes draws exactly as before crashes existed: its crash
    /// settings change nothing.
    @Test func crashSettingsWithoutCrashesChangeNothing() {
        let plain = smallScenario(durationSeconds: 3_000)
        var settled = plain
        settled.crashes.appRelaunchSecondsMean = 5
        settled.crashes.serverRestartSeconds = 600
        let first = World(scenario: plain, seed: 3).run()
        let second = World(scenario: settled, seed: 3).run()
        #expect(first.traceDigest == second.traceDigest)
        #expect(second.counters.appCrashes == 0)
        #expect(first.passed, "\(first.failures)")
    }

    /// Every online client is waiting for the fresh copy of an automatic reset when its app
    /// crashes. The reset starts over at the next session after the relaunch and completes
    /// once; its before-callback runs once (the interrupted attempt never got its copy).
    @Test func anAppCrashDuringAResetRepeatsTheResetAtRelaunch() {
        var scenario = smallScenario(durationSeconds: 3_000)
        // Fixed 2 s latency, 1 s back-off: the termination at 1,000 s reaches every client's
        // IDENT at about 1,003 s, its 208 at about 1,005 s, and the fresh copy would arrive at
        // about 1,009 s. The apps crash at 1,006 s.
        scenario.network.latencyMillisecondsMedian = 2_000
        scenario.network.latencySigma = 0
        scenario.network.reconnectSecondsMin = 1
        scenario.network.reconnectSecondsMax = 1
        scenario.crashes.appRelaunchSecondsMean = 30
        scenario.faults = [
            FaultSpec(kind: .terminateSync, atSeconds: 1_000),
            FaultSpec(kind: .appCrash, atSeconds: 1_006),
        ]
        let world = World(scenario: scenario, seed: 8)
        world.scriptedConnectivity = true
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.appCrashes == 40)
        #expect(result.counters.appCrashesDuringReset == 40)
        #expect(result.clients.allSatisfy { $0.resets == 1 && $0.appCrashes == 1 })
        #expect(result.counters.beforeResetCallbacks == 40)
        #expect(result.resetsByCause.first { $0.cause == .badClientFileIdent }?.count == 40)
        // Each reset waited for its app's relaunch.
        #expect(result.resetDurationsNs.allSatisfy { $0 > 4 * Time.nanosecondsPerSecond })

        // Without the crash, the same resets take a round trip or two.
        scenario.faults.removeLast()
        let uninterrupted = World(scenario: scenario, seed: 8)
        uninterrupted.scriptedConnectivity = true
        let plain = uninterrupted.run()
        #expect(plain.passed, "\(plain.failures)")
        #expect(plain.resetDurationsNs.count == 40)
        #expect(plain.resetDurationsNs.allSatisfy { $0 < 5 * Time.nanosecondsPerSecond })
    }

    /// Random crashes keep every check (ledger, convergence, recovery promises), are
    /// deterministic, and, with `nextLaunch` handling, a crash's relaunch runs the file action
    /// the error handler left for the next launch, so manual resets end sooner.
    @Test func randomCrashesRunLeftFileActionsAtRelaunch() {
        var scenario = smallScenario()
        scenario.clientReset.mode = .manual
        scenario.clientReset.manualHandling = .nextLaunch
        scenario.clientReset.relaunchSecondsMean = 20_000
        scenario.network.lossPerMillion = 1_000
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 2_000)]
        var crashing = scenario
        crashing.crashes.appCrashesPerDay = 100
        let first = World(scenario: crashing, seed: 4).run()
        // The timeline changes nothing, and its crash counts add up to the run's.
        let sampled = World(scenario: crashing, seed: 4)
        sampled.timelineIntervalNs = 600 * Time.nanosecondsPerSecond
        let second = sampled.run()
        #expect(sampled.timeline.reduce(0) { $0 + $1.appCrashes } == second.counters.appCrashes)
        #expect(first.traceDigest == second.traceDigest)
        #expect(first.clients == second.clients)
        #expect(first.passed, "\(first.failures)")
        #expect(first.counters.appCrashes > 100)
        #expect(first.clients.reduce(0) { $0 + $1.appCrashes } == first.counters.appCrashes)
        #expect(first.counters.appCrashesDuringReset > 0)
        #expect(first.counters.fileActionsAtCrashRelaunch > 0)

        let calm = World(scenario: scenario, seed: 4).run()
        #expect(calm.passed, "\(calm.failures)")
        #expect(calm.counters.fileActionsAtCrashRelaunch == 0)
        let median = { (durations: [UInt64]) in durations.sorted()[durations.count / 2] }
        #expect(median(first.resetDurationsNs) < median(calm.resetDurationsNs))
    }

    /// A server crash loses nothing and resets no one: the sessions end, nothing is integrated
    /// while the server is down, connection attempts fail until it restarts, and the clients
    /// come back after their back-off.
    @Test func aServerCrashEndsSessionsWithoutResets() {
        var scenario = smallScenario(durationSeconds: 4_000)
        scenario.crashes.serverRestartSeconds = 60
        scenario.faults = [FaultSpec(kind: .serverCrash, atSeconds: 3_000)]
        let world = World(scenario: scenario, seed: 6)
        world.timelineIntervalNs = 10 * Time.nanosecondsPerSecond
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.serverCrashes == 1)
        #expect(result.counters.resets == 0)
        #expect(result.writesLostToRestore == 0)
        #expect(result.counters.connectionsRefused > 0)
        let down = world.timeline.filter {
            $0.endNs > 3_000 * Time.nanosecondsPerSecond
                && $0.endNs <= 3_060 * Time.nanosecondsPerSecond
        }
        #expect(down.count == 6)
        #expect(down.allSatisfy { $0.changesetsIntegrated == 0 && $0.clientsSyncing == 0 })
        let later = world.timeline.first { $0.endNs == 3_300 * Time.nanosecondsPerSecond }
        #expect((later?.clientsSyncing ?? 0) > 0)
    }
}
