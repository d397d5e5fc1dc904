//! A running digest of the event trace. Every processed event and every notable outcome is
//! folded in; two runs with the same seed and scenario must end with the same digest.

import Randomness

public struct TraceDigest: Sendable, Equatable, Codable {
    public private(set) var value: UInt64 = 0x5359_4E43_5349_4D31  // "SYNCSIM1"

    public init() {}

    @inline(__always)
    public mutating func fold(_ word: UInt64) {
        value = splitMix64(value ^ word) &+ 0x9E37_79B9
    }

    @inline(__always)
    public mutating func fold(_ a: UInt64, _ b: UInt64) {
        fold(a)
        fold(b)
    }

    public var hex: String { hexDigits(value) }
}

/// The trace digest after the first `events` events of a run (`World.checkpointInterval`). Two
/// runs agree up to the last checkpoint where their digests are equal, and differ from the
/// window after it on: the first differing checkpoint names the events where two builds, or two
/// settings, part.
public struct TraceCheckpoint: Sendable, Equatable, Codable {
    /// Events processed so far.
    public var events: UInt64
    /// Simulated time of the last of them, in nanoseconds.
    public var timeNs: UInt64
    /// The trace digest then (16 hex digits).
    public var digest: String

    public init(events: UInt64, timeNs: UInt64, digest: String) {
        self.events = events
        self.timeNs = timeNs
        self.digest = digest
    }
}

/// A 64-bit value as exactly 16 lowercase hex digits (digests in output and CSV).
public func hexDigits(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
