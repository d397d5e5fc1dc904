//! The world: one seed, one clock, one event queue, a restorable server of many files, and many
//! clients. It steps events in (time, sequence) order on one thread and is the only place where
//! the actions of the sans-IO server and client state machines are carried out.
//!
//! Modelling choices (see README "Architecture"):
//! - A connection is FIFO in each direction (delivery times never overtake each other).
//! - With a bandwidth set, a message first waits for its links (the server's egress, shared by
//!   every session, then the client's connection) to carry its bytes, then the latency. The
//!   egress is a queue: a session that ends takes its messages out of it, and cuts short the
//!   one on the wire, as a server closing a socket discards its send buffer.
//! - A lost message breaks the connection at once on both ends; the client reconnects after an
//!   exponential back-off with jitter, like the SDK's resumption delay.
//! - The server notices a client going offline at once (a clean TCP close).
//! - A client starts writing only after its first download (asyncOpen-style first sync).

import DequeModule
import MergeCore
import Randomness
import SyncEngine

/// A message in flight, referenced from an event by its slab slot.
enum InFlight: Sendable {
    case toServer(ClientMessage)
    case toClient(ServerMessage)
}

/// The server's view of one client's session.
struct ServerSession: Sendable {
    var active = false
    var ident: UInt64 = 0
    /// What the server has sent so far in this session.
    var cursor = DownloadCursor.zero
}

struct ClientSlot {
    var sync: SyncClient
    let partition: UInt32
    /// Its cohort: an index in `World.groups` (`Scenario.clientGroups`).
    let group: UInt32
    /// Whether the client has the network now: its own connectivity says online and no outage
    /// cuts it off.
    var online = false
    /// What its own connectivity (random periods, or the script) says, outages aside.
    var scheduledOnline = false
    /// When the network outage that cuts it off ends; 0 when none does.
    var cutOffUntil: UInt64 = 0
    /// Bumped whenever the connection breaks; messages of older connections are dropped.
    var epoch: UInt32 = 0
    var writeGeneration: UInt32 = 0
    var writing = false
    var toServerFreeAt: UInt64 = 0
    var toClientFreeAt: UInt64 = 0
    /// Its messages in the server's egress queue (`World.egressQueue`).
    var egressQueued: UInt32 = 0
    /// When the client's connection has finished carrying the bytes queued on it, per
    /// direction (with `network.bandwidthBytesPerSecond` set).
    var uplinkBusyUntil: UInt64 = 0
    var downlinkBusyUntil: UInt64 = 0
    var server = ServerSession()
    var backoffFailures: UInt32 = 0
    /// A file action event is queued for this client; its generation tells stale ones apart.
    var fileActionScheduled = false
    var fileActionGeneration: UInt32 = 0
    /// Messages left until the next lost one, counting it; 0 = not drawn yet.
    var messagesUntilLoss: UInt32 = 0
    let skewMs: Int64
    var counters = ClientCounters()
    /// When the client reset under way began (the error that started it reached the client),
    /// until the client syncs again; nil when no reset is under way.
    var resetSince: UInt64?
    /// The app has crashed and not relaunched yet: it neither writes nor connects.
    var appDown = false
    /// Bumped at every relaunch; crash and relaunch timers of an older one are stale.
    var launchGeneration: UInt32 = 0

    /// The app runs again after a crash: it writes and connects, and the timers of the crashed
    /// process are stale.
    mutating func markRelaunched() {
        appDown = false
        launchGeneration &+= 1
    }
}

/// Deterministic per-client counters.
public struct ClientCounters: Sendable, Equatable, Codable {
    public var writesMade: UInt64 = 0
    /// Completed client resets: automatic ones when the file took the fresh copy, manual ones
    /// (and fallbacks) when the app backed the file up and deleted it.
    public var resets: UInt64 = 0
    /// Indexed in `ProtocolErrorCode.resetCauses` order.
    public var resetsByCause = [UInt64](
        repeating: 0, count: ProtocolErrorCode.resetCauses.count)
    public var resetsRecovered: UInt64 = 0
    public var resetsDiscarded: UInt64 = 0
    public var resetsManual: UInt64 = 0
    /// Automatic resets that gave up and went to the manual error handler.
    public var resetFallbacks: UInt64 = 0
    public var messagesLost: UInt64 = 0
    public var connections: UInt64 = 0
    /// Bytes this client put on its connection (`WireSize`), and those the server sent it
    /// (fresh copies included).
    public var bytesUploaded: UInt64 = 0
    public var bytesDownloaded: UInt64 = 0
    /// Simulated time this client spent in client resets: from the error that started each
    /// to its next active session (see `World.resetDurationsNs`).
    public var resetDowntimeNs: UInt64 = 0
    /// Times the app crashed (random crashes and `appCrash` faults).
    public var appCrashes: UInt64 = 0
    /// Client resets that began (the first error of each) and that ended (the file synced
    /// again), as the timeline's `resets_started` and `resets_ended` count them (the run's
    /// ends are `World.resetDurationsNs`).
    public var resetsStarted: UInt64 = 0
    public var resetsEnded: UInt64 = 0
    /// Network outages that cut this client off.
    public var outagesCutOff: UInt64 = 0
    public init() {}
}

/// Why a client reset: the protocol error that started it (212 for a download that failed to
/// integrate). Counters are kept per cause, in `allCases` order.
public typealias ResetCause = ProtocolErrorCode

extension ProtocolErrorCode {
    /// The position of this cause in `resetCauses` (the order of the per-cause counters).
    var index: Int { Self.resetCauses.firstIndex(of: self)! }
}

/// A backup the server's policy keeps (`server.backupRetentionSeconds`). `files` is the copy a
/// restore rolls back to; it is let go (nil) once no restore of the run's faults can reach
/// it, while the backup still counts in what the policy stores.
struct Backup {
    var files: ContiguousArray<ServerFile>?
    var integratedLogCount: Int
    var takenAt: UInt64
    /// What it takes to store (`ServerFile.storedByteCount`, summed over the files).
    var bytes: UInt64
}

public final class World {
    public let scenario: Scenario
    public let seed: UInt64
    public private(set) var now: UInt64 = 0
    public private(set) var digest = TraceDigest()
    public private(set) var eventsProcessed: UInt64 = 0
    public private(set) var ledger = Ledger()
    public private(set) var healing = false

    var queue = EventQueue()
    var servers: ContiguousArray<ServerFile>
    /// The backups the retention policy keeps, oldest first (see `takeBackup`). Only the latest
    /// one and the older ones a restore of the run's faults may still go back to
    /// (`restorePointSecondsAgo`) hold their copy of the files.
    var backups: ContiguousArray<Backup> = []
    /// The kept backups' bytes, summed when asked (once per backup taken).
    var backupBytes: UInt64 { backups.reduce(0) { $0 + $1.bytes } }
    /// How far back (ns) a fault's restore point may reach: the largest
    /// `restorePointSecondsAgo` of the run's faults.
    let restoreLookbackNs: UInt64
    var clients: ContiguousArray<ClientSlot>
    var partitionMembers: [[UInt32]]
    /// The cohorts, then the rest (`Scenario.clientGroups`): each client's connectivity and
    /// write rates.
    let groups: [CohortSpec]
    var transformer = Transformer()
    let workload: WorkloadGenerator
    /// ln(median latency in ms): the lognormal's zeta, computed once.
    let latencyZeta: Double

    let workloadStreams: [RandomStream]
    let connectivityStreams: [RandomStream]
    let networkStreams: [RandomStream]
    /// Per client: the app's own decisions (when it relaunches after a manual reset or a
    /// crash).
    let appStreams: [RandomStream]
    /// Per client: when its app crashes (empty without random crashes, so that a scenario
    /// without them draws exactly as before).
    let crashStreams: [RandomStream]
    /// The sync server is down (crashed) until this time; 0 when it is up.
    var serverDownUntil: UInt64 = 0
    /// With `server.egressBytesPerSecond` set: the server's messages waiting for its egress
    /// link, in the order sent. The first is on the wire (the link is busy exactly while the
    /// queue is not empty), until its `.egressDone` event of generation `egressGeneration`
    /// (bumped when it is cut short).
    var egressQueue = Deque<EgressItem>()
    var egressGeneration: UInt32 = 0
    /// The bytes in `egressQueue` (the one on the wire included).
    var egressBacklogBytes: UInt64 = 0
    /// The scenario's scheduled faults, then those its swarm drew from the seed
    /// (`swarmFaults`); a `.fault` event's subject indexes this.
    let faults: [FaultSpec]
    /// The faults the swarm drew (the tail of `faults`), in the order drawn.
    public let swarmFaults: [FaultSpec]
    let serverStream: RandomStream
    /// The server's Client Recovery setting (faults switch it).
    var clientRecoveryEnabled: Bool
    /// Per partition: its users have lost access (`revokeAccess`).
    var accessDenied: [Bool]
    /// Per partition: its users have lost write access and kept read access
    /// (`revokeWriteAccess`): the server refuses their uploads.
    var writeDenied: [Bool]
    /// File actions (manual resets) scheduled and not yet run; part of quiescence in healing.
    var fileActionsPending = 0

