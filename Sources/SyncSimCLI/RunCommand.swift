import ArgumentParser
import Foundation
import Measurement
import Simulation
import SyncEngine

/// `syncsim run`: one deterministic run of a scenario, its summary, and its results on disk.
public struct RunCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a scenario for one seed and record its results.",
        discussion: """
            Without SCENARIO, runs the embedded default scenario (Data/scenarios/default.json). \
            Prints the seed first, then a summary and where the results went: \
            DIR/results.sqlite (one row per run, appended) and DIR/runs.csv, DIR/clients.csv, \
            DIR/timings.csv (regenerated from the database). Exits 1 when a check fails and \
            prints the line that reproduces the run.
            """
    )

    @Argument(help: "A scenario file (JSON). Default: the embedded default scenario.")
    public var scenario: String?

    @Option(help: "The run's seed (0 ... 2^63-1). Default: the scenario's seed.")
    public var seed: UInt64?

    @OptionGroup public var size: SizeOverrides

    @Option(
        name: .customLong("reset-mode"),
        help: "Override the scenario's clientReset.mode (how every client handles a reset).")
    public var resetMode: ClientResetMode?

    @Option(
        name: .customLong("backup-interval"),
        help: """
            Override the scenario's server.backupIntervalSeconds: seconds, or a number with s, \
            m, h or d; 0 for no backups.
            """)
    public var backupInterval: String?

    @Option(
        name: .customLong("set"),
        help: """
            Set a field of the scenario, as if the file said so: PATH=VALUE, PATH a dotted \
            path (workload.listPercent), VALUE JSON or a bare string. Repeatable.
            """)
    public var settings: [String] = []

    @Option(
        name: .customLong("log-level"),
        help: """
            Log sync events to standard error at this level and above, stamped with simulated \
            time (the SDK's levels; default off). Logging never changes a run.
            """)
    public var logLevel: SyncLogLevel = .off

    @Option(
        name: .customLong("checkpoints"),
        help: ArgumentHelp(
            """
            Write DIR/checkpoints.csv: the trace digest after every N events, and at the end. \
            Two runs' files agree up to the events where they part (compare them to find where \
            two builds diverge). Never changes a run.
            """, valueName: "N"))
    public var checkpointInterval: UInt64?

    @Option(
        name: .customLong("timeline"),
        help: ArgumentHelp(
            """
            Write DIR/timeline.csv: per interval of simulated time (seconds, or a number with \
            s, m, h or d), what happened in it (writes, uploads, resets begun and ended, \
            faults) and the state at its end (clients online, syncing, in a reset; history \
            held), run-wide and per cohort. Never changes a run.
            """, valueName: "I"))
    public var timelineInterval: String?

    @Flag(
        name: .customLong("writes"),
        help: """
            Write DIR/writes.csv: one row per write the apps made, with its client, when it \
            was made, the state it ended in, when it got there, and what cost it (the error \
            whose client reset discarded, dropped or backed it up, or the restore). Never \
            changes a run.
            """)
    public var writes = false

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "Print nothing but the seed line and the final digest line.")
    public var quiet = false

    public init() {}

    public func validate() throws {
        if let seed, seed > UInt64(Int64.max) {
            throw ValidationError(
                "--seed \(seed) is above 2^63-1; give a seed between 0 and \(Int64.max).")
        }
        try CommandSupport.validate(settings: settings)
        try CommandSupport.validate(checkpointInterval: checkpointInterval)
        try CommandSupport.validate(timelineInterval: timelineInterval)
        if let backupInterval, RunCommand.parseBackupInterval(backupInterval) == nil {
            throw ValidationError(
                "--backup-interval '\(backupInterval)' is not an interval; give 0 (no backups), whole seconds (3600) or a number with s, m, h or d (30m, 6h, 1d), at most 366d."
            )
        }
    }

    /// A backup interval in seconds: 0 (no backups) or a duration as `parseDuration` reads it.
    /// "links: …" when the scenario limits a bandwidth (the times in the results then depend on
    /// the message sizes); nil when both are unlimited.
    static func linksText(_ scenario: Scenario) -> String? {
        let egress = scenario.server.egressBytesPerSecond
        let client = scenario.network.bandwidthBytesPerSecond
        guard egress > 0 || client > 0 else { return nil }
        let rate = { (bytes: UInt64) in bytes == 0 ? "unlimited" : "\(bytes) B/s" }
        return "links: server egress \(rate(egress)), each client connection \(rate(client))"
    }

    static func parseBackupInterval(_ text: String) -> UInt64? {
        text == "0" ? 0 : parseDuration(text)
    }

    /// Whole seconds from "3600", "90s", "30m", "6h", "1d"; nil when malformed or out of range.
    static func parseDuration(_ text: String) -> UInt64? {
        guard let last = text.last else { return nil }
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = UInt64(digits) else {
            return nil
        }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: unit)
        guard !overflow, seconds >= 1, seconds <= Limits.durationSecondsMax else { return nil }
        return seconds
    }

    public func run() throws {
        // Load and override the scenario before anything is written.
        var (loaded, bytes) = try CommandSupport.loadScenario(
            scenario, settings: settings.compactMap(ScenarioSetting.init))
        loaded.applyOverrides(
            clientsCount: size.clients, durationSeconds: size.durationSeconds,
            resetMode: resetMode,
            backupIntervalSeconds: backupInterval.flatMap(RunCommand.parseBackupInterval))
        let runSeed = seed ?? loaded.seed
        let timelineSeconds = try CommandSupport.timelineSeconds(
            timelineInterval, durations: [loaded.durationSeconds])
        print(
            "seed=\(runSeed) scenario=\(loaded.name) commit=\(BuildInfo.gitCommit) build=\(BuildInfo.configuration)"
        )

        if let sabotage = loaded.sabotage.kind, !quiet {
            print(
                "sabotage: \(sabotage.rawValue) every \(loaded.sabotage.every) (a bug planted on purpose: this run tests SyncSim's checks; its figures are not SyncSim's)"
            )
        }
        if !quiet, let links = RunCommand.linksText(loaded) { print(links) }
        // Fail before simulating if the results cannot be written.
        let store = try CommandSupport.openStore(outputDirectory)

        let started = ContinuousClock.now
        let world = World(scenario: loaded, seed: runSeed)
        world.checkpointInterval = checkpointInterval ?? 0
        world.timelineIntervalNs = (timelineSeconds ?? 0) * Time.nanosecondsPerSecond
        if writes { world.writeDetails = WriteDetails() }
        if logLevel != .off {
            world.syncLog = SyncLog(level: logLevel) { line in
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
        }
        let result = world.run()
        let wall = ContinuousClock.now - started
        let timings = Timings(wall: wall, result: result)

        let record = RunRecordBuilder.record(
            result: result, scenario: loaded, scenarioBytes: bytes, timings: timings,
            overrides: overrides)
        try CommandSupport.writeResults(outputDirectory, store: store) {
            () throws(MeasurementError) in
            try store.insert(record)
            var files: [(String, String)] = []
            if checkpointInterval != nil {
                files.append(("checkpoints.csv", Self.checkpointsText(world.checkpoints)))
            }
            if timelineSeconds != nil {
                files.append(("timeline.csv", Self.timelineText(world.timeline)))
            }
            if let details = world.writeDetails {
                files.append(
                    ("writes.csv", Self.writesText(world.ledger, details, scenario: loaded)))
            }
            return files
        }

        if !quiet {
            RunSummaryPrinter.print(
                result: result, timings: timings, outputDirectory: outputDirectory)
            if let checkpointInterval {
                print(
                    "Checkpoints: \(outputDirectory)/checkpoints.csv (\(world.checkpoints.count), every \(checkpointInterval) events and at the end)"
                )
            }
            if let timelineSeconds {
                print(
                    "Timeline: \(outputDirectory)/timeline.csv (\(world.timeline.count) rows, every \(timelineSeconds) s and the rest of the run); draw a column with `syncsim export --timeline \(outputDirectory)/timeline.csv --format svg --metric clients_in_reset --output chart.svg`"
                )
            }
            if writes {
                print("Writes: \(outputDirectory)/writes.csv (\(result.writesMade) rows)")
            }
        }
        print("digest=\(result.traceDigest.hex)")
        if !result.passed {
            for failure in result.failures { print("FAILED: \(failure)") }
            overrides.writeCapsule(
                scenario: scenario, seed: runSeed, result: result,
                to: "\(outputDirectory)/capsule-seed-\(runSeed).json")
            print("reproduce: \(reproduceLine(seed: runSeed))")
            throw ExitCode(1)
        }
    }

    /// The most rows `--timeline` may write (a run's duration over the interval).
    static let timelineRowsMax: UInt64 = 1_000_000

    /// `timeline.csv`: a header and one record per sample (RFC 4180, as every CSV file here):
    /// `end_ns`, the figures (`TimelineSample.figureColumns`) and `events`.
    static func timelineText(_ samples: [TimelineSample]) -> String {
        let cohorts = samples.first?.cohorts.count ?? 0
        precondition(samples.allSatisfy { $0.cohorts.count == cohorts }, "one set of cohorts")
        return CSV.line(["end_ns"] + TimelineSample.columns(cohorts: cohorts) + ["events"])
            + samples.map { sample in
                CSV.line(
                    [String(sample.endNs)] + sample.allFigures.map(String.init)
                        + [sample.events.joined(separator: ";")])
            }.joined()
    }

    /// `writes.csv`: a header and one record per write, by write ID: `write_id`, `client`,
    /// `partition`, `made_ns`, `state` (the `runs.csv` column `writes_<state>` it counts in),
    /// `settled_ns` (when it reached that state), `cause` (empty; the protocol error code of
    /// the reset or permission-denied error that cost it; or `restore`), `recovered`,
    /// `partially_recovered`, `integrated_twice` (0 or 1).
    static func writesText(_ ledger: Ledger, _ details: WriteDetails, scenario: Scenario)
        -> String
    {
        var text = CSV.line([
            "write_id", "client", "partition", "made_ns", "state", "settled_ns", "cause",
            "recovered", "partially_recovered", "integrated_twice",
        ])
        for index in ledger.states.indices {
            let write = UInt64(index)
            let client = ledger.owner(of: write)
            let cause = details.causes[index]
            let recovery = ledger.recovery(of: write)
            text += CSV.line([
                String(index), String(client), String(client % scenario.partitionsCount),
                String(details.madeNs[index]), ledger.states[index].name,
                String(details.settledNs[index]),
                cause == WriteDetails.Cause.none
                    ? "" : cause == WriteDetails.Cause.restore ? "restore" : String(cause),
                recovery.recovered ? "1" : "0", recovery.partially ? "1" : "0",
                recovery.integratedTwice ? "1" : "0",
            ])
        }
        return text
    }

    /// `checkpoints.csv` (`RunComparison.Checkpoint.text`, which `compare` reads back).
    static func checkpointsText(_ checkpoints: [TraceCheckpoint]) -> String {
        RunComparison.Checkpoint.text(
            checkpoints.map {
                RunComparison.Checkpoint(
                    events: $0.events, simulatedTimeNs: $0.timeNs, traceDigest: $0.digest)
            })
    }

    func reproduceLine(seed: UInt64) -> String {
        overrides.reproduceLine(scenario: scenario, seed: seed)
    }

    /// The options given, as recorded with the run.
    var overrides: RunOverrides {
        RunOverrides(
            seed: seed, clients: size.clients, duration: size.duration, resetMode: resetMode,
            backupInterval: backupInterval, set: settings.isEmpty ? nil : settings)
    }
}

