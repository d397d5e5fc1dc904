import Randomness
import Testing

@testable import Simulation

/// A small world: 40 clients in 4 partitions, no message loss, short run.
func smallScenario(durationSeconds: UInt64 = 7_200) -> Scenario {
    var scenario = Scenario()
    scenario.name = "small"
    scenario.clientsCount = 40
    scenario.partitionsCount = 4
    scenario.durationSeconds = durationSeconds
    scenario.workload.objectsPerPartition = 100
    scenario.network.lossPerMillion = 0
    scenario.connectivity.onlineSecondsMean = 900
    scenario.connectivity.offlineSecondsMean = 900
    scenario.server.backupIntervalSeconds = 1_800
    return scenario
}

@Suite struct DeterminismTests {
    @Test func sameSeedSameDigestAndCounters() {
        var scenario = smallScenario()
        scenario.network.lossPerMillion = 2_000
        scenario.clock.skewMillisecondsMax = 500
        scenario.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000),
            FaultSpec(kind: .terminateSync, atSeconds: 6_000),
        ]
        let first = World(scenario: scenario, seed: 42).run()
        let second = World(scenario: scenario, seed: 42).run()
        #expect(first.traceDigest == second.traceDigest)
        #expect(first.eventsProcessed == second.eventsProcessed)
        #expect(first.clients == second.clients)
        #expect(first.ledgerTotals == second.ledgerTotals)
        #expect(first.passed, "\(first.failures)")
        #expect(first.counters.messagesLost > 0)
        #expect(first.counters.resets > 0)
    }

    /// Checkpoints change nothing, and two runs that part at a known time agree on every
    /// checkpoint before it and on none after it.
    @Test func checkpointsNameWhereTwoRunsPart() {
        let scenario = smallScenario(durationSeconds: 3_000)
        let plain = World(scenario: scenario, seed: 5).run()
        let world = World(scenario: scenario, seed: 5)
        world.checkpointInterval = 500
        let result = world.run()
        #expect(result.traceDigest == plain.traceDigest)
        #expect(result.eventsProcessed == plain.eventsProcessed)
        let checkpoints = world.checkpoints
        #expect(checkpoints.count == Int(result.eventsProcessed / 500) + 1)
        #expect(checkpoints.dropLast().allSatisfy { $0.events % 500 == 0 })
        #expect(checkpoints.last?.events == result.eventsProcessed)
        #expect(checkpoints.last?.digest == result.traceDigest.hex)
        #expect(zip(checkpoints, checkpoints.dropFirst()).allSatisfy { $0.timeNs <= $1.timeNs })

        // The second backup comes at 30 min in one run and 60 min in the other: nothing differs
        // before 30 min, and everything from then on.
        var later = scenario
        later.server.backupIntervalSeconds = 3_600
        let other = World(scenario: later, seed: 5)
        other.checkpointInterval = 500
        _ = other.run()
        let parting = Time.nanoseconds(seconds: 1_800)
        let pairs = zip(checkpoints, other.checkpoints)
        let before = pairs.filter { $0.0.timeNs < parting && $0.1.timeNs < parting }
        #expect(before.count > 2)
        #expect(before.allSatisfy { $0.0 == $0.1 })
        let after = pairs.filter { $0.0.timeNs >= parting || $0.1.timeNs >= parting }
        #expect(after.count > 2)
        #expect(after.allSatisfy { $0.0.digest != $0.1.digest })
    }

    @Test func differentSeedsDiffer() {
        let scenario = smallScenario()
        let digests = Set(
            (1...4).map { World(scenario: scenario, seed: UInt64($0)).run().traceDigest.value })
        #expect(digests.count == 4)
    }

    @Test func aClientsStreamDoesNotDependOnOtherStreams() {
        let alone = RandomStream(seed: 9, id: StreamID(domain: 1, index: 5))
        let aloneDraws = (0..<8).map { _ in alone.next32() }
        let others = (0..<50).map {
            RandomStream(seed: 9, id: StreamID(domain: 1, index: UInt64($0 + 100)))
        }
        for other in others { _ = other.next32() }
        let again = RandomStream(seed: 9, id: StreamID(domain: 1, index: 5))
        #expect((0..<8).map { _ in again.next32() } == aloneDraws)
    }

    @Test func addingAClientKeepsTheOthersWorkloadDraws() {
        // Client 0's write count over a run without sync interaction depends only on its own
        // streams: compare a world of 3 and of 4 clients, each client in its own partition.
        func writes(clients: UInt32) -> [UInt64] {
            var scenario = smallScenario(durationSeconds: 3_600)
            scenario.clientsCount = clients
            scenario.partitionsCount = clients
            scenario.faults = []
            let result = World(scenario: scenario, seed: 5).run()
            return result.clients.map(\.writesMade)
        }
        #expect(Array(writes(clients: 4).prefix(3)) == writes(clients: 3))
    }
}