    var messages: ContiguousArray<InFlight?> = []
    /// Messages sent and not yet delivered (or dropped on arrival).
    var messagesInFlight = 0
    /// Reconnect timers scheduled and not yet fired. With `messagesInFlight`, this defines
    /// quiescence during healing: stale timers (writes, connectivity) may still be queued.
    var reconnectsPending = 0
    var freeSlots: ContiguousArray<UInt32> = []
    /// Writes in the order the server integrated them (for rolling back to a backup).
    var integratedLog: ContiguousArray<UInt64> = []

    var counters = WorldCounters()
    var failures: [String] = []
    /// Every reset's path checked against the documented rules (`ResetAudit`).
    var resetAudit: ResetAudit
    /// Every client reset's duration, in the order they ended: from the error that started it
    /// (the first, when it restarted) to the client's next active session, the time the file
    /// could not sync. Offline periods, the app's relaunch (manual handling `nextLaunch`) and
    /// retries after a reset cycle count in it.
    var resetDurationsNs: [UInt64] = []
    /// History entries all server files hold now, and the most they held at once before
    /// healing (whose burst of uploads from every client at once is the check's, not the
    /// scenario's).
    var historyEntries = 0
    var historyEntriesPeak = 0

    /// Stream domains. Never renumber: they decide every draw.
    enum StreamDomain: UInt64 {
        case workload = 1
        case connectivity = 2
        case network = 3
        case app = 4
        case crash = 5
        case swarm = 6
        case server = 10
        case setup = 11
    }

    public init(scenario: Scenario, seed: UInt64) {
        precondition(
            scenario.clientsCount >= 1 && scenario.clientsCount <= Limits.clientsMax,
            "clientsCount outside 1...Limits.clientsMax")
        precondition(scenario.partitionsCount >= 1, "at least one partition")
        self.scenario = scenario
        self.seed = seed
        workload = WorkloadGenerator(spec: scenario.workload)
        latencyZeta = log(scenario.network.latencyMillisecondsMedian)
        let count = Int(scenario.clientsCount)
        workloadStreams = (0..<count).map {
            RandomStream(
                seed: seed, id: StreamID(domain: StreamDomain.workload.rawValue, index: UInt64($0)))
        }
        connectivityStreams = (0..<count).map {
            RandomStream(
                seed: seed,
                id: StreamID(domain: StreamDomain.connectivity.rawValue, index: UInt64($0)))
        }
        networkStreams = (0..<count).map {
            RandomStream(
                seed: seed, id: StreamID(domain: StreamDomain.network.rawValue, index: UInt64($0)))
        }
        appStreams = (0..<count).map {
            RandomStream(
                seed: seed, id: StreamID(domain: StreamDomain.app.rawValue, index: UInt64($0)))
        }
        crashStreams =
            scenario.clientGroups.contains { $0.appCrashesPerDay > 0 }
            ? (0..<count).map {
                RandomStream(
                    seed: seed, id: StreamID(domain: StreamDomain.crash.rawValue, index: UInt64($0))
                )
            } : []
        swarmFaults = scenario.swarm.draw(
            durationSeconds: scenario.durationSeconds, scheduled: scenario.faults,
            stream: RandomStream(seed: seed, id: StreamID(domain: StreamDomain.swarm.rawValue)))
        faults = scenario.faults + swarmFaults
        restoreLookbackNs =
            (faults.map(\.restorePointSecondsAgo).max() ?? 0) * Time.nanosecondsPerSecond
        serverStream = RandomStream(seed: seed, id: StreamID(domain: StreamDomain.server.rawValue))
        clientRecoveryEnabled = scenario.server.clientRecoveryEnabled
        accessDenied = Array(repeating: false, count: Int(scenario.partitionsCount))
        writeDenied = accessDenied

        let schema = WorkloadSchema.initialReplica()
        servers = []
        for _ in 0..<scenario.partitionsCount {
            servers.append(ServerFile(initialState: schema, baseSalt: World.salt(serverStream)))
        }
        partitionMembers = Array(repeating: [], count: Int(scenario.partitionsCount))
        groups = scenario.clientGroups
        let groupOfClient = scenario.clientGroupOfClient
        clients = []
        clients.reserveCapacity(count)
        resetAudit = ResetAudit(clients: count)
        for index in 0..<count {
            let partition = UInt32(index % Int(scenario.partitionsCount))
            let setup = RandomStream(
                seed: seed, id: StreamID(domain: StreamDomain.setup.rawValue, index: UInt64(index)))
            let skewMax = scenario.clock.skewMillisecondsMax
            let skew =
                skewMax == 0 ? 0 : Int64(setup.uniformInt(below: 2 * skewMax + 1)) - Int64(skewMax)
            let mode = groups[Int(groupOfClient[index])].resetMode ?? scenario.clientReset.mode
            var sync = SyncClient(initialState: schema, resetMode: mode)
            sync.resetSabotage = scenario.sabotage.kind?.resetSabotage
            clients.append(
                ClientSlot(
                    sync: sync, partition: partition, group: groupOfClient[index], skewMs: skew))
            partitionMembers[Int(partition)].append(UInt32(index))
        }
    }

    static func salt(_ stream: RandomStream) -> UInt64 {
        // 63-bit salts, as in the reference; never zero.
        (UInt64(stream.next32() & 0x7FFF_FFFF) << 32 | UInt64(stream.next32())) | 1
    }

    // MARK: - Running

    /// Runs the scenario to its end, then heals until quiet, then checks convergence.
    public func run() -> RunResult {
        start()
        let end = Time.nanoseconds(seconds: Double(scenario.durationSeconds))
        queue.schedule(at: end, .healingStart)
        let healingLimit = end + Time.nanoseconds(seconds: Double(scenario.healing.secondsMax))
        timelineNextNs = timelineIntervalNs
        while let event = queue.popNext() {
            precondition(event.time >= now, "time went backwards")
            if healing, event.time > healingLimit {
                failures.append(
                    "not quiescent \(scenario.healing.secondsMax) s after healing began (\(queue.count + 1) events pending)"
                )
                break
            }
            while timelineIntervalNs != 0, event.time >= timelineNextNs {
                sampleTimeline(endingAt: timelineNextNs)
                timelineNextNs += timelineIntervalNs
            }
            now = event.time
            step(event)
            if checkpointInterval != 0, eventsProcessed % checkpointInterval == 0 {
                checkpoints.append(
                    TraceCheckpoint(events: eventsProcessed, timeNs: now, digest: digest.hex))
            }
            if healing, messagesInFlight == 0, reconnectsPending == 0, fileActionsPending == 0 {
                break
            }
            if eventsProcessed >= Limits.eventsMax {
                failures.append("more than Limits.eventsMax events")
                break
            }
        }
        if timelineIntervalNs != 0 { sampleTimeline(endingAt: now) }
        let result = finish(healingStartedAt: end)
        if checkpointInterval != 0 {
            // The run's own digest, final state folded in.
            checkpoints.append(
                TraceCheckpoint(
                    events: eventsProcessed, timeNs: now, digest: result.traceDigest.hex))
        }
        return result
    }

    /// Take a checkpoint of the trace every this many events (0: none). Set before `run()`;
    /// checkpoints never change a run.
    public var checkpointInterval: UInt64 = 0
    /// The checkpoints taken, in event order; the last is the run's trace digest at its end.
    public private(set) var checkpoints: [TraceCheckpoint] = []

    /// Sample the timeline every this many simulated nanoseconds (0: no timeline). Set before
    /// `run()`; the timeline never changes a run.
    public var timelineIntervalNs: UInt64 = 0
    /// The timeline's samples, one per interval, and a last one for the rest of the run.
    public private(set) var timeline: [TimelineSample] = []
    var timelineNextNs: UInt64 = 0
    /// The running totals at the last sample.
    var timelineTotals = TimelineSample(endNs: 0)
    /// The faults (and healing) since the last sample; kept with or without a timeline (a
    /// few per run).
    var timelineEvents: [String] = []

    /// The sync log (off unless set before `run()`).
    public var syncLog: SyncLog?

    /// What happened to each write (`writes.csv`); nil (not kept) unless set to an empty
    /// `WriteDetails()` before `run()`. Keeping it never changes a run.
    public var writeDetails: WriteDetails?

    /// Moves `write` in the ledger by `transition` and, when that changed its state, notes in
    /// `writeDetails` that it settled now, for `cause` (none when it is pending or synced).
    @inline(__always)
    func settle(
        _ write: UInt64, cause: UInt16, _ transition: (inout Ledger, UInt64) -> Void
    ) {
        let before = ledger.states[Int(write)]
        transition(&ledger, write)
        let state = ledger.states[Int(write)]
        guard writeDetails != nil, state != before else { return }
        writeDetails!.settled(
            write, at: now,
            cause: state == .pending || state == .synced ? WriteDetails.Cause.none : cause)
    }