/// The command-line overrides, recorded with the run (as canonical JSON).
struct RunOverrides: Encodable {
    var seed: UInt64?
    var clients: UInt32?
    var duration: String?
    var resetMode: ClientResetMode?
    var backupInterval: String?
    var set: [String]?

    /// Writes the capsule of the failed run of `seed` to `path` (atomically) and prints where;
    /// prints nothing when it cannot be written (the reproduction line follows anyway).
    func writeCapsule(scenario: String?, seed: UInt64, result: RunResult, to path: String) {
        let capsule = FailureCapsule(
            scenario: scenario ?? "default", seed: seed, clients: clients,
            durationSeconds: duration.flatMap(RunCommand.parseDuration), resetMode: resetMode,
            backupIntervalSeconds: backupInterval.flatMap(RunCommand.parseBackupInterval),
            settings: set, failure: result.failures.joined(separator: "; "), fixedIn: "",
            commit: BuildInfo.gitCommit, digest: result.traceDigest.hex,
            reproduce: reproduceLine(scenario: scenario, seed: seed))
        if let json = try? RunRecord.canonicalJSON(capsule),
            (try? AtomicFile.write(json + "\n", to: path)) != nil
        {
            print(
                "capsule: \(path) (shrink it with `syncsim shrink \(path)`; copy it into Data/seeds/ and fill in fixedIn to replay it in every test run)"
            )
        }
    }

