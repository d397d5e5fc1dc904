//! The deterministic outcome of one run. Everything here is a function of the seed and the
//! scenario alone; wall-clock figures are measured by the caller and kept apart.

import SyncEngine

public struct RunResult: Sendable {
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
        let days = Double(simulatedDurationNs) / Double(Time.nanosecondsPerDay)
        return days > 0 ? Double(counters.resets) / Double(clientsCount) / days : 0
    }
}
