//! The event queue: a min-heap ordered by (time, insertion sequence), so events scheduled for
//! the same instant run in the order they were scheduled.

import HeapModule

/// What an event does. Raw values are folded into the trace digest: never renumber them.
public enum EventKind: UInt8, Sendable {
    case clientWrite = 1
    case connectivityChange = 2
    case deliverToServer = 3
    case deliverToClient = 4
    case reconnect = 5
    case serverBackup = 6
    case fault = 7
    case healingStart = 8
    /// A scripted connectivity change (tests and hand-written scenarios): `generation` is 1 to
    /// go online, 0 to go offline.
    case scriptedConnectivity = 9
    /// The app backs up and deletes a file whose client reset went to its error handler.
    case fileAction = 10
    /// The server's history compaction (client max offline time): expiry and trimming.
    case historyCompaction = 11
    /// A client's app crashes (a random crash: `generation` tells stale timers apart).
    case appCrash = 12
    /// A crashed app relaunches (`generation` tells stale ones apart).
    case appRelaunch = 13
    /// The sync server is back after a crash.
    case serverRestart = 14
    /// A network outage ends for a client it cut off (`World.ClientSlot.cutOffUntil` tells
    /// one a later outage extended apart).
    case outageEnd = 15
    /// The server's egress has carried the message at the head of its queue
    /// (`World.egressQueue`; `generation` tells one cut short, its session ended, apart).
    case egressDone = 16
}

/// A scheduled event. Kept to 32 bytes: payloads that do not fit (messages) live in the
/// world's message slab and are referenced by `slot`.
public struct Event: Comparable, Sendable {
    public var time: UInt64
    public var sequence: UInt64
    public var kind: EventKind
    /// A client index, or a fault index for `.fault`.
    public var subject: UInt32
    /// A message slot, or a generation number that tells stale timers apart.
    public var slot: UInt32
    public var generation: UInt32

    @inline(__always)
    public static func < (a: Event, b: Event) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }

    @inline(__always)
    public static func == (a: Event, b: Event) -> Bool { a.sequence == b.sequence }
}

public struct EventQueue: Sendable {
    private var heap = Heap<Event>()
    private var nextSequence: UInt64 = 0

    public init() {}

    public var count: Int { heap.count }
    public var isEmpty: Bool { heap.isEmpty }

    public mutating func schedule(
        at time: UInt64, _ kind: EventKind, subject: UInt32 = 0, slot: UInt32 = 0,
        generation: UInt32 = 0
    ) {
        precondition(heap.count < Limits.eventQueueMax, "event queue beyond Limits.eventQueueMax")
        heap.insert(
            Event(
                time: time, sequence: nextSequence, kind: kind, subject: subject,
                slot: slot, generation: generation))
        nextSequence &+= 1
    }

    public mutating func popNext() -> Event? { heap.popMin() }
}