    /// The `syncsim run` line that replays the run of `seed` with these overrides bit for bit.
    func reproduceLine(scenario: String?, seed: UInt64) -> String {
        var parts = ["syncsim", "run"]
        if let scenario { parts.append(CommandSupport.shellWord(scenario)) }
        parts += ["--seed", String(seed)]
        if let clients { parts += ["--clients", String(clients)] }
        if let duration { parts += ["--duration", duration] }
        if let resetMode { parts += ["--reset-mode", resetMode.rawValue] }
        if let backupInterval { parts += ["--backup-interval", backupInterval] }
        for setting in set ?? [] { parts += ["--set", CommandSupport.shellWord(setting)] }
        return parts.joined(separator: " ")
    }
}

extension ClientResetMode: ExpressibleByArgument {}
extension SyncLogLevel: ExpressibleByArgument {}

/// The overrides of a scenario's size that `run` and `sweep` share.
public struct SizeOverrides: ParsableArguments {
    @Option(
        help:
            "Override the scenario's clientsCount (1 ... 100000), keeping its clients per partition."
    )
    public var clients: UInt32?

    @Option(
        help: "Override the scenario's duration: seconds, or a number with s, m, h or d (e.g. 6h).")
    public var duration: String?

    public init() {}

    public func validate() throws {
        if let clients, clients == 0 || clients > Limits.clientsMax {
            throw ValidationError(
                "--clients \(clients) is outside 1...\(Limits.clientsMax); give a client count in that range."
            )
        }
        if let duration, RunCommand.parseDuration(duration) == nil {
            throw ValidationError(
                "--duration '\(duration)' is not a duration; give whole seconds (3600) or a number with s, m, h or d (90m, 6h, 1d), at most 366d."
            )
        }
    }

