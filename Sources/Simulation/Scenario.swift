//! A scenario: everything a run needs besides its seed. Decoded from JSON (see
//! `Scenario+Decoding.swift`); every field has a unit in its name and a documented default.

import SyncEngine

public enum KeyDistribution: String, Sendable, CaseIterable {
    case uniform
    case zipf
}

public enum FaultKind: String, Sendable, CaseIterable, Codable {
    /// The server is rolled back to a backup: the latest one, or with `restorePointSecondsAgo`
    /// the latest one taken at or before that many seconds before the fault (a point-in-time
    /// restore to before an incident that was found late). With `durationSeconds` the restore
    /// takes that long: the server is down from the fault on (every session ends, connection
    /// attempts fail, as during a crash) and serves the restored state when it is back; the
    /// apps write on meanwhile. Without it the restore is instant.
    case restoreFromBackup
    /// Sync is terminated and re-enabled: history and client files are wiped, data stays.
    /// With `durationSeconds`, sync is re-enabled that long after (the server down meanwhile,
    /// as during a restore that takes its time); without it, at once.
    case terminateSync
    /// A breaking schema change (Atlas requires terminating and re-enabling sync for one): the
    /// server removes the property `Item.rank` from every file, then terminates and re-enables
    /// sync. Every client that synced before must reset, and every automatic reset fails the
    /// schema check and falls back to the manual error handler. At most once per scenario.
    case breakingSchemaChange
    /// The server's Client Recovery setting is switched off: reset errors carry the action
    /// `ClientResetNoRecovery` until it is switched on again.
    case disableClientRecovery
    case enableClientRecovery
    /// Users lose access to some partitions (`partitionsPercent` of them, drawn from the
    /// server's stream): the server ends their sessions with 206 permission_denied and refuses
    /// them until `restoreAccess`. The SDK reports `permissionDeniedError`, and the app deletes
    /// the file (no backup) at once or at its next launch, then retries opening it.
    case revokeAccess
    /// Every partition is accessible again.
    case restoreAccess
    /// Apps crash (`clientsPercent` of the clients, drawn from the server's stream): each
    /// process dies at once and relaunches after `crashes.appRelaunchSecondsMean` on average.
    /// The file survives (every commit is durable); the session, and a client reset under way,
    /// do not.
    case appCrash
    /// The sync server's process crashes and restarts `crashes.serverRestartSeconds` later.
    /// Its state is durable (history, client files, backups survive): every session ends, and
    /// connection attempts fail until the restart, with the clients' reconnect back-off.
    case serverCrash
    /// A network outage (a region, a carrier, an office network): `clientsPercent` of the
    /// clients (drawn from the server's stream) lose the network for `durationSeconds`. Each
    /// one's connection breaks at once and it cannot connect until the outage ends, whatever
    /// its own online and offline periods say; its app keeps writing at the offline rate.
    /// When it ends, a client whose own connectivity is online reconnects. A client already
    /// cut off stays so until the later end.
    case networkOutage
    /// Users lose write access to some partitions (`partitionsPercent` of them, drawn from the
    /// server's stream) and keep read access, until `restoreAccess`: a read-only user. They
    /// still open, download and sync reads; the server refuses an upload of theirs with 206
    /// permission_denied (a write to a Realm the user may only read, as the legacy error
    /// docs describe it), and the app deletes the file (no backup: its unsynced writes are
    /// lost) and opens it again (asyncOpen), as for `revokeAccess`. Its apps do not know and
    /// write on, so every write such a user makes is lost.
    case revokeWriteAccess
}

extension FaultKind {
    /// `revokeAccess` and `revokeWriteAccess`: the faults that take `partitionsPercent`.
    public var takesPartitionsPercent: Bool { self == .revokeAccess || self == .revokeWriteAccess }
}