    /// Appends the timeline's sample of the interval ending at `end`: the counts since the
    /// previous sample, and the state now. Reads the world only.
    func sampleTimeline(endingAt end: UInt64) {
        var totals = TimelineSample(endNs: end)
        if CohortSpec.areCohorts(groups) {
            totals.cohorts = Array(repeating: CohortTimelineFigures(), count: groups.count)
        }
        for client in clients {
            let (online, syncing, inReset) =
                (client.online, client.sync.session == .active, client.resetSince != nil)
            totals.writesMade += client.counters.writesMade
            totals.resetsStarted += client.counters.resetsStarted
            if online { totals.clientsOnline += 1 }
            if syncing { totals.clientsSyncing += 1 }
            if inReset { totals.clientsInReset += 1 }
            guard !totals.cohorts.isEmpty else { continue }
            let group = Int(client.group)
            totals.cohorts[group].writesMade += client.counters.writesMade
            totals.cohorts[group].resetsStarted += client.counters.resetsStarted
            totals.cohorts[group].resetsEnded += client.counters.resetsEnded
            totals.cohorts[group].appCrashes += client.counters.appCrashes
            if online { totals.cohorts[group].clientsOnline += 1 }
            if syncing { totals.cohorts[group].clientsSyncing += 1 }
            if inReset { totals.cohorts[group].clientsInReset += 1 }
        }
        totals.uploads = counters.uploads
        totals.downloads = counters.downloads
        totals.changesetsIntegrated = counters.changesetsIntegrated
        totals.bytesUploaded = counters.bytesUploaded
        totals.bytesDownloaded = counters.bytesDownloaded
        totals.freshCopyBytes = counters.freshCopyBytes
        totals.resetsEnded = UInt64(resetDurationsNs.count)
        totals.clientFilesExpired = counters.clientFilesExpired
        totals.messagesLost = counters.messagesLost
        totals.appCrashes = counters.appCrashes
        totals.permissionDeniedErrors = counters.permissionDeniedErrors
        totals.serverHistoryEntries = UInt64(historyEntries)
        totals.egressBytesDropped = counters.egressBytesDropped
        totals.egressQueueBytes = egressBacklogBytes
        totals.events = timelineEvents
        timeline.append(totals.counts(since: timelineTotals))
        timelineTotals = totals
        timelineEvents = []
    }

    /// Logs `message` when `level` is enabled; the message is built only then.
    @inline(__always)
    func logEvent(_ level: SyncLogLevel, _ message: @autoclosure () -> String) {
        guard let syncLog, level <= syncLog.level else { return }
        syncLog.sink(SyncLog.line(at: now, level, message()))
    }

    /// When true, connectivity is scripted: every client starts online and changes only through
    /// `schedule(client:online:atSeconds:)`. Set it before `run()`.
    public var scriptedConnectivity = false

    /// Scripts a client going online or offline at a simulated second (with
    /// `scriptedConnectivity`). The hand-written-scenario DSL of the tests.
    public func schedule(client: UInt32, online: Bool, atSeconds seconds: Double) {
        precondition(client < scenario.clientsCount, "no such client")
        queue.schedule(
            at: Time.nanoseconds(seconds: seconds), .scriptedConnectivity, subject: client,
            generation: online ? 1 : 0)
    }

    /// Schedules the initial events: connectivity, backups and faults.
    public func start() {
        if scriptedConnectivity {
            for index in clients.indices {
                clients[index].scheduledOnline = true
                goOnline(UInt32(index))
            }
        }
        for index in clients.indices where !scriptedConnectivity {
            let stream = connectivityStreams[index]
            let connectivity = groups[Int(clients[index].group)].connectivity
            let (onMean, offMean) = (
                connectivity.onlineSecondsMean, connectivity.offlineSecondsMean
            )
            // Start in the stationary state: online with probability on / (on + off).
            let online = stream.uniform() < onMean / (onMean + offMean)
            let first = Time.nanoseconds(
                seconds: stream.exponential(mean: online ? onMean : offMean))
            clients[index].scheduledOnline = online
            if online { goOnline(UInt32(index)) }
            queue.schedule(at: first, .connectivityChange, subject: UInt32(index))
        }
        if scenario.server.backupIntervalSeconds > 0 {
            takeBackup()
            queue.schedule(
                at: Time.nanoseconds(seconds: Double(scenario.server.backupIntervalSeconds)),
                .serverBackup)
        }
        if scenario.server.clientMaxOfflineSeconds > 0 {
            queue.schedule(
                at: Time.nanoseconds(
                    seconds: Double(scenario.server.historyCompactionIntervalSeconds)),
                .historyCompaction)
        }
        for index in clients.indices { scheduleRandomCrash(UInt32(index)) }
        for (index, fault) in faults.enumerated() {
            queue.schedule(
                at: Time.nanoseconds(seconds: Double(fault.atSeconds)), .fault,
                subject: UInt32(index))
        }
    }

    func step(_ event: Event) {
        eventsProcessed += 1
        digest.fold(event.time, UInt64(event.kind.rawValue) << 32 | UInt64(event.subject))
        switch event.kind {
        case .clientWrite: clientWrite(event)
        case .connectivityChange: connectivityChange(event)
        case .deliverToServer: deliverToServer(event)
        case .deliverToClient: deliverToClient(event)
        case .egressDone: egressDone(event)
        case .reconnect: reconnect(event)
        case .serverBackup:
            takeBackup()
            if !healing {
                queue.schedule(
                    at: now
                        + Time.nanoseconds(seconds: Double(scenario.server.backupIntervalSeconds)),
                    .serverBackup)
            }
        case .fault: fault(faults[Int(event.subject)])
        case .fileAction:
            // Stale when healing (or a relaunch) ran the action already; an app that crashed
            // runs it when it relaunches.
            let slot = Int(event.subject)
            guard event.generation == clients[slot].fileActionGeneration, !clients[slot].appDown
            else { return }
            runFileAction(event.subject)
        case .healingStart: startHealing()
        case .historyCompaction:
            // A crashed server compacts nothing (its clients could not have been heard from).
            if serverDownUntil == 0 { compactHistories() }
            if !healing {
                queue.schedule(
                    at: now
                        + Time.nanoseconds(
                            seconds: Double(scenario.server.historyCompactionIntervalSeconds)),
                    .historyCompaction)
            }
        case .appCrash:
            guard !healing, event.generation == clients[Int(event.subject)].launchGeneration
            else { return }
            crashApp(event.subject)
        case .appRelaunch:
            guard event.generation == clients[Int(event.subject)].launchGeneration,
                clients[Int(event.subject)].appDown
            else { return }
            relaunchApp(event.subject)
        case .serverRestart:
            guard serverDownUntil == now else { return }
            logEvent(.info, "server: up again (after a crash, a restore or a termination)")
            serverDownUntil = 0
        case .scriptedConnectivity:
            guard !healing else { return }
            let online = event.generation == 1
            clients[Int(event.subject)].scheduledOnline = online
            guard clients[Int(event.subject)].cutOffUntil == 0,
                online != clients[Int(event.subject)].online
            else { return }
            if online { goOnline(event.subject) } else { goOffline(event.subject) }
            restartWrites(event.subject)
        case .outageEnd:
            // Stale when a later outage extended this one, or healing ended it.
            let slot = Int(event.subject)
            guard !healing, clients[slot].cutOffUntil == now else { return }
            clients[slot].cutOffUntil = 0
            logEvent(.debug, "client \(event.subject): the network outage is over")
            guard clients[slot].scheduledOnline else { return }
            goOnline(event.subject)
            restartWrites(event.subject)
        }
    }

    // MARK: - Clients

    func clientWrite(_ event: Event) {
        let client = Int(event.subject)
        guard !healing, event.generation == clients[client].writeGeneration else { return }
        // The replica read in place: a copy would retain its storage at every write.
        let instructions = clients.withUnsafeBufferPointer { all in
            workload.nextWrite(replica: all[client].sync.replica, stream: workloadStreams[client])
        }
        let writeID = ledger.recordWrite(client: UInt32(client))
        writeDetails?.made(at: now)
        clients[client].counters.writesMade += 1
        let timestamp = UInt64(
            Int64(now / Time.nanosecondsPerMillisecond) + Int64(Time.timestampEpochOffsetMs)
                + clients[client].skewMs)
        do {
            if let upload = try clients[client].sync.write(
                instructions, timestampMs: timestamp, writeID: writeID)
            {
                sendToServer(UInt32(client), upload)
            }
        } catch {
            failures.append("client \(client): a local write failed to apply: \(error)")
        }
        scheduleNextWrite(UInt32(client))
    }

    func scheduleNextWrite(_ client: UInt32) {
        let slot = Int(client)
        // Fields read in place: a copy of the cohort would retain its name at every write.
        let group = Int(clients[slot].group)
        let rate =
            clients[slot].online
            ? groups[group].writesPerMinuteOnline : groups[group].writesPerMinuteOffline
        guard rate > 0, clients[slot].writing, !clients[slot].appDown else { return }
        let delay = Time.nanoseconds(seconds: workloadStreams[slot].exponential(mean: 60.0 / rate))
        queue.schedule(
            at: now + delay, .clientWrite, subject: client,
            generation: clients[slot].writeGeneration)
    }

    /// A write rate change: Poisson arrivals are memoryless, so the pending arrival is replaced.
    func restartWrites(_ client: UInt32) {
        clients[Int(client)].writeGeneration &+= 1
        scheduleNextWrite(client)
    }

