import Randomness
import Testing

@testable import Simulation

/// Network outages (`networkOutage` faults): clients cut off together, whatever their own
/// online and offline periods say.
@Suite struct NetworkOutageTests {
    /// Forty clients, scripted online, every one cut off from 1,000 s to 1,000 s + `seconds`.
    func outageWorld(seconds: UInt64, maxOffline: UInt64 = 0) -> World {
        var scenario = smallScenario(durationSeconds: 9_000)
        scenario.server.clientMaxOfflineSeconds = maxOffline
        scenario.server.historyCompactionIntervalSeconds = 60
        scenario.faults = [
            FaultSpec(kind: .networkOutage, atSeconds: 1_000, durationSeconds: seconds)
        ]
        let world = World(scenario: scenario, seed: 5)
        world.scriptedConnectivity = true
        world.timelineIntervalNs = 100 * Time.nanosecondsPerSecond
        return world
    }

    /// During the outage no client is online, nothing is integrated, and the apps keep
    /// writing; when it ends every client reconnects, and everything they wrote syncs.
    @Test func anOutageCutsClientsOffAndTheyComeBackAfter() {
        let world = outageWorld(seconds: 2_000)
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.networkOutages == 1)
        #expect(result.clientsCutOff == 40)
        #expect(result.clients.allSatisfy { $0.outagesCutOff == 1 })
        #expect(result.counters.resets == 0)
        let during = world.timeline.filter {
            $0.endNs > 1_100 * Time.nanosecondsPerSecond
                && $0.endNs <= 3_000 * Time.nanosecondsPerSecond
        }
        #expect(during.count == 19)
        #expect(
            during.allSatisfy {
                $0.clientsOnline == 0 && $0.clientsSyncing == 0 && $0.changesetsIntegrated == 0
            })
        #expect(during.reduce(0) { $0 + $1.writesMade } > 0)
        let after = world.timeline.first { $0.endNs == 3_200 * Time.nanosecondsPerSecond }
        #expect(after?.clientsOnline == 40)
        #expect((after?.changesetsIntegrated ?? 0) > 0)
        #expect(result.writesSynced == result.writesMade)
    }

    /// An outage longer than the client max offline time expires every file it cut off: each
    /// client resets with 222 client_file_expired when it comes back. A shorter one expires
    /// none.
    @Test func anOutageLongerThanTheMaxOfflineTimeExpiresTheFiles() {
        let long = outageWorld(seconds: 3_000, maxOffline: 1_800).run()
        #expect(long.passed, "\(long.failures)")
        #expect(long.counters.clientFilesExpired == 40)
        #expect(long.resetsByCause.first { $0.cause == .clientFileExpired }?.count == 40)
        #expect(long.clients.allSatisfy { $0.resets == 1 })

        let short = outageWorld(seconds: 1_200, maxOffline: 1_800).run()
        #expect(short.passed, "\(short.failures)")
        #expect(short.counters.clientFilesExpired == 0)
        #expect(short.counters.resets == 0)
    }

    /// A client's own periods go on under an outage and count once it ends: one that went
    /// offline meanwhile stays offline until it comes online again. A second outage that
    /// overlaps the first holds its clients until the later end.
    @Test func ownPeriodsAndOverlappingOutages() {
        var scenario = smallScenario(durationSeconds: 9_000)
        scenario.faults = [
            FaultSpec(kind: .networkOutage, atSeconds: 1_000, durationSeconds: 1_000),
            FaultSpec(kind: .networkOutage, atSeconds: 1_500, durationSeconds: 1_000),
        ]
        let world = World(scenario: scenario, seed: 2)
        world.scriptedConnectivity = true
        world.timelineIntervalNs = 100 * Time.nanosecondsPerSecond
        // Client 0 goes offline during the outages and comes online again after them.
        world.schedule(client: 0, online: false, atSeconds: 1_200)
        world.schedule(client: 0, online: true, atSeconds: 3_000)
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.counters.networkOutages == 2)
        #expect(result.clientsCutOff == 80)
        func online(at seconds: UInt64) -> UInt64? {
            world.timeline.first { $0.endNs == seconds * Time.nanosecondsPerSecond }?
                .clientsOnline
        }
        // The first outage's end (2,000 s) frees no one: the second holds them to 2,500 s.
        #expect(online(at: 2_100) == 0)
        #expect(online(at: 2_400) == 0)
        #expect(online(at: 2_600) == 39)
        #expect(online(at: 3_100) == 40)
        #expect(result.clients[0].connections < result.clients[1].connections + 2)
    }

    /// No outage, no change: the scenario draws what it drew before outages existed (the
    /// default scenario's digest of record is checked by the CLI tests), and a swarm draws an
    /// outage only when `swarm.kinds` lists it, cutting off 1–100 % of the clients for at
    /// least a second.
    @Test func swarmsDrawOutagesOnlyWhenListed() {
        #expect(!SwarmSpec.drawableKinds.contains(.networkOutage))
        var spec = SwarmSpec()
        spec.faultsPerDay = 200
        spec.kinds = [.networkOutage, .serverCrash]
        let drawn = spec.draw(
            durationSeconds: 86_400, scheduled: [],
            stream: RandomStream(seed: 9, id: StreamID(domain: 6)))
        let outages = drawn.filter { $0.kind == .networkOutage }
        #expect(outages.count > 50)
        #expect(outages.allSatisfy { (1...100).contains($0.clientsPercent) })
        #expect(outages.allSatisfy { $0.durationSeconds >= 1 })
        let mean = Double(outages.reduce(0) { $0 + $1.durationSeconds }) / Double(outages.count)
        #expect(mean > 2_000 && mean < 5_500)  // undoSecondsMean, 3,600 s
    }

    /// `durationSeconds` belongs to outages, is at least a second, and defaults to an hour;
    /// `clientsPercent` is an outage's field too.
    @Test func theFaultsFieldsAreChecked() throws {
        func decode(_ fault: String) throws(ScenarioError) -> Scenario {
            try Scenario.decode(
                bytes: Array(#"{ "faults": [ \#(fault) ] }"#.utf8), file: "outage.json")
        }
        let plain = try decode(#"{ "kind": "networkOutage", "atSeconds": 60 }"#)
        #expect(plain.faults[0].durationSeconds == 3_600)
        #expect(plain.faults[0].clientsPercent == 100)
        let given = try decode(
            #"{ "kind": "networkOutage", "atSeconds": 60, "durationSeconds": 90, "clientsPercent": 30 }"#
        )
        #expect(given.faults[0].durationSeconds == 90)
        #expect(given.faults[0].clientsPercent == 30)
        func failure(_ fault: String) -> ScenarioError? {
            do throws(ScenarioError) {
                _ = try decode(fault)
                return nil
            } catch { return error }
        }
        let misplaced = failure(#"{ "kind": "appCrash", "atSeconds": 60, "durationSeconds": 90 }"#)
        #expect(misplaced?.code == .inconsistent)
        #expect(misplaced?.field == "faults[0].durationSeconds")
        #expect(misplaced?.description.contains("networkOutage") == true)
        let zero = failure(#"{ "kind": "networkOutage", "atSeconds": 60, "durationSeconds": 0 }"#)
        #expect(zero?.code == .outOfRange)
        #expect(zero?.field == "faults[0].durationSeconds")
        let crashOnly = failure(
            #"{ "kind": "revokeAccess", "atSeconds": 60, "clientsPercent": 10 }"#)
        #expect(crashOnly?.description.contains("appCrash and networkOutage") == true)
    }
}
