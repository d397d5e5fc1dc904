//! A run's timeline: what happened in each interval of simulated time (`run --timeline`), so a
//! reset storm after a restore, or a fleet's recovery from it, can be read hour by hour.
//!
//! Sampling reads the world's state and never schedules an event, so a timeline changes no
//! run: the trace digest is the same with or without it.

/// One interval of a run's timeline: counts of what happened in it, and the state at its end.
public struct TimelineSample: Sendable, Equatable, Codable {
    /// The interval's end, in simulated nanoseconds: it covers the events at times in
    /// [end − interval, end) (the last sample: up to the run's end, healing included).
    public var endNs: UInt64
    /// Counts in the interval.
    public var writesMade: UInt64 = 0
    public var uploads: UInt64 = 0
    public var downloads: UInt64 = 0
    public var changesetsIntegrated: UInt64 = 0
    /// Bytes the clients and the server sent (`WireSize`), and of the server's, those of
    /// fresh copies.
    public var bytesUploaded: UInt64 = 0
    public var bytesDownloaded: UInt64 = 0
    public var freshCopyBytes: UInt64 = 0
    /// Client resets that began (the first error of each) and that ended (the file synced
    /// again; as `RunResult.resetDurationsNs`).
    public var resetsStarted: UInt64 = 0
    public var resetsEnded: UInt64 = 0
    public var clientFilesExpired: UInt64 = 0
    public var messagesLost: UInt64 = 0
    public var appCrashes: UInt64 = 0
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
    /// Server messages dropped from the egress queue in the interval, their sessions ended
    /// (bytes; a count), and the bytes in the queue at its end (0 with an unlimited egress).
    public var egressBytesDropped: UInt64 = 0
    public var egressQueueBytes: UInt64 = 0
    /// 206 permission_denied errors handed to the apps' error handlers in the interval (users
    /// who lost access, or whose upload a read-only partition refused).
    public var permissionDeniedErrors: UInt64 = 0
    /// Per cohort, the rest last (`Scenario.clientGroups`): the same figures for its clients.
    /// Empty when the scenario has no cohorts.
    public var cohorts: [CohortTimelineFigures] = []

    public init(endNs: UInt64) { self.endNs = endNs }

    /// The names of `figures`, snake_case (the columns of `timeline.csv` after `end_ns`).
    public static let figureColumns = [
        "writes_made", "uploads", "downloads", "changesets_integrated", "bytes_uploaded",
        "bytes_downloaded", "fresh_copy_bytes", "resets_started", "resets_ended",
        "client_files_expired", "messages_lost", "app_crashes", "clients_online",
        "clients_syncing", "clients_in_reset", "server_history_entries", "egress_bytes_dropped",
        "egress_queue_bytes", "permission_denied_errors",
    ]

    /// The counts and the state figures, in `figureColumns` order (set: as many, in that
    /// order, as a timeline file holds them).
    public var figures: [UInt64] {
        get {
            [
                writesMade, uploads, downloads, changesetsIntegrated, bytesUploaded,
                bytesDownloaded, freshCopyBytes, resetsStarted, resetsEnded, clientFilesExpired,
                messagesLost, appCrashes, clientsOnline, clientsSyncing, clientsInReset,
                serverHistoryEntries, egressBytesDropped, egressQueueBytes, permissionDeniedErrors,
            ]
        }
        set {
            precondition(newValue.count == Self.figureColumns.count, "one value per figure")
            (writesMade, uploads, downloads, changesetsIntegrated) =
                (newValue[0], newValue[1], newValue[2], newValue[3])
            (bytesUploaded, bytesDownloaded, freshCopyBytes) =
                (newValue[4], newValue[5], newValue[6])
            (resetsStarted, resetsEnded, clientFilesExpired, messagesLost) =
                (newValue[7], newValue[8], newValue[9], newValue[10])
            (appCrashes, clientsOnline, clientsSyncing, clientsInReset, serverHistoryEntries) =
                (newValue[11], newValue[12], newValue[13], newValue[14], newValue[15])
            (egressBytesDropped, egressQueueBytes, permissionDeniedErrors) =
                (newValue[16], newValue[17], newValue[18])
        }
    }