    func connectivityChange(_ event: Event) {
        guard !healing else { return }
        let client = Int(event.subject)
        let stream = connectivityStreams[client]
        let connectivity = groups[Int(clients[client].group)].connectivity
        // Under an outage the client's own periods go on, but only count once it ends.
        let cutOff = clients[client].cutOffUntil != 0
        if clients[client].scheduledOnline {
            clients[client].scheduledOnline = false
            if !cutOff { goOffline(event.subject) }
            let next = Time.nanoseconds(
                seconds: stream.exponential(mean: connectivity.offlineSecondsMean))
            queue.schedule(at: now + next, .connectivityChange, subject: event.subject)
        } else {
            clients[client].scheduledOnline = true
            if !cutOff { goOnline(event.subject) }
            let next = Time.nanoseconds(
                seconds: stream.exponential(mean: connectivity.onlineSecondsMean))
            queue.schedule(at: now + next, .connectivityChange, subject: event.subject)
        }
        if !cutOff { restartWrites(event.subject) }
    }

    func goOnline(_ client: UInt32) {
        clients[Int(client)].online = true
        if clients[Int(client)].sync.session == .disconnected, !clients[Int(client)].appDown {
            connect(client)
        }
    }

    func goOffline(_ client: UInt32) {
        clients[Int(client)].online = false
        dropConnection(client)
    }

    func connect(_ client: UInt32) {
        logEvent(.debug, "client \(client): connecting")
        let message = clients[Int(client)].sync.connect()
        clients[Int(client)].counters.connections += 1
        sendToServer(client, message)
    }

    /// Both ends forget the connection; messages still in flight on it are dropped on arrival,
    /// and those still in the server's egress queue at once.
    func dropConnection(_ client: UInt32) {
        let slot = Int(client)
        clients[slot].sync.disconnect()
        clients[slot].epoch &+= 1
        clients[slot].server = ServerSession()
        if clients[slot].egressQueued > 0 { dropEgress(of: client) }
    }

    func breakConnectionAndRetry(_ client: UInt32) {
        logEvent(.debug, "client \(client): connection closed; reconnecting after a back-off")
        dropConnection(client)
        let slot = Int(client)
        guard clients[slot].online else { return }
        let failures = min(clients[slot].backoffFailures, 20)
        clients[slot].backoffFailures += 1
        let base = min(
            scenario.network.reconnectSecondsMax,
            scenario.network.reconnectSecondsMin * Double(UInt64(1) << failures))
        let jitter = 1.0 - 0.25 * networkStreams[slot].uniform()
        reconnectsPending += 1
        queue.schedule(
            at: now + Time.nanoseconds(seconds: base * jitter), .reconnect, subject: client)
    }

    func reconnect(_ event: Event) {
        reconnectsPending -= 1
        let client = Int(event.subject)
        guard clients[client].online, clients[client].sync.session == .disconnected,
            !clients[client].appDown
        else { return }
        connect(event.subject)
    }

    // MARK: - Network

    func allocate(_ message: InFlight) -> UInt32 {
        messagesInFlight += 1
        if let slot = freeSlots.popLast() {
            messages[Int(slot)] = message
            return slot
        }
        precondition(
            messages.count < Limits.messagesInFlightMax,
            "messages in flight beyond Limits.messagesInFlightMax")
        messages.append(message)
        return UInt32(messages.count - 1)
    }

    func take(_ slot: UInt32) -> InFlight {
        let message = messages[Int(slot)]!
        messages[Int(slot)] = nil
        freeSlots.append(slot)
        messagesInFlight -= 1
        return message
    }

    /// One-way latency: lognormal around the median, FIFO per direction.
    func latency(_ client: Int) -> UInt64 {
        let ms = networkStreams[client].lognormal(
            zeta: latencyZeta, sigma: scenario.network.latencySigma)
        return Time.nanoseconds(seconds: ms / 1000)
    }

    /// Whether the next message on this client's connection is lost. Each message is lost with
    /// probability lossPerMillion / 10^6, independently; instead of one draw per message, the
    /// gap to the next loss is drawn from the geometric distribution (the same process).
    func lost(_ client: Int) -> Bool {
        guard !healing, scenario.network.lossPerMillion > 0 else { return false }
        if clients[client].messagesUntilLoss == 0 {
            let probability = Double(scenario.network.lossPerMillion) / 1_000_000
            clients[client].messagesUntilLoss = networkStreams[client].geometric(
                probability: probability)
        }
        clients[client].messagesUntilLoss -= 1
        return clients[client].messagesUntilLoss == 0
    }

    func sendToServer(_ client: UInt32, _ message: ClientMessage) {
        send(client, .toServer(message))
    }

    func sendToClient(_ client: UInt32, _ message: ServerMessage) {
        send(client, .toClient(message))
    }

    /// Puts a message on the client's connection, FIFO in its direction, unless it is lost
    /// (which breaks the connection).
    func send(_ client: UInt32, _ message: InFlight) {
        let slot = Int(client)
        if lost(slot) {
            clients[slot].counters.messagesLost += 1
            counters.messagesLost += 1
            breakConnectionAndRetry(client)
            return
        }
        if case .toClient(let serverMessage) = message, scenario.server.egressBytesPerSecond > 0 {
            enqueueEgress(client, serverMessage)
            return
        }
        let departs = transmitted(message, client: slot)
        schedule(
            allocate(message), toServer: message.isToServer, client: client,
            earliest: departs + latency(slot))
    }

    /// Schedules the arrival of the message in slab slot `message` on the client's connection,
    /// no earlier than `earliest` and after the messages before it in its direction.
    func schedule(_ message: UInt32, toServer: Bool, client: UInt32, earliest: UInt64) {
        let slot = Int(client)
        let at: UInt64
        if toServer {
            at = max(earliest, clients[slot].toServerFreeAt)
            clients[slot].toServerFreeAt = at
        } else {
            at = max(earliest, clients[slot].toClientFreeAt)
            clients[slot].toClientFreeAt = at
        }
        queue.schedule(
            at: at, toServer ? .deliverToServer : .deliverToClient, subject: client,
            slot: message, generation: clients[slot].epoch)
    }

    /// Counts the bytes of a message put on the client's connection (a server message: past
    /// an unlimited egress), and returns when its last byte has left: now, or later when a
    /// client bandwidth is set and the link is busy. Each link carries its messages one after
    /// another. A message whose connection breaks on the way has still taken its time on the
    /// client's link.
    func transmitted(_ message: InFlight, client slot: Int) -> UInt64 {
        switch message {
        case .toServer(let message):
            let bytes = UInt64(WireSize.of(message))
            counters.bytesUploaded += bytes
            clients[slot].counters.bytesUploaded += bytes
            return World.carry(
                bytes, from: now, over: &clients[slot].uplinkBusyUntil,
                at: scenario.network.bandwidthBytesPerSecond)
        case .toClient(let message):
            return downlinked(
                bytes: UInt64(WireSize.of(message)), freshCopy: message.isFreshCopy, client: slot)
        }
    }

    /// Counts a server message of `bytes` as sent (it has left the server) and puts it on the
    /// client's connection now; returns when its last byte has left.
    func downlinked(bytes: UInt64, freshCopy: Bool, client slot: Int) -> UInt64 {
        counters.bytesDownloaded += bytes
        clients[slot].counters.bytesDownloaded += bytes
        if freshCopy {
            counters.freshCopies += 1
            counters.freshCopyBytes += bytes
        }
        return World.carry(
            bytes, from: now, over: &clients[slot].downlinkBusyUntil,
            at: scenario.network.bandwidthBytesPerSecond)
    }

    // MARK: - The server's egress

    /// Queues a server message for the egress link (`server.egressBytesPerSecond`), shared by
    /// every session in the order the server sends. Its latency is drawn now, as for a message
    /// sent at once.
    func enqueueEgress(_ client: UInt32, _ message: ServerMessage) {
        let slot = Int(client)
        let bytes = UInt64(WireSize.of(message))
        let item = EgressItem(
            client: client, epoch: clients[slot].epoch, message: allocate(.toClient(message)),
            bytes: bytes, latency: latency(slot), freshCopy: message.isFreshCopy)
        let idle = egressQueue.isEmpty
        egressQueue.append(item)
        clients[slot].egressQueued += 1
        egressBacklogBytes += bytes
        counters.egressBacklogPeakBytes = max(counters.egressBacklogPeakBytes, egressBacklogBytes)
        if idle { startEgress() }
    }

    /// Puts the first queued message on the egress wire, if any.
    func startEgress() {
        guard let head = egressQueue.first else { return }
        queue.schedule(
            at: now + World.transmissionNs(head.bytes, scenario.server.egressBytesPerSecond),
            .egressDone, subject: head.client, generation: egressGeneration)
    }

    /// The message on the egress wire has left the server: it goes on the client's connection,
    /// and the next one on the wire.
    func egressDone(_ event: Event) {
        guard event.generation == egressGeneration, let item = egressQueue.popFirst() else {
            return  // cut short: its session ended (`dropEgress`)
        }
        let slot = Int(item.client)
        precondition(item.epoch == clients[slot].epoch, "a message of an ended session on the wire")
        clients[slot].egressQueued -= 1
        egressBacklogBytes -= item.bytes
        let departs = downlinked(bytes: item.bytes, freshCopy: item.freshCopy, client: slot)
        schedule(
            item.message, toServer: false, client: item.client,
            earliest: departs + item.latency)
        startEgress()
    }