    /// `--duration` in seconds, if given.
    var durationSeconds: UInt64? { duration.flatMap(RunCommand.parseDuration) }
}

/// What `run` and `sweep` share: reading the scenario, opening the results, writing them.
enum CommandSupport {
    /// Checks `--jobs J` (sweep and suite): 1 to 256 worlds at once.
    static func validate(jobs: Int) throws {
        if !(1...256).contains(jobs) {
            throw ValidationError(
                "--jobs \(jobs) is outside 1...256; give a number of worlds to run at once.")
        }
    }

    /// Checks `--checkpoints N` (run and sweep): N events between checkpoints, at least 1.
    static func validate(checkpointInterval: UInt64?) throws {
        if checkpointInterval == 0 {
            throw ValidationError(
                "--checkpoints 0 takes no checkpoint; give a number of events between checkpoints, e.g. 10000."
            )
        }
    }

    /// Checks `--timeline I` (run and sweep): an interval `parseDuration` reads.
    static func validate(timelineInterval: String?) throws {
        if let timelineInterval, RunCommand.parseDuration(timelineInterval) == nil {
            throw ValidationError(
                "--timeline '\(timelineInterval)' is not an interval; give whole seconds (600) or a number with s, m, h or d (10m, 1h), from 1 s to 366d."
            )
        }
    }

