//! Bytes on the wire (`WireSize`) and the bandwidth model: `network.bandwidthBytesPerSecond`
//! (each client connection) and `server.egressBytesPerSecond` (the server's outgoing link).

import MergeCore
import SyncEngine
import Testing

@testable import Simulation

@Suite("Traffic")
struct TrafficTests {
    /// The small world with a restore and a termination, so clients reset and fetch fresh
    /// copies in bursts.
    func burstyScenario() -> Scenario {
        var scenario = smallScenario(durationSeconds: 5_400)
        scenario.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 2_500),
            FaultSpec(kind: .terminateSync, atSeconds: 4_000),
        ]
        return scenario
    }

    @Test("bytes are counted per client and per interval, and add up to the run's totals")
    func trafficAddsUp() {
        let world = World(scenario: burstyScenario(), seed: 3)
        world.timelineIntervalNs = 600 * Time.nanosecondsPerSecond
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        let counters = result.counters
        #expect(counters.bytesUploaded == result.clients.reduce(0) { $0 + $1.bytesUploaded })
        #expect(counters.bytesDownloaded == result.clients.reduce(0) { $0 + $1.bytesDownloaded })
        #expect(counters.bytesUploaded == world.timeline.reduce(0) { $0 + $1.bytesUploaded })
        #expect(counters.bytesDownloaded == world.timeline.reduce(0) { $0 + $1.bytesDownloaded })
        #expect(counters.freshCopyBytes == world.timeline.reduce(0) { $0 + $1.freshCopyBytes })
        // Every client's first open and every automatic reset fetch a fresh copy.
        #expect(counters.freshCopies >= UInt64(result.clientsCount) + counters.resets)
        #expect(counters.freshCopyBytes >= counters.freshCopies * UInt64(WireSize.freshCopyHeader))
        #expect(counters.freshCopyBytes < counters.bytesDownloaded)
        // Every UPLOAD carries at least one changeset, and every DOWNLOAD a header.
        #expect(counters.bytesUploaded > counters.uploads * UInt64(WireSize.uploadHeader + 8))
        #expect(
            counters.bytesDownloaded
                >= counters.downloads * UInt64(WireSize.downloadHeader) + counters.freshCopyBytes)
        // Byte counts change no run: the digest is the one without any bandwidth set.
        let again = World(scenario: burstyScenario(), seed: 3).run()
        #expect(again.traceDigest == result.traceDigest)
        #expect(again.counters == result.counters)
    }

    @Test("transmission times are rounded up, in integers, without overflow")
    func transmissionTimes() {
        #expect(World.transmissionNs(1_000, 1_000) == Time.nanosecondsPerSecond)
        #expect(World.transmissionNs(1, 3) == 333_333_334)
        #expect(World.transmissionNs(0, 7) == 0)
        #expect(World.transmissionNs(3, 1_000_000_000_000) == 1)
        #expect(
            World.transmissionNs(10_000_000_000, 1) == 10_000_000_000 * Time.nanosecondsPerSecond)
    }

    @Test("a thin server egress delays the fresh copies and stretches resets, within its capacity")
    func egressQueuesFreshCopies() {
        let scenario = burstyScenario()
        let unlimitedWorld = World(scenario: scenario, seed: 3)
        unlimitedWorld.timelineIntervalNs = 10 * Time.nanosecondsPerSecond
        let unlimited = unlimitedWorld.run()
        var thin = scenario
        thin.server.egressBytesPerSecond = 2_000
        let limited = World(scenario: thin, seed: 3).run()
        #expect(limited.passed, "\(limited.failures)")
        #expect(limited.converged)
        // Every byte the server sent left through the link before the world went quiet, so no
        // more than its capacity over the whole run.
        let seconds = Double(limited.simulatedDurationNs + limited.healingDurationNs) / 1e9
        #expect(Double(limited.counters.bytesDownloaded) <= 2_000 * seconds)
        // The link was a bottleneck: the unlimited run sent more than its capacity in its
        // busiest ten seconds (the burst of fresh copies after a restore), and resets took
        // longer with the thin link.
        let durations = { (result: RunResult) in
            result.resetDurationsNs.sorted()[result.resetDurationsNs.count / 2]
        }
        #expect(unlimited.passed)
        let busiest = unlimitedWorld.timeline.map(\.bytesDownloaded).max() ?? 0
        #expect(busiest > 2_000 * 10)
        #expect(durations(limited) > 10 * durations(unlimited))
        #expect(limited.traceDigest != unlimited.traceDigest)
    }

    /// A world with a 1,000 B/s egress where the server has queued a 9 KB fresh copy for
    /// client 0 and then a short error for client 1, at time 0.
    func queuedEgress() -> (world: World, copyBytes: UInt64, errorBytes: UInt64) {
        var scenario = smallScenario()
        scenario.server.egressBytesPerSecond = 1_000
        let world = World(scenario: scenario, seed: 1)
        let copy = ServerMessage.freshCopy(
            FreshCopy(
                file: SaltedFileIdent(ident: 2, salt: 3),
                latest: SaltedVersion(version: 1, salt: 4),
                state: Replica(), payloadBytes: 9_000))
        let error = ServerMessage.error(
            ProtocolError(code: .badClientFileIdent, action: .clientReset))
        world.enqueueEgress(0, copy)
        world.enqueueEgress(1, error)
        return (world, UInt64(WireSize.of(copy)), UInt64(WireSize.of(error)))
    }

    /// The next `.egressDone` event in the world's queue (other events are dropped).
    func nextEgressDone(_ world: World) -> Event? {
        while let event = world.queue.popNext() {
            if event.kind == .egressDone { return event }
        }
        return nil
    }

    @Test("the egress carries the server's messages one after another, in the order sent")
    func egressIsAQueue() {
        let (world, copyBytes, errorBytes) = queuedEgress()
        #expect(world.egressBacklogBytes == copyBytes + errorBytes)
        #expect(world.counters.egressBacklogPeakBytes == copyBytes + errorBytes)
        // Only the first is on the wire; the second waits for it.
        let first = nextEgressDone(world)
        #expect(first?.subject == 0)
        #expect(first?.time == World.transmissionNs(copyBytes, 1_000))
        #expect(nextEgressDone(world) == nil)
        #expect(world.counters.egressMessagesDropped == 0)
    }

    @Test("a session that ends takes its messages out of the egress queue and frees the wire")
    func anEndedSessionLeavesTheEgress() {
        let (world, copyBytes, errorBytes) = queuedEgress()
        world.dropConnection(0)
        #expect(world.counters.egressMessagesDropped == 1)
        #expect(world.counters.egressBytesDropped == copyBytes)
        #expect(world.egressBacklogBytes == errorBytes)
        #expect(world.messagesInFlight == 1)
        #expect(world.clients[0].egressQueued == 0)
        // The error goes on the wire at once; the copy's transmission is cut short (its event
        // is stale).
        let next = nextEgressDone(world)
        #expect(next?.subject == 1)
        #expect(next?.time == World.transmissionNs(errorBytes, 1_000))
        #expect(next?.generation == world.egressGeneration)
        let stale = nextEgressDone(world)
        #expect(stale?.subject == 0)
        #expect(stale?.generation != world.egressGeneration)
        // A client with nothing queued leaves the queue as it is.
        world.dropConnection(2)
        #expect(world.egressBacklogBytes == errorBytes)
        #expect(world.counters.egressMessagesDropped == 1)
    }

    @Test("with a thin egress, clients that go offline drop their queued messages; figures add up")
    func egressDropsAddUp() {
        var scenario = burstyScenario()
        scenario.server.egressBytesPerSecond = 2_000
        let world = World(scenario: scenario, seed: 3)
        world.timelineIntervalNs = 60 * Time.nanosecondsPerSecond
        let result = world.run()
        #expect(result.passed, "\(result.failures)")
        #expect(result.converged)
        let counters = result.counters
        // Clients go offline every 15 minutes or so, some while their fresh copies wait.
        #expect(counters.egressMessagesDropped > 0)
        #expect(counters.egressBytesDropped > counters.egressMessagesDropped)
        #expect(
            counters.egressBytesDropped == world.timeline.reduce(0) { $0 + $1.egressBytesDropped })
        // The queue was drained when the world went quiet, and never held more than its peak.
        #expect(world.egressQueue.isEmpty && world.egressBacklogBytes == 0)
        #expect(world.timeline.last?.egressQueueBytes == 0)
        let deepest = world.timeline.map(\.egressQueueBytes).max() ?? 0
        #expect(deepest > 0 && deepest <= counters.egressBacklogPeakBytes)
        // Without an egress limit nothing queues.
        let unlimited = World(scenario: burstyScenario(), seed: 3).run()
        #expect(unlimited.counters.egressBacklogPeakBytes == 0)
        #expect(unlimited.counters.egressMessagesDropped == 0)
    }

    @Test("a client bandwidth bounds what each client sends and receives")
    func clientBandwidthBoundsEachClient() {
        var scenario = burstyScenario()
        scenario.network.bandwidthBytesPerSecond = 500
        let result = World(scenario: scenario, seed: 4).run()
        #expect(result.passed, "\(result.failures)")
        let seconds = Double(result.simulatedDurationNs + result.healingDurationNs) / 1e9
        for client in result.clients {
            #expect(Double(client.bytesUploaded) <= 500 * seconds)
            #expect(Double(client.bytesDownloaded) <= 500 * seconds)
        }
        let reference = World(scenario: burstyScenario(), seed: 4).run()
        #expect(result.traceDigest != reference.traceDigest)
    }

    @Test("the bandwidth fields decode, and out-of-range values name their field")
    func bandwidthFieldsDecode() throws {
        let scenario = try Scenario.decode(
            bytes: Array(
                #"{ "network": { "bandwidthBytesPerSecond": 125000 }, "server": { "egressBytesPerSecond": 12500000 } }"#
                    .utf8), file: "t.json")
        #expect(scenario.network.bandwidthBytesPerSecond == 125_000)
        #expect(scenario.server.egressBytesPerSecond == 12_500_000)
        #expect(Scenario().network.bandwidthBytesPerSecond == 0)
        #expect(Scenario().server.egressBytesPerSecond == 0)
        for json in [
            #"{ "network": { "bandwidthBytesPerSecond": 1000000000001 } }"#,
            #"{ "server": { "egressBytesPerSecond": -1 } }"#,
        ] {
            do {
                _ = try Scenario.decode(bytes: Array(json.utf8), file: "t.json")
                Issue.record("\(json) decoded")
            } catch {
                #expect(error.file == "t.json")
                #expect(
                    error.field == "network.bandwidthBytesPerSecond"
                        || error.field == "server.egressBytesPerSecond")
            }
        }
    }
}