    /// `client`'s session ended: its messages leave the egress queue unsent, and the one on
    /// the wire, if it is one of them, is cut short (the link is free now).
    func dropEgress(of client: UInt32) {
        let onWire = egressQueue.first?.client == client
        var kept = Deque<EgressItem>()
        kept.reserveCapacity(egressQueue.count)
        for item in egressQueue {
            if item.client != client {
                kept.append(item)
                continue
            }
            _ = take(item.message)
            counters.egressMessagesDropped += 1
            counters.egressBytesDropped += item.bytes
            egressBacklogBytes -= item.bytes
        }
        egressQueue = kept
        clients[Int(client)].egressQueued = 0
        if onWire {
            egressGeneration &+= 1
            startEgress()
        }
    }

    /// When a link of `bytesPerSecond` (0 = unlimited: at once) has carried `bytes` handed to
    /// it at `start`, after what it carries already (`busyUntil`, which it then extends).
    static func carry(
        _ bytes: UInt64, from start: UInt64, over busyUntil: inout UInt64, at bytesPerSecond: UInt64
    ) -> UInt64 {
        guard bytesPerSecond > 0 else { return start }
        busyUntil = max(start, busyUntil) + transmissionNs(bytes, bytesPerSecond)
        return busyUntil
    }

    /// Nanoseconds a link of `bytesPerSecond` takes to carry `bytes`, rounded up (integers
    /// only, so every build computes the same time).
    static func transmissionNs(_ bytes: UInt64, _ bytesPerSecond: UInt64) -> UInt64 {
        let (high, low) = bytes.multipliedFullWidth(by: Time.nanosecondsPerSecond)
        let (quotient, remainder) = bytesPerSecond.dividingFullWidth((high, low))
        return remainder > 0 ? quotient + 1 : quotient
    }

    // MARK: - Server

    func deliverToServer(_ event: Event) {
        guard case .toServer(let message) = take(event.slot) else {
            preconditionFailure("slot holds a server message")
        }
        let client = event.subject
        let slot = Int(client)
        guard event.generation == clients[slot].epoch else { return }
        let partition = Int(clients[slot].partition)
        logEvent(.trace, "server: \(message.logName) from client \(client)")
        if serverDownUntil != 0 {
            // The server is down: the connection fails, and the client retries after its
            // back-off.
            counters.connectionsRefused += 1
            breakConnectionAndRetry(client)
            return
        }
        if accessDenied[partition] {
            refuseAccess(client)
            return
        }
        switch message {
        case .requestFreshCopy:
            let copy = servers[partition].allocateFreshCopy(
                fileSalt: World.salt(serverStream), at: now)
            clients[slot].server = ServerSession(
                active: true, ident: copy.file.ident,
                cursor: DownloadCursor(
                    serverVersion: copy.latest.version, lastIntegratedClientVersion: 0))
            digest.fold(0xF0, copy.file.ident)
            sendToClient(client, .freshCopy(copy))
        case .ident(let ident):
            if let error = servers[partition].checkIdent(ident) {
                logEvent(
                    .info,
                    "server: refused client \(client) at IDENT: \(error.code.rawValue) \(error.code.name)"
                )
                digest.fold(0xE0, UInt64(error.code.rawValue))
                sendToClient(client, .error(withRecoverySetting(error)))
                return
            }
            clients[slot].server = ServerSession(
                active: true, ident: ident.file.ident, cursor: ident.download)
            servers[partition].noteSeen(
                ident.file.ident, at: now, locked: ident.lockedServerVersion)
            pushDownload(to: client, partition: partition, evenIfEmpty: true)
        case .upload(let entries, let locked):
            guard clients[slot].server.active else { return }
            if writeDenied[partition] {
                // A write to a partition the user may only read: 206, and nothing integrated.
                counters.uploadsRefusedWithoutWriteAccess += 1
                refuseAccess(client, reason: "may only read its partition")
                return
            }
            counters.uploads += 1
            let serverStream = self.serverStream
            let ident = clients[slot].server.ident
            let outcome = servers[partition].integrate(
                upload: entries, from: ident, transformer: &transformer,
                nextSalt: { World.salt(serverStream) })
            servers[partition].noteSeen(ident, at: now, locked: locked)
            historyEntries += outcome.integratedWriteIDs.count
            if !healing { historyEntriesPeak = max(historyEntriesPeak, historyEntries) }
            for write in outcome.integratedWriteIDs {
                settle(write, cause: WriteDetails.Cause.none) { $0.markSynced($1) }
                integratedLog.append(write)
            }
            counters.changesetsIntegrated += UInt64(outcome.integratedWriteIDs.count)
            digest.fold(servers[partition].currentVersion, UInt64(outcome.duplicatesSkipped))
            if let error = outcome.error {
                failures.append(
                    "server refused an upload from client \(client) with \(error.code.rawValue) \(error.code.name)"
                )
                sendToClient(client, .error(withRecoverySetting(error)))
            }
            for member in partitionMembers[partition] {
                pushDownload(to: member, partition: partition, evenIfEmpty: false)
            }
        case .mark:
            if clients[slot].server.active {
                servers[partition].noteSeen(clients[slot].server.ident, at: now, locked: nil)
            }
            pushDownload(to: client, partition: partition, evenIfEmpty: true)
        }
    }

    /// The server ends the client's session with 206 permission_denied.
    func refuseAccess(_ client: UInt32, reason: String = "has no access to its partition") {
        logEvent(.info, "server: client \(client) \(reason): 206 permission_denied")
        clients[Int(client)].server = ServerSession()
        digest.fold(0xDE, UInt64(client))
        sendToClient(client, .error(ProtocolError(code: .permissionDenied, action: .deleteRealm)))
    }

    /// A reset error as the server sends it: `ClientResetNoRecovery` while Client Recovery is
    /// switched off.
    func withRecoverySetting(_ error: ProtocolError) -> ProtocolError {
        guard !clientRecoveryEnabled, error.action == .clientReset else { return error }
        return ProtocolError(code: error.code, action: .clientResetNoRecovery)
    }

    /// Downloads sent with entries, and the resets a reset sabotage could strike (over all
    /// clients), counted only for the sabotages.
    var downloadsWithEntries: UInt64 = 0
    var resetSabotageChances: UInt64 = 0

    /// Sends a client whatever history it has not been sent in this session.
    func pushDownload(to client: UInt32, partition: Int, evenIfEmpty: Bool) {
        let slot = Int(client)
        let session = clients[slot].server
        guard session.active else { return }
        guard evenIfEmpty || session.cursor.serverVersion < servers[partition].currentVersion else {
            return
        }
        var download = servers[partition].download(for: session.ident, after: session.cursor)
        if scenario.sabotage.kind == .downloadGap, !download.entries.isEmpty {
            downloadsWithEntries += 1
            if downloadsWithEntries % scenario.sabotage.every == 0 {
                download.removeFirstEntry()
            }
        }
        clients[slot].server.cursor = download.cursor
        counters.downloads += 1
        sendToClient(client, .download(download))
    }

    func deliverToClient(_ event: Event) {
        guard case .toClient(let message) = take(event.slot) else {
            preconditionFailure("slot holds a client message")
        }
        let client = event.subject
        let slot = Int(client)
        guard event.generation == clients[slot].epoch else { return }
        logEvent(.trace, "client \(client): \(message.logName)")
        let sabotaging = clients[slot].sync.resetSabotage != nil
        let chancesBefore = sabotaging ? clients[slot].sync.sabotageChances : 0
        if sabotaging {
            clients[slot].sync.sabotageArmed =
                (resetSabotageChances + 1) % scenario.sabotage.every == 0
        }
        let reaction = clients[slot].sync.receive(message, transformer: &transformer)
        if sabotaging {
            resetSabotageChances += clients[slot].sync.sabotageChances - chancesBefore
        }
        if let cause = reaction.resetStarted {
            logEvent(
                .info,
                "client \(client): client reset required (\(cause.rawValue) \(cause.name)), mode \(clients[slot].sync.resetMode.rawValue)"
            )
            digest.fold(0xC0 | UInt64(client) << 8, UInt64(cause.rawValue))
            if clients[slot].resetSince == nil {
                clients[slot].resetSince = now
                clients[slot].counters.resetsStarted += 1
            }
            if reaction.integrationFailure {
                failures.append(
                    "client \(client) could not integrate a download (merge or apply failed)")
            }
        }
        account(reaction, client: client)
        audit(client: client, message: message, reaction: reaction)
        if let cause = reaction.resetCompleted, let outcome = reaction.resetOutcome {
            completeReset(client, cause: cause, outcome: outcome)
        }
        if reaction.reportedError != nil {
            // The error handler has the file now: the session ends, with no reconnect, until the
            // app runs the file action.
            dropConnection(client)
            scheduleFileAction(client)
            return
        }
        if clients[slot].sync.session == .active {
            if let since = clients[slot].resetSince {
                // Syncing again: the reset is over, whichever way it went (recovered,
                // discarded, or a new file after the app's file action).
                clients[slot].resetSince = nil
                resetDurationsNs.append(now - since)
                clients[slot].counters.resetsEnded += 1
                clients[slot].counters.resetDowntimeNs += now - since
            }
            clients[slot].backoffFailures = 0
            if !clients[slot].writing && !healing {
                clients[slot].writing = true
                restartWrites(client)
            }
        }
        if case .error = message, clients[slot].sync.session == .disconnected {
            breakConnectionAndRetry(client)
            return
        }
        if let send = reaction.send { sendToServer(client, send) }
    }