    /// The `--timeline` interval in seconds (nil without one), checked against the runs'
    /// durations: a run's timeline has at most `RunCommand.timelineRowsMax` rows.
    static func timelineSeconds(_ text: String?, durations: [UInt64]) throws -> UInt64? {
        guard let text, let seconds = RunCommand.parseDuration(text) else { return nil }
        let longest = durations.max() ?? 0
        if longest / seconds > RunCommand.timelineRowsMax {
            throw ValidationError(
                "--timeline \(text) would write more than \(RunCommand.timelineRowsMax) rows for a run of \(longest) s; give a longer interval."
            )
        }
        return seconds
    }

    /// Checks that every `--set` is `PATH=VALUE`.
    static func validate(settings: [String]) throws {
        for text in settings where ScenarioSetting(text) == nil {
            throw ValidationError(
                "--set '\(text)' is not PATH=VALUE; give a dotted path of the scenario, '=' and a value, e.g. workload.listPercent=20, clientReset.mode=manual or faults[0].atSeconds=3600 (an array's item by its index)."
            )
        }
    }

    /// `text` as one word for a POSIX shell: as it is when that is safe, else in single quotes.
    static func shellWord(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (CharacterSet.alphanumerics.contains(scalar)
                    || "._-=,:/+@%".unicodeScalars.contains(scalar))
        }
        return safe ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The scenario file at `path` (or the embedded default), with `settings` applied, and the
    /// file's bytes; on a bad file or setting, prints the error (which names the file, the
    /// settings, the field and the fix) and exits 2.
    static func loadScenario(_ path: String?, settings: [ScenarioSetting] = []) throws -> (
        Scenario, [UInt8]
    ) {
        do {
            if let path { return try Scenario.load(path: path, settings: settings) }
            let bytes = Array(Scenario.defaultScenarioJSON.utf8)
            let source = Scenario.defaultScenarioPath + " (embedded)"
            return (try Scenario.decode(bytes: bytes, file: source, settings: settings), bytes)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The results database in `directory`, created if needed; exits 3 when it cannot be.
    static func openStore(_ directory: String) throws -> ResultStore {
        do {
            try OutputDirectory.prepare(directory)
            return try ResultStore(path: directory + "/results.sqlite")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(3)
        }
    }

    /// Runs `insert`, regenerates `runs.csv`, `clients.csv` and `timings.csv` of `store`'s
    /// database and makes the files `insert` returns, all in one transaction of the database
    /// that commits only after the files are in place in `directory`: each file is staged
    /// (`AtomicFile.Batch`), then all are renamed over the old ones, then the transaction
    /// commits. On a failure (exit 3) the transaction is rolled back and the staged files
    /// removed: the database and the files are as they were, and running the command again
    /// (or `--resume`) records it once.
    static func writeResults(
        _ directory: String, store: ResultStore,
        insert: () throws(MeasurementError) -> [(name: String, text: String)]
    ) throws {
        var files = AtomicFile.Batch()
        do {
            try store.transaction {
                let extra = try insert()
                for table in ResultTable.allCases {
                    try files.stage(try store.csv(table), to: "\(directory)/\(table.rawValue).csv")
                }
                for file in extra {
                    try files.stage(file.text, to: "\(directory)/\(file.name)")
                }
                try files.commit()
            }
        } catch {
            files.discard()
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(3)
        }
    }
}

enum OutputDirectory {
    /// Creates the directory if needed and checks it can be written, with a clear error.
    static func prepare(_ path: String) throws(MeasurementError) {
        var isDirectory: ObjCBool = false
        let manager = FileManager.default
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw MeasurementError.outputNotWritable(
                    path: path, directory: path, reason: "exists but is not a directory")
            }
        } else {
            do {
                try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw MeasurementError.outputNotWritable(
                    path: path, directory: path, reason: "does not exist and could not be created")
            }
        }
        guard manager.isWritableFile(atPath: path) else {
            throw MeasurementError.outputNotWritable(
                path: path, directory: path, reason: "is not writable")
        }
    }
}
