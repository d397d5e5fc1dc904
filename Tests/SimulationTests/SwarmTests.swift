import Randomness
import Testing

@testable import Simulation

/// Fault schedules drawn from the seed (`swarm`).
@Suite struct SwarmTests {
    func draw(_ spec: SwarmSpec, seed: UInt64, duration: UInt64 = 86_400) -> [FaultSpec] {
        spec.draw(
            durationSeconds: duration, scheduled: [],
            stream: RandomStream(seed: seed, id: StreamID(domain: 6)))
    }

    @Test func aSwarmDrawsItsOwnScheduleForEachSeed() {
        var spec = SwarmSpec()
        spec.faultsPerDay = 40
        let first = draw(spec, seed: 1)
        #expect(first == draw(spec, seed: 1))
        #expect(first != draw(spec, seed: 2))
        let primary = first.filter { !$0.kind.endsAnotherFault }
        // About 40 faults a day (Poisson: within 5 standard deviations).
        #expect(primary.count > 8 && primary.count < 72)
        #expect(first.allSatisfy { $0.atSeconds < 86_400 })
        #expect(primary.allSatisfy { SwarmSpec.drawableKinds.contains($0.kind) })
        // Drawn in time order, each undo right after the fault it ends, and later than it.
        #expect(zip(primary, primary.dropFirst()).allSatisfy { $0.atSeconds <= $1.atSeconds })
        for (index, fault) in first.enumerated() where fault.kind.endsAnotherFault {
            let ended = first[index - 1]
            #expect(
                ended.kind
                    == (fault.kind == .restoreAccess ? .revokeAccess : .disableClientRecovery))
            #expect(ended.atSeconds <= fault.atSeconds)
        }
        #expect(first.filter { $0.kind == .breakingSchemaChange }.count <= 1)
        #expect(
            first.filter { $0.kind == .revokeAccess || $0.kind == .appCrash }.allSatisfy {
                (1...100).contains(
                    $0.kind == .revokeAccess ? $0.partitionsPercent : $0.clientsPercent)
            })
    }

    /// `revokeWriteAccess` came after the swarms of record: drawn only when listed, then with
    /// 1–100 % of the partitions and ended by a `restoreAccess`, as `revokeAccess` is.
    @Test func revokedWriteAccessIsDrawnOnlyWhenListed() {
        #expect(!SwarmSpec.drawableKinds.contains(.revokeWriteAccess))
        #expect(!SwarmSpec.drawableKinds.contains(.networkOutage))
        var spec = SwarmSpec()
        spec.faultsPerDay = 100
        spec.undoSecondsMean = 600
        spec.kinds = [.revokeWriteAccess]
        let drawn = draw(spec, seed: 3)
        let revokes = drawn.filter { $0.kind == .revokeWriteAccess }
        #expect(revokes.count > 50)
        #expect(revokes.allSatisfy { (1...100).contains($0.partitionsPercent) })
        for (index, fault) in drawn.enumerated() where fault.kind == .restoreAccess {
            #expect(drawn[index - 1].kind == .revokeWriteAccess)
        }
        #expect(drawn.filter { $0.kind == .restoreAccess }.count > 40)
    }

    @Test func onlyTheListedKindsAreDrawnAndOneSchemaChangeAtMost() {
        var spec = SwarmSpec()
        spec.faultsPerDay = 200
        spec.kinds = [.breakingSchemaChange, .serverCrash]
        let drawn = draw(spec, seed: 9)
        #expect(drawn.filter { $0.kind == .breakingSchemaChange }.count == 1)
        // About 100 of them (a standard deviation of about 10).
        #expect(drawn.filter { $0.kind == .serverCrash }.count > 60)
        #expect(drawn.allSatisfy { spec.kinds.contains($0.kind) })
        // A scheduled schema change leaves none to draw.
        let after = spec.draw(
            durationSeconds: 86_400,
            scheduled: [FaultSpec(kind: .breakingSchemaChange, atSeconds: 10)],
            stream: RandomStream(seed: 9, id: StreamID(domain: 6)))
        #expect(!after.contains { $0.kind == .breakingSchemaChange })
        #expect(draw(SwarmSpec(), seed: 9).isEmpty)
    }

    /// Drawn restores get restore points up to `restorePointSecondsMax` (never before the
    /// run's start); with 0, every drawn restore restores the latest backup.
    @Test func drawnRestoresGoBackUpToTheMaximum() throws {
        var spec = SwarmSpec()
        spec.faultsPerDay = 400
        spec.kinds = [.restoreFromBackup, .serverCrash]
        let latest = draw(spec, seed: 4)
        #expect(latest.allSatisfy { $0.restorePointSecondsAgo == 0 })
        spec.restorePointSecondsMax = 3_600
        let drawn = draw(spec, seed: 4)
        let restores = drawn.filter { $0.kind == .restoreFromBackup }
        #expect(restores.count > 100)
        #expect(restores.allSatisfy { $0.restorePointSecondsAgo <= min(3_600, $0.atSeconds) })
        #expect(
            drawn.allSatisfy { $0.kind == .restoreFromBackup || $0.restorePointSecondsAgo == 0 })
        // Spread over the range: uniform, so both halves are drawn often.
        #expect(restores.filter { $0.restorePointSecondsAgo < 1_800 }.count > 30)
        #expect(restores.filter { $0.restorePointSecondsAgo >= 1_800 }.count > 30)
        // The field decodes with its range.
        let scenario = try Scenario.decode(
            bytes: Array(#"{ "swarm": { "restorePointSecondsMax": 7200 } }"#.utf8), file: "t.json")
        #expect(scenario.swarm.restorePointSecondsMax == 7_200)
        #expect(throws: ScenarioError.self) {
            try Scenario.decode(
                bytes: Array(#"{ "swarm": { "restorePointSecondsMax": -5 } }"#.utf8),
                file: "t.json")
        }
    }

    /// Drawn restores take up to `restoreDurationSecondsMax`; with 0 they are instant and
    /// nothing is drawn (the schedule is the one drawn before the field existed).
    @Test func drawnRestoresTakeUpToTheMaximum() throws {
        var spec = SwarmSpec()
        spec.faultsPerDay = 400
        spec.kinds = [.restoreFromBackup, .serverCrash]
        let instant = draw(spec, seed: 4)
        #expect(instant.allSatisfy { $0.durationSeconds == 0 })
        spec.restoreDurationSecondsMax = 1_800
        let drawn = draw(spec, seed: 4)
        let restores = drawn.filter { $0.kind == .restoreFromBackup }
        #expect(restores.count > 100)
        #expect(restores.allSatisfy { $0.durationSeconds <= 1_800 })
        #expect(restores.filter { $0.durationSeconds < 900 }.count > 30)
        #expect(restores.filter { $0.durationSeconds >= 900 }.count > 30)
        #expect(drawn.allSatisfy { $0.kind == .restoreFromBackup || $0.durationSeconds == 0 })
        // The first fault is the same one; the draws for durations shift what follows.
        #expect(drawn.first?.atSeconds == instant.first?.atSeconds)
        let scenario = try Scenario.decode(
            bytes: Array(#"{ "swarm": { "restoreDurationSecondsMax": 600 } }"#.utf8),
            file: "t.json")
        #expect(scenario.swarm.restoreDurationSecondsMax == 600)
        // A world with drawn slow restores runs them: the server is down for their sum.
        var world = smallScenario(durationSeconds: 14_400)
        world.swarm = spec
        world.swarm.faultsPerDay = 24
        let result = World(scenario: world, seed: 3).run()
        #expect(result.passed, "\(result.failures)")
        let slow = result.swarmFaults.filter { $0.kind == .restoreFromBackup }
        #expect(slow.contains { $0.durationSeconds > 0 })
        #expect(
            result.counters.faultDowntimeNs
                == slow.reduce(0) { $0 + $1.durationSeconds } * Time.nanosecondsPerSecond)
    }

    /// With `repeatPercent` 100 every drawn restore and termination is struck again 1–10 s
    /// later (unless that is past the end); with 0 nothing is repeated and nothing more is
    /// drawn, so a swarm without the field draws what it drew before it existed.
    @Test func drawnRestoresAndTerminationsRepeat() throws {
        var spec = SwarmSpec()
        spec.faultsPerDay = 200
        spec.kinds = [.restoreFromBackup, .terminateSync, .serverCrash]
        let once = draw(spec, seed: 5)
        spec.repeatPercent = 0
        #expect(draw(spec, seed: 5) == once)
        spec.repeatPercent = 100
        let drawn = draw(spec, seed: 5)
        var index = 0
        var repeats = 0
        while index < drawn.count {
            let fault = drawn[index]
            index += 1
            guard fault.kind != .serverCrash else { continue }
            guard index < drawn.count, drawn[index].kind == fault.kind,
                drawn[index].atSeconds > fault.atSeconds
            else {
                // Only a fault within 10 s of the end may go unrepeated.
                #expect(fault.atSeconds + 10 >= 86_400, "\(fault) not repeated")
                continue
            }
            let gap = drawn[index].atSeconds - fault.atSeconds
            #expect((1...10).contains(gap))
            #expect(drawn[index].restorePointSecondsAgo == 0)
            repeats += 1
            index += 1
        }
        #expect(repeats > 100)
        #expect(drawn.filter { $0.kind == .serverCrash }.count > 50)
        // The field decodes with its range.
        let scenario = try Scenario.decode(
            bytes: Array(#"{ "swarm": { "repeatPercent": 30 } }"#.utf8), file: "t.json")
        #expect(scenario.swarm.repeatPercent == 30)
        #expect(throws: ScenarioError.self) {
            try Scenario.decode(
                bytes: Array(#"{ "swarm": { "repeatPercent": 101 } }"#.utf8), file: "t.json")
        }
    }

    /// Runs with swarms of every kind keep every check, are reproducible from the seed alone,
    /// and leave a scenario without a swarm as it was.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func swarmRunsKeepEveryCheck(seed: UInt64) {
        var scenario = smallScenario()
        scenario.network.lossPerMillion = 1_000
        scenario.clientReset.mode = .recoverOrDiscardUnsyncedChanges
        scenario.swarm.faultsPerDay = 96
        scenario.swarm.undoSecondsMean = 900
        scenario.swarm.restorePointSecondsMax = 2_700
        let world = World(scenario: scenario, seed: seed)
        let result = world.run()
        #expect(result.passed, "seed \(seed): \(result.failures); faults \(result.swarmFaults)")
        #expect(!result.swarmFaults.isEmpty)
        #expect(world.faults.count == result.swarmFaults.count)
        guard seed == 1 else { return }
        let again = World(scenario: scenario, seed: seed).run()
        #expect(again.traceDigest == result.traceDigest)
        #expect(again.swarmFaults == result.swarmFaults)
    }

    @Test func noSwarmDrawsNothing() {
        var scenario = smallScenario(durationSeconds: 2_000)
        let plain = World(scenario: scenario, seed: 2).run()
        scenario.swarm.kinds = [.serverCrash]
        scenario.swarm.undoSecondsMean = 60
        let idle = World(scenario: scenario, seed: 2).run()
        #expect(idle.swarmFaults.isEmpty)
        #expect(idle.traceDigest == plain.traceDigest)
    }
}