public struct FaultSpec: Sendable, Equatable, Codable {
    public var kind: FaultKind
    public var atSeconds: UInt64
    /// `revokeAccess` and `revokeWriteAccess` only: the chance, in percent, that each
    /// partition loses access (write access).
    public var partitionsPercent: UInt32
    /// `appCrash` and `networkOutage` only: the chance, in percent, that each client's app
    /// crashes, or that it loses the network.
    public var clientsPercent: UInt32
    /// `restoreFromBackup` only: the restore point, in seconds before the fault. The server
    /// goes back to the latest backup taken at or before it (0: the latest backup). At most
    /// `atSeconds`.
    public var restorePointSecondsAgo: UInt64
    /// `networkOutage`: how long the clients it cuts off stay without the network (an hour
    /// when not given). `restoreFromBackup`: how long the restore keeps the server down (0, an
    /// instant restore, when not given); `terminateSync` and `breakingSchemaChange`: how long
    /// until sync is re-enabled (0, at once, when not given).
    public var durationSeconds: UInt64
    public init(
        kind: FaultKind, atSeconds: UInt64, partitionsPercent: UInt32 = 100,
        clientsPercent: UInt32 = 100, restorePointSecondsAgo: UInt64 = 0,
        durationSeconds: UInt64? = nil
    ) {
        self.kind = kind
        self.atSeconds = atSeconds
        self.partitionsPercent = partitionsPercent
        self.clientsPercent = clientsPercent
        self.restorePointSecondsAgo = restorePointSecondsAgo
        self.durationSeconds = durationSeconds ?? Self.defaultDurationSeconds(kind)
    }

    /// A `networkOutage`'s length when the scenario gives none: an hour.
    public static let outageSecondsDefault: UInt64 = 3_600

    /// `durationSeconds` when the scenario gives none: an hour for a `networkOutage`, 0 (an
    /// instant restore or re-enable; unused by the other kinds) otherwise.
    public static func defaultDurationSeconds(_ kind: FaultKind) -> UInt64 {
        kind == .networkOutage ? outageSecondsDefault : 0
    }
}

public struct WorkloadSpec: Sendable, Equatable {
    /// Poisson write arrivals per simulated minute while the client is online.
    public var writesPerMinuteOnline = 1.0
    /// Poisson write arrivals per simulated minute while offline (offline-first apps write).
    public var writesPerMinuteOffline = 0.2
    /// Objects per partition: the key space writes choose from.
    public var objectsPerPartition: UInt32 = 1_000
    public var keyDistribution = KeyDistribution.uniform
    /// Zipf exponent s (P(k) ∝ 1/k^s) when `keyDistribution` is zipf.
    public var zipfExponent = 0.99
    /// Of writes to an existing object: percent that erase it.
    public var erasePercent: UInt32 = 10
    /// Of writes to an existing object: percent that add to its counter (AddInteger).
    public var addIntegerPercent: UInt32 = 10
    /// Of writes to an existing object: percent that edit its `tags` list (insert, move, set or
    /// erase an element).
    public var listPercent: UInt32 = 0
    public init() {}
}

/// A cohort: a share of the clients with their own online and offline periods, write rates,
/// reset mode and handling, and crash rate (field workers offline for hours, office users
/// always online, an app version still on `manual` that crashes more), so that results can say
/// for whom resets come and data is lost. Fields a cohort leaves out take the scenario's.
/// Cohorts take consecutive client indices, in the order listed (client i syncs partition
/// i mod `partitionsCount`, so a cohort spreads over the partitions); no draw decides them.
public struct CohortSpec: Sendable, Equatable, Codable {
    public var name: String
    /// The share of the clients, in percent: clients ⌊N·(before)/100⌋ ..< ⌊N·(before + this)/100⌋,
    /// where `before` sums the shares of the cohorts listed before it.
    public var clientsPercent: UInt32
    public var connectivity: ConnectivitySpec
    public var writesPerMinuteOnline: Double
    public var writesPerMinuteOffline: Double
    /// Its apps' `clientResetMode` (an app version of its own); nil: the scenario's
    /// `clientReset.mode`, whatever a sweep's `--reset-modes` makes it.
    public var resetMode: ClientResetMode?
    /// When its apps' error handler backs up and deletes a file (`clientReset.manualHandling`);
    /// nil: the scenario's.
    public var manualHandling: ManualHandling?
    /// Its apps' random crashes per day (`crashes.appCrashesPerDay`).
    public var appCrashesPerDay: Double
    public init(
        name: String, clientsPercent: UInt32, connectivity: ConnectivitySpec = ConnectivitySpec(),
        writesPerMinuteOnline: Double = WorkloadSpec().writesPerMinuteOnline,
        writesPerMinuteOffline: Double = WorkloadSpec().writesPerMinuteOffline,
        resetMode: ClientResetMode? = nil, manualHandling: ManualHandling? = nil,
        appCrashesPerDay: Double = CrashSpec().appCrashesPerDay
    ) {
        self.name = name
        self.clientsPercent = clientsPercent
        self.connectivity = connectivity
        self.writesPerMinuteOnline = writesPerMinuteOnline
        self.writesPerMinuteOffline = writesPerMinuteOffline
        self.resetMode = resetMode
        self.manualHandling = manualHandling
        self.appCrashesPerDay = appCrashesPerDay
    }