    /// The columns of `timeline.csv` after `end_ns` and before `events`, for a run with
    /// `cohorts` groups (0 without cohorts): `figureColumns`, then each cohort's
    /// (`cohort<k>_<column>`, in `CohortTimelineFigures.columns` order).
    public static func columns(cohorts: Int) -> [String] {
        figureColumns
            + (0..<cohorts).flatMap { index in
                CohortTimelineFigures.columns.map { "cohort\(index)_\($0)" }
            }
    }

    /// `figures`, then each cohort's, in `columns(cohorts:)` order.
    public var allFigures: [UInt64] {
        figures + cohorts.flatMap(\.figures)
    }

    /// These counts, as running totals since the run began, less `earlier`'s: the counts of
    /// the interval between them. The state figures and the events are left as they are.
    func counts(since earlier: TimelineSample) -> TimelineSample {
        var interval = self
        interval.writesMade -= earlier.writesMade
        interval.uploads -= earlier.uploads
        interval.downloads -= earlier.downloads
        interval.changesetsIntegrated -= earlier.changesetsIntegrated
        interval.bytesUploaded -= earlier.bytesUploaded
        interval.bytesDownloaded -= earlier.bytesDownloaded
        interval.freshCopyBytes -= earlier.freshCopyBytes
        interval.resetsStarted -= earlier.resetsStarted
        interval.resetsEnded -= earlier.resetsEnded
        interval.clientFilesExpired -= earlier.clientFilesExpired
        interval.messagesLost -= earlier.messagesLost
        interval.appCrashes -= earlier.appCrashes
        interval.egressBytesDropped -= earlier.egressBytesDropped
        interval.permissionDeniedErrors -= earlier.permissionDeniedErrors
        // The run's start has no cohort totals yet: its counts are 0.
        if !earlier.cohorts.isEmpty {
            precondition(earlier.cohorts.count == cohorts.count, "one set of cohorts")
            for index in cohorts.indices {
                interval.cohorts[index] = cohorts[index].counts(since: earlier.cohorts[index])
            }
        }
        return interval
    }
}

/// One cohort's figures in an interval of a run's timeline (`TimelineSample.cohorts`): its
/// clients' share of the run-wide figures of the same names.
public struct CohortTimelineFigures: Sendable, Equatable, Codable {
    /// Counts in the interval.
    public var writesMade: UInt64 = 0
    public var resetsStarted: UInt64 = 0
    public var resetsEnded: UInt64 = 0
    public var appCrashes: UInt64 = 0
    /// At the interval's end.
    public var clientsOnline: UInt64 = 0
    public var clientsSyncing: UInt64 = 0
    public var clientsInReset: UInt64 = 0

    public init() {}

    /// The names of `figures`, snake_case (after `cohort<k>_` in `timeline.csv`).
    public static let columns = [
        "writes_made", "resets_started", "resets_ended", "app_crashes", "clients_online",
        "clients_syncing", "clients_in_reset",
    ]

    /// The figures in `columns` order (set: as many, in that order).
    public var figures: [UInt64] {
        get {
            [
                writesMade, resetsStarted, resetsEnded, appCrashes, clientsOnline, clientsSyncing,
                clientsInReset,
            ]
        }
        set {
            precondition(newValue.count == Self.columns.count, "one value per cohort figure")
            (writesMade, resetsStarted, resetsEnded, appCrashes) =
                (newValue[0], newValue[1], newValue[2], newValue[3])
            (clientsOnline, clientsSyncing, clientsInReset) = (
                newValue[4], newValue[5], newValue[6]
            )
        }
    }

    /// Running totals less `earlier`'s (the counts only; see `TimelineSample.counts`).
    func counts(since earlier: CohortTimelineFigures) -> CohortTimelineFigures {
        var interval = self
        interval.writesMade -= earlier.writesMade
        interval.resetsStarted -= earlier.resetsStarted
        interval.resetsEnded -= earlier.resetsEnded
        interval.appCrashes -= earlier.appCrashes
        return interval
    }
}
