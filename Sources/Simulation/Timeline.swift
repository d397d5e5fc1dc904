//! A run's timeline: what happened in each interval of simulated time (`run --timeline`), so a
//! reset storm after a restore, or a fleet's recovery from it, can be read hour by hour.
//!
//! Sampling reads the world's state and never schedules an event, so a timeline changes no
//! run: the trace digest is the same with or without it.

/// One interval of a run's timeline: counts of what happened in it, and the state at its end.
public struct TimelineSample: Sendable, Equatable {
    /// The interval's end, in simulated nanoseconds: it covers the events at times in
    /// [end − interval, end) (the last sample: up to the run's end, healing included).
    public var endNs: UInt64
    /// Counts in the interval.
    public var writesMade: UInt64 = 0
    public var uploads: UInt64 = 0
    public var downloads: UInt64 = 0
    public var changesetsIntegrated: UInt64 = 0
    /// Client resets that began (the first error of each) and that ended (the file synced
    /// again; as `RunResult.resetDurationsNs`).
    public var resetsStarted: UInt64 = 0
    public var resetsEnded: UInt64 = 0
    public var clientFilesExpired: UInt64 = 0
    public var messagesLost: UInt64 = 0
    /// The faults that fired in the interval, in order (`FaultKind` raw values), and
    /// `healing` when healing began in it.
    public var events: [String] = []
    /// At the interval's end.
    public var clientsOnline: UInt64 = 0
    /// Clients whose session is active (bound and syncing).
    public var clientsSyncing: UInt64 = 0
    /// Clients with a client reset under way (their file cannot sync).
    public var clientsInReset: UInt64 = 0
    public var serverHistoryEntries: UInt64 = 0

    public init(endNs: UInt64) { self.endNs = endNs }

    /// `timeline.csv`'s header.
    public static let header = [
        "end_seconds", "writes_made", "uploads", "downloads", "changesets_integrated",
        "resets_started", "resets_ended", "client_files_expired", "messages_lost", "events",
        "clients_online", "clients_syncing", "clients_in_reset", "server_history_entries",
    ]

    /// The sample as `timeline.csv`'s fields, in `header` order. The end is in seconds with
    /// three decimals (the last interval may end at any nanosecond).
    public var fields: [String] {
        let millis = (endNs + 500_000) / 1_000_000
        let seconds = "\(millis / 1_000).\(String(millis % 1_000 + 1_000).dropFirst())"
        return [
            seconds, String(writesMade), String(uploads), String(downloads),
            String(changesetsIntegrated), String(resetsStarted), String(resetsEnded),
            String(clientFilesExpired), String(messagesLost), events.joined(separator: ";"),
            String(clientsOnline), String(clientsSyncing), String(clientsInReset),
            String(serverHistoryEntries),
        ]
    }

    /// `timeline.csv`: the header and one line per sample (no field needs quoting: events
    /// are identifiers joined by `;`).
    public static func csv(_ samples: [TimelineSample]) -> String {
        var text = header.joined(separator: ",") + "\n"
        for sample in samples { text += sample.fields.joined(separator: ",") + "\n" }
        return text
    }
}

/// The running totals the timeline takes differences of.
struct TimelineTotals {
    var writesMade: UInt64 = 0
    var uploads: UInt64 = 0
    var downloads: UInt64 = 0
    var changesetsIntegrated: UInt64 = 0
    var resetsStarted: UInt64 = 0
    var resetsEnded: UInt64 = 0
    var clientFilesExpired: UInt64 = 0
    var messagesLost: UInt64 = 0
}