    /// The name results give the clients no cohort takes.
    public static let restName = "rest"

    /// Whether `groups` (`Scenario.clientGroups`) are cohorts, and not only the rest.
    public static func areCohorts(_ groups: [CohortSpec]) -> Bool {
        groups.count > 1 || groups.first?.name != restName
    }
}

extension Scenario {
    /// The cohorts clients belong to, in order: the listed ones, then the rest (with the
    /// scenario's connectivity and write rates) when the shares leave clients over.
    public var clientGroups: [CohortSpec] {
        var groups = cohorts
        if cohorts.isEmpty || cohorts.reduce(0, { $0 + $1.clientsPercent }) < 100 {
            groups.append(
                CohortSpec(
                    name: CohortSpec.restName,
                    clientsPercent: 100 - cohorts.reduce(0) { $0 + $1.clientsPercent },
                    connectivity: connectivity,
                    writesPerMinuteOnline: workload.writesPerMinuteOnline,
                    writesPerMinuteOffline: workload.writesPerMinuteOffline,
                    appCrashesPerDay: crashes.appCrashesPerDay))
        }
        return groups
    }

    /// Each client's index in `clientGroups`, by consecutive shares (see `CohortSpec`).
    public var clientGroupOfClient: [UInt32] {
        var group: [UInt32] = []
        group.reserveCapacity(Int(clientsCount))
        var before: UInt64 = 0
        for (index, cohort) in clientGroups.enumerated() {
            before += UInt64(cohort.clientsPercent)
            let end = UInt64(clientsCount) * before / 100
            while UInt64(group.count) < end { group.append(UInt32(index)) }
        }
        return group
    }
}

public struct ConnectivitySpec: Sendable, Equatable, Codable {
    /// Mean of the exponential online periods, seconds.
    public var onlineSecondsMean = 1_800.0
    /// Mean of the exponential offline periods, seconds.
    public var offlineSecondsMean = 1_800.0
    public init() {}
}

public struct NetworkSpec: Sendable, Equatable {
    /// Median one-way latency, milliseconds (lognormal: zeta = ln(median)).
    public var latencyMillisecondsMedian = 50.0
    /// Lognormal sigma of the latency.
    public var latencySigma = 0.5
    /// Messages lost per million; a lost message breaks the connection.
    public var lossPerMillion: UInt32 = 100
    /// Reconnect back-off after a broken connection or a server restart: first delay, seconds
    /// (doubling per consecutive failure up to `reconnectSecondsMax`, minus up to 25 % jitter).
    public var reconnectSecondsMin = 1.0
    public var reconnectSecondsMax = 300.0
    /// Each client connection's bandwidth, bytes per second in each direction; 0 = unlimited.
    /// A message takes its size over this to put on the link, after the link's earlier
    /// messages (`WireSize` gives the sizes).
    public var bandwidthBytesPerSecond: UInt64 = 0
    public init() {}
}