@Suite struct ConvergenceTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func everyReplicaConvergesAfterHealing(seed: UInt64) {
        var scenario = smallScenario()
        scenario.network.lossPerMillion = 5_000
        scenario.clock.skewMillisecondsMax = 3_000
        scenario.workload.keyDistribution = .zipf
        scenario.workload.objectsPerPartition = 20
        scenario.workload.erasePercent = 20
        scenario.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 3_000)]
        let result = World(scenario: scenario, seed: seed).run()
        #expect(result.passed, "seed \(seed): \(result.failures)")
        #expect(result.converged)
        #expect(result.writesPending == 0)
        #expect(result.ledgerBalances)
        #expect(result.writesMade > 500)
    }
}

@Suite struct FaultTests {
    /// Backups at 0, 1800, 3600 s. The even clients go offline at 1500 s (before the backup at
    /// 1800 s) and come back at 3000 s, after the restore at 2700 s; the odd clients stay online
    /// and keep writing and syncing throughout. Exactly the odd clients synced after the
    /// backup, so exactly they must reset, and each once.
    @Test func restoreResetsExactlyTheClientsThatSyncedAfterTheBackup() {
        var scenario = smallScenario(durationSeconds: 5_400)
        scenario.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 2_700)]
        let world = World(scenario: scenario, seed: 3)
        world.scriptedConnectivity = true
        world.timelineIntervalNs = 900 * 1_000_000_000
        for client in stride(from: UInt32(0), to: 40, by: 2) {
            world.schedule(client: client, online: false, atSeconds: 1_500)
            world.schedule(client: client, online: true, atSeconds: 3_000)
        }
        let result = world.run()
        // The timeline places the restore and its resets in the quarter hour from 2,700 s.
        let timeline = world.timeline
        #expect(timeline.count == 7)
        #expect(timeline[3].endNs == 3_600 * 1_000_000_000)
        #expect(timeline[3].events == ["restoreFromBackup"])
        #expect(timeline[6].events == ["healing"])
        #expect(timeline.reduce(0) { $0 + $1.resetsStarted } == 20)
        #expect(timeline.reduce(0) { $0 + $1.resetsEnded } == 20)
        #expect(timeline[0..<3].allSatisfy { $0.resetsStarted == 0 && $0.clientsInReset == 0 })
        #expect(timeline.last!.clientsInReset == 0 && timeline.last!.clientsSyncing == 40)
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.restores == 1)
        for client in 0..<40 {
            let counters = result.clients[client]
            if client % 2 == 0 {
                #expect(
                    counters.resets == 0, "client \(client) did not sync after the backup but reset"
                )
            } else {
                #expect(
                    counters.resets == 1,
                    "client \(client) synced after the backup; expected one reset, got \(counters.resets)"
                )
            }
        }
        // Writes the odd clients had acknowledged between the backup and the restore are lost.
        #expect(result.writesLostToRestore > 0)
    }

    /// Terminate and re-enable: every client that had connected before gets 208 at its next
    /// IDENT and resets exactly once, whether it was online at that moment or came back later.
    @Test func terminateMakesEveryPreviouslyConnectedClientResetWith208() {
        var scenario = smallScenario(durationSeconds: 5_400)
        scenario.faults = [FaultSpec(kind: .terminateSync, atSeconds: 2_700)]
        let world = World(scenario: scenario, seed: 4)
        world.scriptedConnectivity = true
        for client in stride(from: UInt32(0), to: 40, by: 3) {
            world.schedule(client: client, online: false, atSeconds: 2_000)
            world.schedule(client: client, online: true, atSeconds: 4_000)
        }
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        let index208 = ResetCause.resetCauses.firstIndex(of: .badClientFileIdent)!
        for client in 0..<40 {
            let counters = result.clients[client]
            #expect(counters.resets == 1, "client \(client): \(counters.resets) resets")
            #expect(
                counters.resetsByCause[index208] == 1, "client \(client) reset for another cause")
        }
        // Data stays on the server after termination: nothing was lost to a restore.
        #expect(result.writesLostToRestore == 0)
    }

    /// The client max offline time: the clients offline for longer than it (every third,
    /// 3,000 s) expire and reset exactly once, with 222, when they come back; those offline for
    /// less (the next third, 900 s) and those always online never reset. The history is
    /// trimmed meanwhile. Without the setting nobody resets and nothing is trimmed.
    @Test func clientsOfflineLongerThanTheMaxOfflineTimeResetWith222() {
        func run(maxOffline: UInt64) -> RunResult {
            var scenario = smallScenario(durationSeconds: 4_200)
            scenario.clientsCount = 21
            scenario.server.clientMaxOfflineSeconds = maxOffline
            scenario.server.historyCompactionIntervalSeconds = 600
            let world = World(scenario: scenario, seed: 6)
            world.scriptedConnectivity = true
            for client in stride(from: UInt32(0), to: 21, by: 3) {
                world.schedule(client: client, online: false, atSeconds: 600)
                world.schedule(client: client, online: true, atSeconds: 3_600)
                world.schedule(client: client + 1, online: false, atSeconds: 600)
                world.schedule(client: client + 1, online: true, atSeconds: 1_500)
            }
            return world.run()
        }
        let result = run(maxOffline: 1_800)
        #expect(result.passed, "\(result.failures)")
        let index222 = ResetCause.resetCauses.firstIndex(of: .clientFileExpired)!
        for client in 0..<21 {
            let counters = result.clients[client]
            let expected: UInt64 = client % 3 == 0 ? 1 : 0
            #expect(counters.resets == expected, "client \(client): \(counters.resets) resets")
            #expect(counters.resetsByCause[index222] == expected, "client \(client)")
        }
        #expect(result.counters.clientFilesExpired == 7)
        #expect(result.counters.historyEntriesTrimmed > 0)
        #expect(result.serverHistoryEntries < result.serverVersions)

        let off = run(maxOffline: 0)
        #expect(off.passed, "\(off.failures)")
        #expect(off.counters.resets == 0)
        #expect(off.counters.clientFilesExpired == 0)
        #expect(off.counters.historyEntriesTrimmed == 0)
        #expect(off.serverHistoryEntries == off.serverVersions)
        // The peak leaves healing out; trimming lowered it.
        #expect(off.serverHistoryEntriesPeak > 0)
        #expect(off.serverHistoryEntriesPeak <= off.serverHistoryEntries)
        #expect(result.serverHistoryEntriesPeak < off.serverHistoryEntriesPeak)
    }

    @Test func restoreWithoutAnyBackupIsSkippedAndCounted() {
        var scenario = smallScenario(durationSeconds: 1_800)
        scenario.server.backupIntervalSeconds = 0
        scenario.faults = [FaultSpec(kind: .restoreFromBackup, atSeconds: 900)]
        let result = World(scenario: scenario, seed: 1).run()
        #expect(result.counters.restores == 0)
        #expect(result.counters.restoresSkippedNoBackup == 1)
        #expect(result.counters.resets == 0)
        #expect(result.passed, "\(result.failures)")
    }
}

@Suite struct LimitsTests {
    @Test func limitsAreConsistent() {
        #expect(Limits.eventQueueMax <= Limits.messagesInFlightMax * 4)
        #expect(Limits.healingSecondsMax < Limits.durationSecondsMax)
        // Each client has at most a few timers and a few messages in flight at once.
        #expect(UInt64(Limits.clientsMax) * 8 < UInt64(Limits.eventQueueMax))
        #expect(Limits.faultsMax > 0)
    }
}
