//! A failed run in one small JSON file: written as `capsule-seed-N.json` next to the results of
//! a failing `syncsim run`, and kept in `Data/seeds/`, where `SeedReplayTests` replays it.

import SyncEngine

/// Everything needed to replay a run bit for bit (with the same commit).
public struct FailureCapsule: Codable, Sendable, Equatable {
    /// A scenario file path (relative to the repository for `Data/seeds/`), or `default` for
    /// the embedded default scenario.
    public var scenario: String
    public var seed: UInt64
    /// The `--clients` override, if any.
    public var clients: UInt32?
    /// The `--duration` override in seconds, if any.
    public var durationSeconds: UInt64?
    /// The `--reset-mode` override, if any.
    public var resetMode: ClientResetMode?
    /// The `--backup-interval` override in seconds (0: no backups), if any.
    public var backupIntervalSeconds: UInt64?
    /// The `--set PATH=VALUE` overrides, in order, if any.
    public var settings: [String]?
    /// What failed.
    public var failure: String
    /// How it was fixed (empty until it is).
    public var fixedIn: String
    public var commit: String?
    public var digest: String?
    public var reproduce: String?

    public init(
        scenario: String, seed: UInt64, clients: UInt32?, durationSeconds: UInt64?,
        resetMode: ClientResetMode? = nil, backupIntervalSeconds: UInt64? = nil,
        settings: [String]? = nil, failure: String, fixedIn: String, commit: String?,
        digest: String?, reproduce: String?
    ) {
        self.scenario = scenario
        self.seed = seed
        self.clients = clients
        self.durationSeconds = durationSeconds
        self.resetMode = resetMode
        self.backupIntervalSeconds = backupIntervalSeconds
        self.settings = settings
        self.failure = failure
        self.fixedIn = fixedIn
        self.commit = commit
        self.digest = digest
        self.reproduce = reproduce
    }
}

extension Scenario {
    /// Applies the command-line overrides of `syncsim run`, the same way everywhere (the CLI and
    /// the seed replay): `clientsCount` keeps the scenario's clients per partition, and a shorter
    /// duration drops the faults at or after its end.
    public mutating func applyOverrides(
        clientsCount clients: UInt32?, durationSeconds: UInt64?,
        resetMode: ClientResetMode? = nil, backupIntervalSeconds: UInt64? = nil
    ) {
        if let resetMode { clientReset.mode = resetMode }
        if let backupIntervalSeconds { server.backupIntervalSeconds = backupIntervalSeconds }
        if let clients {
            let perPartition = max(1, Double(clientsCount) / Double(partitionsCount))
            partitionsCount = UInt32(max(1, (Double(clients) / perPartition).rounded()))
            clientsCount = clients
        }
        if let durationSeconds {
            self.durationSeconds = durationSeconds
            faults = faults.filter { $0.atSeconds < durationSeconds }
        }
    }
}