public struct ClockSpec: Sendable, Equatable {
    /// Each client's clock is offset by a fixed skew drawn uniformly in ±this, milliseconds.
    public var skewMillisecondsMax: UInt64 = 0
    public init() {}
}

public struct ServerSpec: Sendable, Equatable {
    /// A backup (snapshot of state, history and client files) every this many seconds; 0 = none.
    public var backupIntervalSeconds: UInt64 = 21_600
    /// How long a backup is kept after it was taken, seconds; 0 = for ever. The latest backup
    /// is always kept. A restore whose restore point is older than every backup kept restores
    /// the oldest one kept, short of its point.
    public var backupRetentionSeconds: UInt64 = 0
    /// The App Services "Client Recovery" setting at the start (faults can switch it).
    public var clientRecoveryEnabled = true
    /// Atlas's "Client Max Offline Time": a client file the server has not heard from for
    /// longer than this expires (its next IDENT gets 222 client_file_expired, a client reset),
    /// and the history every remaining client has integrated is trimmed. 0 = off (the server
    /// keeps every client file and its whole history).
    public var clientMaxOfflineSeconds: UInt64 = 0
    /// How often the server runs that compaction (expiry and trimming), with
    /// `clientMaxOfflineSeconds` set.
    public var historyCompactionIntervalSeconds: UInt64 = 3_600
    /// The server's outgoing bandwidth, bytes per second, shared by every session of every
    /// partition in the order the server sends; 0 = unlimited. A fleet's fresh copies after a
    /// restore queue here.
    public var egressBytesPerSecond: UInt64 = 0
    public init() {}
}

/// When the app runs the file action of a client reset error that reached its error handler
/// (manual mode, or the manual fallback of an automatic mode).
public enum ManualHandling: String, Sendable, CaseIterable, Codable {
    /// The handler calls `SyncSession.immediatelyHandleError(token)`: the file is backed up and
    /// deleted at once, and the next open downloads a fresh copy.
    case immediately
    /// The handler only notes the error: the action runs at the app's next launch, after an
    /// exponential delay (`relaunchSecondsMean`). Until then the file does not sync, and the
    /// app's writes go to it (and so to the backup).
    case nextLaunch
}

public struct ClientResetSpec: Sendable, Equatable {
    /// The `clientResetMode` of every client's SyncConfiguration.
    public var mode = ClientResetMode.recoverUnsyncedChanges
    public var manualHandling = ManualHandling.immediately
    /// Mean of the exponential delay to the app's next launch, seconds (with `nextLaunch`).
    public var relaunchSecondsMean = 3_600.0
    public init() {}
}

/// Crashes of the apps and of the sync server (besides the scheduled `appCrash` and
/// `serverCrash` faults).
public struct CrashSpec: Sendable, Equatable {
    /// Each running app crashes as a Poisson process at this rate (per simulated day); 0 = only
    /// the scheduled `appCrash` faults.
    public var appCrashesPerDay = 0.0
    /// Mean of the exponential delay from an app's crash to its relaunch, seconds. The relaunch
    /// is a launch: it runs a file action the app's error handler left for the next launch.
    public var appRelaunchSecondsMean = 60.0
    /// How long the sync server is down after a `serverCrash` fault, seconds.
    public var serverRestartSeconds: UInt64 = 30
    public init() {}
}

/// Faults drawn from the seed (see `Swarm.swift`), besides the scheduled `faults`.
public struct SwarmSpec: Sendable, Equatable {
    /// Faults per simulated day, a Poisson process over the run; 0 = off.
    public var faultsPerDay = 0.0
    /// The kinds drawn, uniformly (a kind listed twice is drawn twice as often).
    public var kinds = SwarmSpec.drawableKinds
    /// Mean of the exponential time until a drawn `revokeAccess` or `disableClientRecovery`
    /// is undone, seconds.
    public var undoSecondsMean = 3_600.0
    /// A drawn `restoreFromBackup` goes back to a restore point drawn uniformly from 0 to
    /// this many seconds before it (at most to the run's start); 0 = the latest backup, with
    /// no draw.
    public var restorePointSecondsMax: UInt64 = 0
    /// A drawn `restoreFromBackup` takes a time drawn uniformly from 0 to this many seconds
    /// (`faults[].durationSeconds`: the server is down meanwhile); 0 = every drawn restore is
    /// instant, with no draw.
    public var restoreDurationSecondsMax: UInt64 = 0
    /// Each drawn `restoreFromBackup` or `terminateSync` is struck again, of the latest
    /// backup or sync state, 1–10 s later with this probability, percent: a second incident
    /// while the clients of the first are still resetting, the case cycle detection (§4.5) is
    /// for. 0 = never, with no draw.
    public var repeatPercent: UInt32 = 0
    public init() {}
}