    // MARK: - Client resets

    /// Carries a client reaction's reset bookkeeping into the ledger and the counters.
    func account(_ reaction: ClientReaction, client: UInt32) {
        let cause = reaction.resetCompleted.map { UInt16($0.rawValue) } ?? WriteDetails.Cause.none
        for write in reaction.discardedWriteIDs {
            settle(write, cause: cause) { $0.markDiscarded($1) }
        }
        for write in reaction.droppedWriteIDs {
            settle(write, cause: cause) { $0.markDroppedByRecovery($1) }
        }
        for write in reaction.recoveredWriteIDs { ledger.noteRecovered(write, partially: false) }
        for write in reaction.partiallyRecoveredWriteIDs {
            ledger.noteRecovered(write, partially: true)
        }
        for (reason, count) in reaction.recoveryDrops.enumerated() {
            counters.recoveryDrops[reason] += count
            if count > 0 {
                logEvent(
                    .detail,
                    "client \(client): recovery dropped \(count) instructions: \(RecoveryDropReason(rawValue: reason)!.name)"
                )
            }
        }
        if reaction.listsCopied > 0 {
            logEvent(.detail, "client \(client): recovery copied \(reaction.listsCopied) lists")
        }
        counters.listsCopied += reaction.listsCopied
        if reaction.beforeResetCallback { counters.beforeResetCallbacks += 1 }
        if reaction.afterResetCallback { counters.afterResetCallbacks += 1 }
        if reaction.cycleDetected {
            counters.resetCycles += 1
            logEvent(
                .warn, "client \(client): a previous client reset did not complete (reset cycle)")
        }
        if reaction.resetTrackerCleared {
            logEvent(
                .detail, "client \(client): the server acknowledged the reset; tracker cleared")
        }
        if !reaction.promiseViolations.isEmpty {
            counters.recoveryPromiseViolations += UInt64(reaction.promiseViolations.count)
            failures.append(
                "client \(client): recovery broke a documented promise: \(reaction.promiseViolations[0])"
            )
            for violation in reaction.promiseViolations {
                logEvent(.error, "client \(client): recovery promise broken: \(violation)")
            }
        }
        if let error = reaction.reportedError {
            logEvent(.warn, "client \(client): error handler: \(error.message)")
            counters.errorHandlerCalls += 1
            if error.cause == .permissionDenied { counters.permissionDeniedErrors += 1 }
            digest.fold(0xEE | UInt64(client) << 8, UInt64(error.cause.rawValue))
            if let reason = error.fallback {
                counters.resetFallbacks[reason.rawValue] += 1
                clients[Int(client)].counters.resetFallbacks += 1
                digest.fold(0xFB, UInt64(reason.rawValue))
            }
        }
    }

    /// Runs the reset audit on one client reaction and logs what it found.
    func audit(client: UInt32, message: ServerMessage, reaction: ClientReaction) {
        let found = resetAudit.violations.count
        resetAudit.check(
            client: client, message: message, reaction: reaction, sync: seenByAudit(client))
        logAuditViolations(since: found)
    }

    /// The client's fields the reset audit reads, each read in place.
    func seenByAudit(_ client: UInt32) -> ResetAudit.Seen {
        let slot = Int(client)
        return ResetAudit.Seen(
            mode: clients[slot].sync.resetMode, active: clients[slot].sync.session == .active,
            nothingUnsynced: clients[slot].sync.unsynced.isEmpty,
            row: clients[slot].sync.pendingReset)
    }

    func logAuditViolations(since found: Int) {
        for violation in resetAudit.violations[found...] { logEvent(.error, violation) }
    }

    func completeReset(_ client: UInt32, cause: ResetCause, outcome: ResetOutcome) {
        let slot = Int(client)
        logEvent(.info, "client \(client): client reset complete (\(cause.rawValue)): \(outcome)")
        clients[slot].counters.resets += 1
        clients[slot].counters.resetsByCause[cause.index] += 1
        counters.resets += 1
        switch outcome {
        case .recovered: clients[slot].counters.resetsRecovered += 1
        case .discarded: clients[slot].counters.resetsDiscarded += 1
        case .manual: clients[slot].counters.resetsManual += 1
        }
        // discardUnsyncedChanges promises that the unsynced changes are gone: a discarding
        // reset leaves nothing to upload.
        if outcome == .discarded, !clients[slot].sync.unsynced.isEmpty {
            failures.append(
                "client \(client): a discarding reset left \(clients[slot].sync.unsynced.count) unsynced changesets to upload"
            )
        }
        digest.fold(
            0xCC | UInt64(client) << 8, UInt64(cause.rawValue) << 8 | UInt64(outcome.rawValue))
    }

    /// The app's error handler received a client reset error: it backs the file up and deletes
    /// it at once, or at its next launch (`clientReset.manualHandling`); during healing, at once.
    func scheduleFileAction(_ client: UInt32) {
        var delay: UInt64 = 0
        let handling =
            groups[Int(clients[Int(client)].group)].manualHandling
            ?? scenario.clientReset.manualHandling
        if handling == .nextLaunch, !healing {
            delay = Time.nanoseconds(
                seconds: appStreams[Int(client)].exponential(
                    mean: scenario.clientReset.relaunchSecondsMean))
        }
        precondition(!clients[Int(client)].fileActionScheduled, "a second file action")
        clients[Int(client)].fileActionScheduled = true
        fileActionsPending += 1
        queue.schedule(
            at: now + delay, .fileAction, subject: client,
            generation: clients[Int(client)].fileActionGeneration)
    }

    /// Runs the app's file action. After a client reset error the file is backed up and
    /// deleted (its unsynced writes live on only in the backup) and the new, empty file
    /// downloads a fresh copy at once when the client is online. After permission denied the
    /// file is deleted (its unsynced writes are gone) and the app retries opening it after the
    /// reconnect back-off. Either way the app writes again after the first download.
    func runFileAction(_ client: UInt32) {
        let slot = Int(client)
        if clients[slot].fileActionScheduled {
            // Whether its event fires now or healing runs it early, the event is spent.
            clients[slot].fileActionScheduled = false
            clients[slot].fileActionGeneration &+= 1
            fileActionsPending -= 1
        }
        guard let (action, writes) = clients[slot].sync.runFileAction() else { return }
        let found = resetAudit.violations.count
        resetAudit.fileAction(client: client, action: action, sync: seenByAudit(client))
        logAuditViolations(since: found)
        logEvent(
            .info,
            "client \(client): app \(action.kind == .delete ? "deleted" : "backed up and deleted") the file with \(writes.count) unsynced writes"
        )
        clients[slot].writing = false
        clients[slot].writeGeneration &+= 1
        let cause = UInt16(action.cause.rawValue)
        switch action.kind {
        case .backUpThenDelete:
            for write in writes {
                settle(write, cause: cause) { $0.markKeptInBackup($1) }
            }
            completeReset(client, cause: action.cause, outcome: .manual)
            if clients[slot].online { connect(client) }
        case .delete:
            for write in writes {
                settle(write, cause: cause) { $0.markDeletedAfterPermissionDenied($1) }
            }
            counters.filesDeletedAfterPermissionDenied += 1
            breakConnectionAndRetry(client)
        }
    }

    // MARK: - Crashes

    /// Schedules the app's next random crash (with its cohort's `crashes.appCrashesPerDay`),
    /// for the current launch.
    func scheduleRandomCrash(_ client: UInt32) {
        let slot = Int(client)
        let rate = groups[Int(clients[slot].group)].appCrashesPerDay
        guard !crashStreams.isEmpty, rate > 0, !healing else { return }
        let meanSeconds = Double(Time.nanosecondsPerDay) / 1e9 / rate
        queue.schedule(
            at: now + Time.nanoseconds(seconds: crashStreams[slot].exponential(mean: meanSeconds)),
            .appCrash, subject: client, generation: clients[slot].launchGeneration)
    }

    /// The app's process dies. What it committed is in its file and survives: the replica, the
    /// unsynced changesets, the pending-reset row, a file action its error handler left for the
    /// next launch. What lived in memory does not: the session ends (the server notices at
    /// once), a client reset under way starts over at the next session (REALM-SEMANTICS §4.6,
    /// "interruptions"), and the app writes nothing until it relaunches.
    func crashApp(_ client: UInt32) {
        let slot = Int(client)
        guard !clients[slot].appDown else { return }
        let delay = Time.nanoseconds(
            seconds: appStreams[slot].exponential(mean: scenario.crashes.appRelaunchSecondsMean))
        logEvent(
            .info,
            "client \(client): app crashed\(clients[slot].resetSince != nil ? " during a client reset" : ""); relaunch in \(Time.clockText(delay))"
        )
        digest.fold(0xCA | UInt64(client) << 8, delay)
        counters.appCrashes += 1
        clients[slot].counters.appCrashes += 1
        if clients[slot].resetSince != nil { counters.appCrashesDuringReset += 1 }
        clients[slot].appDown = true
        clients[slot].writeGeneration &+= 1
        dropConnection(client)
        queue.schedule(
            at: now + delay, .appRelaunch, subject: client,
            generation: clients[slot].launchGeneration)
    }

