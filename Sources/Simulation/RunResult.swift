//! The deterministic outcome of one run. Everything here is a function of the seed and the
//! scenario alone; wall-clock figures are measured by the caller and kept apart.

import SyncEngine

public struct RunResult: Sendable, Equatable, Codable {
    public var seed: UInt64
    public var scenarioName: String
    public var traceDigest: TraceDigest
    public var eventsProcessed: UInt64
    /// Simulated time of the run proper (without healing).
    public var simulatedDurationNs: UInt64
    /// Simulated time healing took until the world was quiet.
    public var healingDurationNs: UInt64
    public var clientsCount: UInt32
    public var counters: WorldCounters
    public var clients: [ClientCounters]
    /// The cohorts, then the rest (`Scenario.clientGroups`), and each client's index in them.
    public var groups: [CohortSpec]
    public var clientGroup: [UInt32]
    /// Per client, its writes in each ledger state at the end (`Ledger.totalsByOwner`): read
    /// them with `writes(ofClient:)`.
    public var clientWrites: [UInt64]
    /// Ledger totals indexed by `WriteState.rawValue`.
    public var ledgerTotals: [UInt64]
    /// Writes a recovery replayed (whatever their final state), those of them that lost
    /// instructions to the recovery rules, and writes the server history held twice.
    public var writesRecovered: UInt64
    public var writesPartiallyRecovered: UInt64
    public var writesIntegratedTwice: UInt64
    /// The scenario's client reset mode.
    public var resetMode: ClientResetMode
    public var divergentClients: [UInt32]
    /// Every check that failed, in the order found. Empty means the run passed.
    public var failures: [String]
    /// Objects in all server files at the end.
    public var serverObjects: UInt64
    /// Sum over server files of the final server version.
    public var serverVersions: UInt64
    /// Every client reset's duration (`World.resetDurationsNs`), in the order they ended.
    public var resetDurationsNs: [UInt64]
    /// History entries all server files held at the end (after healing), and the most they
    /// held at once during the run proper.
    public var serverHistoryEntries: UInt64
    public var serverHistoryEntriesPeak: UInt64
    /// The faults the scenario's swarm drew from the seed, in the order drawn.
    public var swarmFaults: [FaultSpec]

    init(world: World, healingStartedAt: UInt64, divergentClients: [UInt32], ledgerTotals: [UInt64])
    {
        seed = world.seed
        scenarioName = world.scenario.name
        traceDigest = world.digest
        eventsProcessed = world.eventsProcessed
        simulatedDurationNs = healingStartedAt
        healingDurationNs = world.now > healingStartedAt ? world.now - healingStartedAt : 0
        clientsCount = world.scenario.clientsCount
        counters = world.counters
        clients = world.clients.map(\.counters)
        groups = world.groups
        clientGroup = world.clients.map(\.group)
        clientWrites = world.ledger.totalsByOwner(owners: world.clients.count)
        self.ledgerTotals = ledgerTotals
        (writesRecovered, writesPartiallyRecovered, writesIntegratedTwice) =
            world.ledger.recoveryTotals()
        resetMode = world.scenario.clientReset.mode
        self.divergentClients = divergentClients
        failures = world.failures
        serverObjects = world.servers.reduce(0) { $0 + UInt64($1.state.objectCount) }
        serverVersions = world.servers.reduce(0) { $0 + $1.currentVersion }
        serverHistoryEntries = world.servers.reduce(0) { $0 + UInt64($1.history.count) }
        serverHistoryEntriesPeak = UInt64(world.historyEntriesPeak)
        resetDurationsNs = world.resetDurationsNs
        swarmFaults = world.swarmFaults
    }

    public var passed: Bool { failures.isEmpty }
    public var converged: Bool { divergentClients.isEmpty }

