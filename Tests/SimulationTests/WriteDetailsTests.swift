import SyncEngine
import Testing

@testable import Simulation

/// `World.writeDetails` (`run --writes`): what happened to each write, and why.
@Suite struct WriteDetailsTests {
    @Test func everyLostWriteNamesWhatCostIt() throws {
        var scenario = smallScenario()
        scenario.clientReset.mode = .discardUnsyncedChanges
        scenario.connectivity.offlineSecondsMean = 2_400
        scenario.server.backupIntervalSeconds = 3_000
        scenario.faults = [
            FaultSpec(kind: .restoreFromBackup, atSeconds: 4_000),
            FaultSpec(kind: .revokeAccess, atSeconds: 5_000, partitionsPercent: 50),
            FaultSpec(kind: .restoreAccess, atSeconds: 5_500),
            FaultSpec(kind: .terminateSync, atSeconds: 6_000),
        ]
        let plain = World(scenario: scenario, seed: 12).run()
        let world = World(scenario: scenario, seed: 12)
        world.writeDetails = WriteDetails()
        let result = world.run()
        // Keeping the details changes nothing.
        #expect(result.traceDigest == plain.traceDigest)
        #expect(result.passed, "\(result.failures)")
        let details = try #require(world.writeDetails)
        let states = world.ledger.states
        #expect(details.madeNs.count == states.count)
        #expect(UInt64(states.count) == result.writesMade)
        var seen = Set<String>()
        for index in states.indices {
            let (state, cause) = (states[index], details.causes[index])
            #expect(details.settledNs[index] >= details.madeNs[index])
            switch state {
            case .pending, .synced:
                #expect(cause == WriteDetails.Cause.none)
            case .lostToRestore:
                #expect(cause == WriteDetails.Cause.restore)
            case .discardedByReset, .droppedByRecovery, .keptInBackup:
                #expect(
                    ProtocolErrorCode(rawValue: cause)?.requiresClientReset == true,
                    "write \(index) \(state.name): cause \(cause)")
            case .deletedAfterPermissionDenied:
                #expect(cause == ProtocolErrorCode.permissionDenied.rawValue)
            }
            seen.insert(state.name)
        }
        // The faults lost writes each way they can in this mode.
        #expect(result.writesLostToRestore > 0)
        #expect(result.writesDiscardedByReset > 0)
        #expect(result.writesDeletedAfterPermissionDenied > 0)
        #expect(seen.isSuperset(of: ["synced", "lost_to_restore", "discarded_by_reset"]))
        // A discarded write was discarded when its reset completed, after the fault.
        let discarded = states.indices.filter { states[$0] == .discardedByReset }
        #expect(discarded.allSatisfy { details.settledNs[$0] >= 4_000 * Time.nanosecondsPerSecond })
    }
}
