//! A changeset: the unit of history, upload and download (REALM-SEMANTICS §1.3).

/// A sequence of instructions with the metadata the merge needs.
///
/// - `version`: the version this changeset produced on the peer that holds it (a client
///   version on the client; a server version for a changeset received from the server).
/// - `lastIntegratedRemoteVersion`: on a client, the last server version integrated before the
///   changeset was made; on the server, the last client version integrated.
/// - `originTimestamp`: the originating peer's clock, in milliseconds; clock skew therefore
///   decides conflicts, as in the reference.
/// - `originFileIdent`: the client file that made it; `0` means "local", and the transform
///   substitutes the local file ident for it.
///
/// Equality and hashing cover these five properties only; the merge's scan column (a cache
/// derived from `instructions`, dropped whenever they change) is not part of the value.
public struct Changeset: Hashable, Sendable {
    public var version: UInt64
    public var lastIntegratedRemoteVersion: UInt64
    public var originTimestamp: UInt64
    public var originFileIdent: UInt64
    public var instructions: ContiguousArray<Instruction> {
        didSet { scanColumn = nil }
    }
    /// The scan keys of `instructions`, one per instruction (`ScanEntry`), when a merge built
    /// them: a later merge that meets this changeset on its local side (a server's history)
    /// reads 24 bytes per instruction instead of the 72-byte instruction.
    var scanColumn: ScanColumn?

    public static func == (a: Self, b: Self) -> Bool {
        a.version == b.version && a.lastIntegratedRemoteVersion == b.lastIntegratedRemoteVersion
            && a.originTimestamp == b.originTimestamp && a.originFileIdent == b.originFileIdent
            && a.instructions == b.instructions
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(lastIntegratedRemoteVersion)
        hasher.combine(originTimestamp)
        hasher.combine(originFileIdent)
        hasher.combine(instructions)
    }

    public init(
        version: UInt64 = 0,
        lastIntegratedRemoteVersion: UInt64 = 0,
        originTimestamp: UInt64 = 0,
        originFileIdent: UInt64 = 0,
        instructions: ContiguousArray<Instruction> = []
    ) {
        self.version = version
        self.lastIntegratedRemoteVersion = lastIntegratedRemoteVersion
        self.originTimestamp = originTimestamp
        self.originFileIdent = originFileIdent
        self.instructions = instructions
    }
}