    /// The crashed app starts again: a launch, so a file action left for the next launch runs
    /// now; otherwise the app writes again (if its file had synced before) and connects when
    /// online.
    func relaunchApp(_ client: UInt32) {
        let slot = Int(client)
        logEvent(.info, "client \(client): app relaunched")
        clients[slot].markRelaunched()
        if clients[slot].sync.session == .inactive {
            counters.fileActionsAtCrashRelaunch += 1
            runFileAction(client)
        } else {
            if clients[slot].online, clients[slot].sync.session == .disconnected {
                connect(client)
            }
            restartWrites(client)
        }
        scheduleRandomCrash(client)
    }

    // MARK: - History compaction

    /// Every server file's compaction (`ServerFile.compact`). A file whose session is open is
    /// seen now: the reference's client reports its progress in an UPLOAD (empty if need be)
    /// after each download, which SyncSim does not send as a message, so an online client never
    /// expires; a client that is offline (or between sessions) longer than the max offline
    /// time does.
    func compactHistories() {
        let maxOffline = Time.nanoseconds(seconds: Double(scenario.server.clientMaxOfflineSeconds))
        for partition in servers.indices {
            for member in partitionMembers[partition] where clients[Int(member)].server.active {
                servers[partition].noteSeen(
                    clients[Int(member)].server.ident, at: now, locked: nil)
            }
            let outcome = servers[partition].compact(at: now, maxOfflineNs: maxOffline)
            guard !outcome.expiredIdents.isEmpty || outcome.entriesTrimmed > 0 else { continue }
            for ident in outcome.expiredIdents {
                logEvent(
                    .info,
                    "server: partition \(partition): client file \(ident) expired (not seen for more than \(scenario.server.clientMaxOfflineSeconds) s)"
                )
            }
            logEvent(
                .debug,
                "server: partition \(partition): \(outcome.entriesTrimmed) history entries trimmed")
            counters.clientFilesExpired += UInt64(outcome.expiredIdents.count)
            counters.historyEntriesTrimmed += UInt64(outcome.entriesTrimmed)
            historyEntries -= outcome.entriesTrimmed
            digest.fold(
                UInt64(partition) << 32 | 0xC7,
                UInt64(outcome.expiredIdents.count) << 32 | UInt64(outcome.entriesTrimmed))
        }
    }

    /// History entries held by all server files, counted again after a fault replaced the
    /// files.
    func recountHistoryEntries() {
        historyEntries = servers.reduce(0) { $0 + $1.history.count }
    }

    // MARK: - Backups and faults

    /// Takes a backup, lets go of the backups the retention policy no longer keeps, and of the
    /// copies no restore can reach any more: a restore at `now` or later goes back at most
    /// `restoreLookbackNs`, so it needs no copy older than the latest backup taken at or before
    /// `now - restoreLookbackNs`. (When retention has let that one go too, a restore that
    /// reaches past every kept backup takes the oldest kept, which then has its copy.)
    func takeBackup() {
        logEvent(.debug, "server: backup taken")
        var bytes: UInt64 = 0
        for index in servers.indices { bytes += UInt64(servers[index].storedByteCount()) }
        backups.append(
            Backup(
                files: servers, integratedLogCount: integratedLog.count, takenAt: now,
                bytes: bytes))
        counters.backups += 1
        expireBackups()
        if now >= restoreLookbackNs,
            let reachable = backups.lastIndex(where: { $0.takenAt <= now - restoreLookbackNs })
        {
            for index in 0..<reachable { backups[index].files = nil }
        }
        counters.backupsKeptPeak = max(counters.backupsKeptPeak, UInt64(backups.count))
        counters.backupBytesPeak = max(counters.backupBytesPeak, backupBytes)
    }

    /// When the backups that still hold their copy of the files were taken, oldest first.
    var backupCopiesTakenAt: [UInt64] { backups.filter { $0.files != nil }.map(\.takenAt) }

    /// Lets go of the backups older than `server.backupRetentionSeconds` (0: none), except the
    /// latest.
    func expireBackups() {
        let retentionNs = scenario.server.backupRetentionSeconds * Time.nanosecondsPerSecond
        guard retentionNs > 0, now > retentionNs else { return }
        var expired = 0
        while expired < backups.count - 1, backups[expired].takenAt < now - retentionNs {
            expired += 1
        }
        backups.removeFirst(expired)
    }

    /// Rolls the server back to the latest backup taken at or before `restorePointSecondsAgo`
    /// before now, or, when retention has let every such backup go, to the oldest one kept
    /// (short of the restore point: counted, with by how much). The backups taken after it
    /// belong to the timeline the restore abandons: they go. False when there is no backup at
    /// all (the restore is skipped and counted).
    func restore(to fault: FaultSpec) -> Bool {
        expireBackups()
        guard !backups.isEmpty else {
            logEvent(.warn, "server: no backup to restore (server.backupIntervalSeconds is 0)")
            counters.restoresSkippedNoBackup += 1
            return false
        }
        let pointNs = fault.restorePointSecondsAgo * Time.nanosecondsPerSecond
        let point = now - min(pointNs, now)
        let index: Int
        if let reaching = backups.lastIndex(where: { $0.takenAt <= point }) {
            index = reaching
        } else {
            index = 0
            let shortNs = backups[0].takenAt - point
            counters.restoresShortOfPoint += 1
            counters.restoreShortfallNs += shortNs
            logEvent(
                .warn,
                "server: no backup kept from \(point / Time.nanosecondsPerSecond) s, the restore point (server.backupRetentionSeconds is \(scenario.server.backupRetentionSeconds)); restoring the oldest kept, \(shortNs / Time.nanosecondsPerSecond) s short of it"
            )
        }
        let backup = backups[index]
        guard let files = backup.files else {
            preconditionFailure("the backup a restore reaches has its copy")
        }
        backups.removeLast(backups.count - index - 1)
        logEvent(
            .info,
            "server: restored the backup taken at \(backup.takenAt / Time.nanosecondsPerSecond) s (\((now - backup.takenAt) / Time.nanosecondsPerSecond) s back; \(integratedLog.count - backup.integratedLogCount) integrated writes rolled back)"
        )
        counters.restores += 1
        counters.restoreRewindNs += now - backup.takenAt
        servers = files
        rollBackLedger(toLogCount: backup.integratedLogCount)
        return true
    }

    func fault(_ fault: FaultSpec) {
        guard !healing else { return }
        logEvent(.info, "fault: \(fault.kind.rawValue)")
        timelineEvents.append(fault.kind.rawValue)
        digest.fold(0xFA, UInt64(FaultKind.allCases.firstIndex(of: fault.kind)! + 1))
        switch fault.kind {
        case .restoreFromBackup:
            guard restore(to: fault) else { return }
        case .terminateSync:
            counters.terminations += 1
            for index in servers.indices {
                servers[index].terminateAndReenable(baseSalt: World.salt(serverStream))
            }
        case .breakingSchemaChange:
            counters.schemaChanges += 1
            for index in servers.indices {
                servers[index].changeSchemaBreaking(
                    erasing: WorkloadSchema.itemTable, field: WorkloadSchema.rankField,
                    baseSalt: World.salt(serverStream))
            }
        case .disableClientRecovery, .enableClientRecovery:
            // A setting, not a restart: sessions go on.
            clientRecoveryEnabled = fault.kind == .enableClientRecovery
            return
        case .revokeAccess:
            counters.accessRevocations += 1
            for partition in accessDenied.indices
            where serverStream.chance(UInt64(fault.partitionsPercent), outOf: 100) {
                accessDenied[partition] = true
            }
            // The server ends the sessions of the users who lost access; the others go on.
            for index in clients.indices
            where accessDenied[Int(clients[index].partition)] && clients[index].server.active {
                refuseAccess(UInt32(index))
            }
            return
        case .revokeWriteAccess:
            counters.writeAccessRevocations += 1
            for partition in writeDenied.indices
            where serverStream.chance(UInt64(fault.partitionsPercent), outOf: 100) {
                writeDenied[partition] = true
            }
            // Sessions go on: reading is still allowed, and the server refuses the next upload.
            return
        case .restoreAccess:
            for partition in accessDenied.indices {
                accessDenied[partition] = false
                writeDenied[partition] = false
            }
            return
        case .appCrash:
            for index in clients.indices
            where serverStream.chance(UInt64(fault.clientsPercent), outOf: 100) {
                crashApp(UInt32(index))
            }
            return
        case .networkOutage:
            counters.networkOutages += 1
            let end = now + fault.durationSeconds * Time.nanosecondsPerSecond
            for index in clients.indices
            where serverStream.chance(UInt64(fault.clientsPercent), outOf: 100) {
                cutOff(UInt32(index), until: end)
            }
            return
        case .serverCrash:
            // The state is durable: nothing to restore. The server is unreachable until the
            // restart; every session ends now.
            counters.serverCrashes += 1
            serverDown(
                until: now
                    + Time.nanoseconds(seconds: Double(scenario.crashes.serverRestartSeconds)))
        }
        if fault.durationSeconds > 0 {
            // A restore or a termination that takes its time: the server is down until done.
            counters.faultDowntimeNs += fault.durationSeconds * Time.nanosecondsPerSecond
            serverDown(until: now + fault.durationSeconds * Time.nanosecondsPerSecond)
        }
        // The server restarted with other files (restored, or their history forgotten): every
        // session ends, and clients reconnect after a back-off.
        recountHistoryEntries()
        for index in clients.indices where clients[index].sync.session != .disconnected {
            breakConnectionAndRetry(UInt32(index))
        }
    }