/// A bug planted on purpose ("mutation testing" of SyncSim's checks): a run with one must
/// fail a check, and `syncsim shrink` needs a failing run to shrink. Never part of a real
/// scenario; the run summary says so first.
public enum SabotageKind: String, Sendable, CaseIterable {
    /// The server's DOWNLOAD leaves out its first changeset (a gap in the history it sends),
    /// in every `every`-th download that carries any. The client's cursor still moves past it.
    case downloadGap
    /// Recovery replays every unsynced changeset but the last (an off-by-one), in every
    /// `every`-th recovering reset that has unsynced changesets (counted over all clients).
    case recoveryOffByOne
    /// A discarding reset keeps its upload queue: the changes it discarded are uploaded
    /// anyway, in every `every`-th discarding reset that has unsynced changesets (counted over
    /// all clients).
    case discardKeepsUnsynced
    /// The cycle check ignores the pending-reset row (REALM-SEMANTICS §4.5), in every
    /// `every`-th reset that finds one.
    case cycleCheckSkipped
    /// The pending-reset row is never cleared: every `every`-th download that would clear it
    /// leaves it.
    case resetTrackerKept
    /// A client reset error's file action deletes the file without a backup (§4.6: back up,
    /// then delete), in every `every`-th one.
    case manualDeletesWithoutBackup

    /// The client-reset sabotage of this kind, if it is one.
    public var resetSabotage: ResetSabotage? {
        switch self {
        case .downloadGap: nil
        case .recoveryOffByOne: .recoveryOffByOne
        case .discardKeepsUnsynced: .discardKeepsUnsynced
        case .cycleCheckSkipped: .cycleCheckSkipped
        case .resetTrackerKept: .resetTrackerKept
        case .manualDeletesWithoutBackup: .manualDeletesWithoutBackup
        }
    }
}

public struct SabotageSpec: Sendable, Equatable {
    /// nil: no sabotage (every real run).
    public var kind: SabotageKind?
    /// Sabotage every this many chances (1: every one).
    public var every: UInt64 = 1
    public init() {}
}

public struct HealingSpec: Sendable, Equatable {
    /// After the run: faults off, every client online, until quiet. Fails past this bound.
    public var secondsMax: UInt64 = 3_600
    public init() {}
}

public struct Scenario: Sendable, Equatable {
    public var name = "unnamed"
    /// The seed used when the command line gives none.
    public var seed: UInt64 = 1
    public var clientsCount: UInt32 = 1_000
    /// Server files; client i syncs partition i mod partitionsCount.
    public var partitionsCount: UInt32 = 100
    public var durationSeconds: UInt64 = 86_400
    public var workload = WorkloadSpec()
    public var connectivity = ConnectivitySpec()
    public var network = NetworkSpec()
    public var clock = ClockSpec()
    public var server = ServerSpec()
    public var clientReset = ClientResetSpec()
    public var crashes = CrashSpec()
    public var faults: [FaultSpec] = []
    /// Groups of clients that sync and write differently (`CohortSpec`); clients no cohort
    /// takes form the rest, with the scenario's own connectivity and write rates.
    public var cohorts: [CohortSpec] = []
    public var swarm = SwarmSpec()
    public var healing = HealingSpec()
    public var sabotage = SabotageSpec()
    public init() {}
}