    public var writesMade: UInt64 { ledgerTotals.reduce(0, +) }
    public var writesSynced: UInt64 { ledgerTotals[Int(WriteState.synced.rawValue)] }
    public var writesDiscardedByReset: UInt64 {
        ledgerTotals[Int(WriteState.discardedByReset.rawValue)]
    }
    public var writesLostToRestore: UInt64 { ledgerTotals[Int(WriteState.lostToRestore.rawValue)] }
    public var writesPending: UInt64 { ledgerTotals[Int(WriteState.pending.rawValue)] }
    public var writesDroppedByRecovery: UInt64 {
        ledgerTotals[Int(WriteState.droppedByRecovery.rawValue)]
    }
    public var writesKeptInBackup: UInt64 { ledgerTotals[Int(WriteState.keptInBackup.rawValue)] }
    public var writesDeletedAfterPermissionDenied: UInt64 {
        ledgerTotals[Int(WriteState.deletedAfterPermissionDenied.rawValue)]
    }

    /// Completed resets per cause, in `ProtocolErrorCode.resetCauses` order.
    public var resetsByCause: [(cause: ResetCause, count: UInt64)] {
        ProtocolErrorCode.resetCauses.enumerated().map { index, cause in
            (cause, clients.reduce(0) { $0 + $1.resetsByCause[index] })
        }
    }

    /// Completed resets by how they ended, summed over the clients.
    public var resetsRecovered: UInt64 { clients.reduce(0) { $0 + $1.resetsRecovered } }
    public var resetsDiscarded: UInt64 { clients.reduce(0) { $0 + $1.resetsDiscarded } }
    public var resetsManual: UInt64 { clients.reduce(0) { $0 + $1.resetsManual } }

    public var clientsThatReset: UInt64 { UInt64(clients.filter { $0.resets > 0 }.count) }
    /// Clients network outages cut off, each once per outage that drew it (also when another
    /// outage held it already).
    public var clientsCutOff: UInt64 { clients.reduce(0) { $0 + $1.outagesCutOff } }

    /// Resets per client per simulated day (of the run proper).
    public var resetsPerClientPerDay: Double {
        perClientPerDay(counters.resets, clients: UInt64(clientsCount))
    }

    /// `count` events per client of `clients` per simulated day of the run proper.
    func perClientPerDay(_ count: UInt64, clients: UInt64) -> Double {
        let days = Double(simulatedDurationNs) / Double(Time.nanosecondsPerDay)
        return days > 0 && clients > 0 ? Double(count) / Double(clients) / days : 0
    }

    /// Whether the scenario has cohorts (otherwise every client is in the rest).
    public var hasCohorts: Bool { CohortSpec.areCohorts(groups) }

    /// Client `index`'s writes in each ledger state, in `WriteState` order.
    public func writes(ofClient index: Int) -> [UInt64] {
        let width = WriteState.allCases.count
        return Array(clientWrites[(index * width)..<((index + 1) * width)])
    }

    /// What each cohort (`groups`, in order) made of the run: its clients, its writes in each
    /// ledger state, its resets and the time they kept its files from syncing.
    public var groupResults: [GroupResult] {
        var results = groups.map {
            GroupResult(name: $0.name, resetMode: $0.resetMode ?? resetMode)
        }
        let width = WriteState.allCases.count
        for (index, client) in clients.enumerated() {
            let group = Int(clientGroup[index])
            results[group].clients += 1
            for state in 0..<width {
                results[group].writes[state] += clientWrites[index * width + state]
            }
            results[group].resets += client.resets
            results[group].resetDowntimeNs += client.resetDowntimeNs
            results[group].appCrashes += client.appCrashes
        }
        for index in results.indices {
            results[index].resetsPerClientPerDay = perClientPerDay(
                results[index].resets, clients: results[index].clients)
        }
        return results
    }
}

/// One cohort's share of a run (`RunResult.groupResults`).
public struct GroupResult: Sendable, Equatable {
    public var name: String
    /// Its clients' reset mode: the cohort's own, or the run's.
    public var resetMode: ClientResetMode
    public var clients: UInt64 = 0
    /// Its clients' writes in each ledger state, in `WriteState` order.
    public var writes = [UInt64](repeating: 0, count: WriteState.allCases.count)
    public var resets: UInt64 = 0
    public var resetsPerClientPerDay = 0.0
    public var resetDowntimeNs: UInt64 = 0
    /// Its apps' crashes (random ones and `appCrash` faults).
    public var appCrashes: UInt64 = 0

    public var writesMade: UInt64 { writes.reduce(0, +) }
    public func writes(_ state: WriteState) -> UInt64 { writes[Int(state.rawValue)] }
}