    /// The server is down (connection attempts fail) until `end`, or until a later end a crash
    /// or a restore already set.
    func serverDown(until end: UInt64) {
        guard end > serverDownUntil else { return }
        serverDownUntil = end
        queue.schedule(at: end, .serverRestart)
    }

    /// A network outage cuts `client` off until `end` (a later end when another outage already
    /// holds it): its connection breaks, and it cannot connect before then.
    func cutOff(_ client: UInt32, until end: UInt64) {
        let slot = Int(client)
        clients[slot].counters.outagesCutOff += 1
        let already = clients[slot].cutOffUntil != 0
        guard end > clients[slot].cutOffUntil else { return }
        clients[slot].cutOffUntil = end
        queue.schedule(at: end, .outageEnd, subject: client)
        guard !already else { return }
        logEvent(.debug, "client \(client): cut off by a network outage")
        guard clients[slot].online else { return }
        goOffline(client)
        restartWrites(client)
    }

    func rollBackLedger(toLogCount count: Int) {
        guard count < integratedLog.count else { return }
        for position in count..<integratedLog.count {
            let write = integratedLog[position]
            let owner = Int(ledger.owner(of: write))
            let stillUnsynced = clients[owner].sync.unsynced.contains { $0.writeID == write }
            settle(write, cause: WriteDetails.Cause.restore) {
                $0.markRolledBack($1, stillUnsyncedOnClient: stillUnsynced)
            }
        }
        integratedLog.removeLast(integratedLog.count - count)
    }

    // MARK: - Healing and checks

    func startHealing() {
        logEvent(.info, "healing: faults off, every client online")
        healing = true
        timelineEvents.append("healing")
        for partition in accessDenied.indices {
            accessDenied[partition] = false
            writeDenied[partition] = false
        }
        // Apps relaunch (crashed ones too): pending manual resets run their file action now.
        for index in clients.indices where clients[index].appDown {
            clients[index].markRelaunched()
        }
        for index in clients.indices where clients[index].sync.session == .inactive {
            runFileAction(UInt32(index))
        }
        for index in clients.indices {
            clients[index].writeGeneration &+= 1
            clients[index].cutOffUntil = 0
            clients[index].online = true
            if clients[index].sync.session == .disconnected { connect(UInt32(index)) }
        }
    }

    /// The failures with each repeated one listed once, where it first occurred, followed by
    /// how often (a client whose uploads the server keeps refusing fails hundreds of times).
    static func collapsingRepeats(_ failures: [String]) -> [String] {
        var counts: [String: Int] = [:]  // looked up, never iterated
        for failure in failures { counts[failure, default: 0] += 1 }
        var listed: Set<String> = []
        var collapsed: [String] = []
        for failure in failures where listed.insert(failure).inserted {
            let count = counts[failure]!
            collapsed.append(count == 1 ? failure : "\(failure) (\(count) times)")
        }
        return collapsed
    }

    func finish(healingStartedAt healingStart: UInt64) -> RunResult {
        var divergent: [UInt32] = []
        let serverDigests = servers.map { $0.state.contentDigest() }
        for index in clients.indices {
            let client = clients[index]
            let converged =
                client.sync.session == .active && client.sync.unsynced.isEmpty
                && client.sync.replica.contentDigest() == serverDigests[Int(client.partition)]
            if !converged { divergent.append(UInt32(index)) }
        }
        for value in serverDigests { digest.fold(value) }
        let totals = ledger.totals()
        if totals[Int(WriteState.pending.rawValue)] > 0 {
            failures.append("\(totals[0]) writes still pending after healing")
        }
        counters.resetAuditViolations = UInt64(resetAudit.violations.count)
        if let first = resetAudit.violations.first {
            failures.append(
                "the reset audit found broken reset rules (\(resetAudit.violations.count) in all); first: \(first)"
            )
        }
        if ledger.violations > 0 {
            failures.append(
                "ledger: \(ledger.violations) impossible transitions; first: \(ledger.firstViolation ?? "?")"
            )
        }
        if !divergent.isEmpty {
            failures.append(
                "\(divergent.count) clients did not converge to the server (first: client \(divergent[0]))"
            )
        }
        failures = World.collapsingRepeats(failures)
        for failure in failures { logEvent(.error, "check failed: \(failure)") }
        return RunResult(
            world: self, healingStartedAt: healingStart, divergentClients: divergent,
            ledgerTotals: totals)
    }
}

/// World-wide deterministic counters.
public struct WorldCounters: Sendable, Equatable, Codable {
    public var uploads: UInt64 = 0
    public var downloads: UInt64 = 0
    public var changesetsIntegrated: UInt64 = 0
    public var messagesLost: UInt64 = 0
    /// Bytes the clients sent and the server sent (`WireSize`; messages lost before they left
    /// are not counted), and of the server's, the fresh copies and their bytes.
    public var bytesUploaded: UInt64 = 0
    public var bytesDownloaded: UInt64 = 0
    public var freshCopies: UInt64 = 0
    public var freshCopyBytes: UInt64 = 0
    public var resets: UInt64 = 0
    /// Automatic resets that fell back to the manual error handler, per `ResetFallbackReason`.
    public var resetFallbacks = [UInt64](repeating: 0, count: ResetFallbackReason.allCases.count)
    /// Resets that found a pending-reset row (failed, or downgraded to a discard).
    public var resetCycles: UInt64 = 0
    public var beforeResetCallbacks: UInt64 = 0
    public var afterResetCallbacks: UInt64 = 0
    /// Errors handed to the sync manager's error handler (client reset errors).
    public var errorHandlerCalls: UInt64 = 0
    /// Instructions recovery dropped, per `RecoveryDropReason`.
    public var recoveryDrops = [UInt64](
        repeating: 0, count: RecoveryDropReason.allCases.count)
    public var listsCopied: UInt64 = 0
    public var recoveryPromiseViolations: UInt64 = 0
    /// Broken reset rules the reset audit found (`ResetAudit`; must be 0).
    public var resetAuditViolations: UInt64 = 0
    public var backups: UInt64 = 0
    public var restores: UInt64 = 0
    public var restoresSkippedNoBackup: UInt64 = 0
    /// Server time the restores went back, summed over them: from each restored backup to its
    /// restore (ns).
    public var restoreRewindNs: UInt64 = 0
    /// Restores whose restore point was older than every backup kept (retention had let them
    /// go), and by how much the oldest kept backup, which they restored, was later than the
    /// point, summed (ns).
    public var restoresShortOfPoint: UInt64 = 0
    public var restoreShortfallNs: UInt64 = 0
    /// Time the restores and terminations that take their time kept the server down
    /// (`faults[].durationSeconds`), summed (ns).
    public var faultDowntimeNs: UInt64 = 0
    /// The most backups, and the most bytes of backups, the retention policy kept at once.
    public var backupsKeptPeak: UInt64 = 0
    public var backupBytesPeak: UInt64 = 0
    public var terminations: UInt64 = 0
    public var schemaChanges: UInt64 = 0
    public var accessRevocations: UInt64 = 0
    /// `revokeWriteAccess` faults, and the uploads the server refused for them (206).
    public var writeAccessRevocations: UInt64 = 0
    public var uploadsRefusedWithoutWriteAccess: UInt64 = 0
    /// Permission-denied errors handed to the error handler, and files deleted for them.
    public var permissionDeniedErrors: UInt64 = 0
    public var filesDeletedAfterPermissionDenied: UInt64 = 0
    /// Client files expired by the client max offline time, and history entries compaction
    /// dropped.
    public var clientFilesExpired: UInt64 = 0
    public var historyEntriesTrimmed: UInt64 = 0
    /// App crashes, those that hit a client with a reset under way (which the relaunch
    /// repeats, or whose file action it runs), and relaunches that ran a file action the app's
    /// error handler had left for the next launch.
    public var appCrashes: UInt64 = 0
    public var appCrashesDuringReset: UInt64 = 0
    public var fileActionsAtCrashRelaunch: UInt64 = 0
    /// Server crashes, and messages that reached the server while it was down (each a
    /// connection that failed; the client retried after its back-off).
    public var serverCrashes: UInt64 = 0
    /// With `server.egressBytesPerSecond` set: server messages taken out of the egress queue
    /// unsent (or cut short on the wire) because their session ended, their bytes, and the
    /// most bytes the queue held at once.
    public var egressMessagesDropped: UInt64 = 0
    public var egressBytesDropped: UInt64 = 0
    public var egressBacklogPeakBytes: UInt64 = 0
    public var connectionsRefused: UInt64 = 0
    /// Network outages (the clients they cut off: `RunResult.clientsCutOff`).
    public var networkOutages: UInt64 = 0
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server message in the egress queue (`World.egressQueue`): its client and the connection
/// it was sent on, its slab slot, its size and its drawn latency.
struct EgressItem {
    let client: UInt32
    let epoch: UInt32
    let message: UInt32
    let bytes: UInt64
    let latency: UInt64
    let freshCopy: Bool
}

extension InFlight {
    var isToServer: Bool {
        if case .toServer = self { return true }
        return false
    }
}

extension ServerMessage {
    var isFreshCopy: Bool {
        if case .freshCopy = self { return true }
        return false
    }
}
