//! The sync log: what the simulated SDKs and server would log, at the reference's client log
//! levels (`SyncManager.logLevel`: fatal, error, warn, info, detail, debug, trace), stamped
//! with simulated time. Off by default. Logging never changes a run: nothing it does enters
//! the digest, and a message is only formatted when its level is enabled.

import SyncEngine

/// The client log levels of the reference SDKs, most severe first; `off` logs nothing.
public enum SyncLogLevel: String, Sendable, CaseIterable, Comparable {
    case off
    case fatal
    case error
    case warn
    case info
    case detail
    case debug
    case trace

    var rank: Int { Self.allCases.firstIndex(of: self)! }

    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// Where log lines go, with the level that enables them.
public struct SyncLog {
    public var level: SyncLogLevel
    public var sink: (String) -> Void

    public init(level: SyncLogLevel, sink: @escaping (String) -> Void) {
        self.level = level
        self.sink = sink
    }

    /// `[ 3h12m05.123s] info   message`, for a message at `level`.
    static func line(at now: UInt64, _ level: SyncLogLevel, _ message: String) -> String {
        let stamp = Time.clockText(now)
        let name = level.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
        return "[\(stamp)] \(name) \(message)"
    }
}

extension ClientMessage {
    var logName: String {
        switch self {
        case .requestFreshCopy: "fresh-copy request"
        case .ident: "IDENT"
        case .upload(let entries, _): "UPLOAD of \(entries.count) changesets"
        case .mark: "MARK"
        }
    }
}

extension ServerMessage {
    var logName: String {
        switch self {
        case .freshCopy(let copy): "fresh copy at server version \(copy.latest.version)"
        case .download(let download): "DOWNLOAD of \(download.entries.count) changesets"
        case .error(let error): "ERROR \(error.code.rawValue) \(error.code.name)"
        }
    }
}
