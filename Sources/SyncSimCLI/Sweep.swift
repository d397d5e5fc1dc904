import Foundation
import Measurement
import Simulation
import SyncEngine
import Synchronization

/// What a sweep runs: every variant (reset mode × backup interval × each `--vary` value) for
/// every seed.
///
/// Jobs are numbered variant-major, seeds ascending within a variant; that numbering, not the
/// order in which threads finish, decides everything written, so a sweep gives the same files
/// with one thread or many.
struct SweepPlan {
    /// One variant: the overrides it applies on top of the common ones, and the scenario they
    /// make.
    struct Variant: Sendable {
        /// `--reset-mode` for this variant (nil: the scenario's own).
        var resetMode: ClientResetMode?
        /// `--backup-interval` as given (nil: the scenario's own), for the reproduction line.
        var backupInterval: String?
        /// This variant's `--vary` choices, one per `--vary`, in order.
        var settings: [ScenarioSetting] = []
        /// The scenario with every override applied: what the variant's runs simulate.
        var scenario = Scenario()
    }

    /// One world to run.
    struct Job: Sendable {
        var variant: Int
        var seed: UInt64
        var scenario: Scenario
    }

    var seeds: [UInt64]
    var variants: [Variant]
    /// The `--vary` paths, in order: one label column each.
    var variedPaths: [String]

    /// The plan of a sweep of the scenario at `path` (nil: the embedded default): every reset
    /// mode × every backup interval × every value of each `--vary`, in that nesting, with the
    /// common `settings` and `size` applied to all. Prints the error and exits 2 when a
    /// variant's settings make an invalid scenario.
    static func make(
        path: String?, settings: [ScenarioSetting], size: SizeOverrides, seeds: [UInt64],
        resetModes: [ClientResetMode?], backupIntervals: [String?], varies: [[ScenarioSetting]]
    ) throws -> SweepPlan {
        var variants = resetModes.flatMap { mode in
            backupIntervals.map { Variant(resetMode: mode, backupInterval: $0) }
        }
        for choices in varies {
            variants = variants.flatMap { variant in
                choices.map { choice in
                    var next = variant
                    next.settings.append(choice)
                    return next
                }
            }
        }
        for index in variants.indices {
            var scenario = try CommandSupport.loadScenario(
                path, settings: settings + variants[index].settings
            ).0
            scenario.applyOverrides(
                clientsCount: size.clients, durationSeconds: size.durationSeconds,
                resetMode: variants[index].resetMode,
                backupIntervalSeconds: variants[index].backupInterval.flatMap(
                    RunCommand.parseBackupInterval))
            variants[index].scenario = scenario
        }
        return SweepPlan(
            seeds: seeds, variants: variants, variedPaths: varies.compactMap(\.first?.pathText))
    }

    /// Every job, variant-major, seeds in the order given.
    var jobs: [Job] {
        variants.enumerated().flatMap { index, variant in
            seeds.map { Job(variant: index, seed: $0, scenario: variant.scenario) }
        }
    }

    /// The labels of `variant` in the sweep files: the mode and interval its runs used,
    /// overridden or not, then its value of each `--vary` path.
    func labels(of variant: Variant) -> [SweepLabel] {
        [
            SweepLabel(column: "reset_mode", value: variant.scenario.clientReset.mode.rawValue),
            SweepLabel(
                column: "backup_interval_seconds",
                value: String(variant.scenario.server.backupIntervalSeconds)),
        ]
            + zip(variedPaths, variant.settings).map { path, setting in
                SweepLabel(column: path, value: setting.valueText)
            }
    }

    /// A short name of `variant` for the console, e.g.
    /// `recoverUnsyncedChanges, backups every 6h, workload.listPercent=20`.
    func title(of variant: Variant) -> String {
        let interval = variant.scenario.server.backupIntervalSeconds
        return
            ([
                variant.scenario.clientReset.mode.rawValue,
                interval == 0 ? "no backups" : "backups every " + Self.shortDuration(interval),
            ] + variant.settings.map(\.text)).joined(separator: ", ")
    }

    static func shortDuration(_ seconds: UInt64) -> String {
        for (unit, size) in [("d", UInt64(86_400)), ("h", 3_600), ("m", 60)]
        where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    // MARK: - Reading the command line

    /// Seeds from `--seeds`: `N` (N seeds from `first`) or `A-B` (A to B, both included).
    /// Nil when malformed, empty, above 2^63−1 or more than `SweepCommand.runsMax` seeds.
    static func parseSeeds(_ text: String, first: UInt64) -> [UInt64]? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let low: UInt64
        let high: UInt64
        switch parts.count {
        case 1:
            guard let count = UInt64(parts[0]), count >= 1 else { return nil }
            let (end, overflow) = first.addingReportingOverflow(count - 1)
            guard !overflow else { return nil }
            (low, high) = (first, end)
        case 2:
            guard let a = UInt64(parts[0]), let b = UInt64(parts[1]), a <= b else { return nil }
            (low, high) = (a, b)
        default:
            return nil
        }
        guard high <= UInt64(Int64.max), high - low < UInt64(SweepCommand.runsMax) else {
            return nil
        }
        return Array(low...high)
    }

    /// Reset modes from `--reset-modes`: `all`, or names separated by commas.
    static func parseResetModes(_ text: String) -> [ClientResetMode]? {
        if text == "all" { return ClientResetMode.allCases }
        let modes = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { ClientResetMode(rawValue: String($0)) }
        guard !modes.isEmpty, modes.allSatisfy({ $0 != nil }) else { return nil }
        let list = modes.compactMap { $0 }
        return Set(list).count == list.count ? list : nil
    }

    /// The settings of one `--vary PATH=V1,V2,…`: `PATH=V1`, `PATH=V2`, …; nil when malformed,
    /// or when a value repeats. Values are separated by commas, so each is a JSON scalar or a
    /// bare string; or the values are the items of one JSON array, `PATH=[V1,V2,…]`, so that
    /// they may be arrays or objects themselves (`faults=[[],[{"kind":…}]]`), each kept as typed.
    static func parseVary(_ text: String) -> [ScenarioSetting]? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let path = text[..<equals]
        let valuesText = text[text.index(after: equals)...]
        let values: [Substring]
        if valuesText.first == "[" {
            guard let items = jsonArrayItems(valuesText) else { return nil }
            values = items
        } else {
            values = valuesText.split(separator: ",", omittingEmptySubsequences: false)
        }
        guard !values.isEmpty, !values.contains(where: \.isEmpty),
            Set(values).count == values.count
        else { return nil }
        let settings = values.map { ScenarioSetting("\(path)=\($0)") }
        guard settings.allSatisfy({ $0 != nil }) else { return nil }
        return settings.compactMap { $0 }
    }

    /// The items of the JSON array `text`, each as typed (without the whitespace around it);
    /// nil when `text` is not a JSON array.
    static func jsonArrayItems(_ text: Substring) -> [Substring]? {
        guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [])) is [Any]
        else { return nil }
        // A valid array: cut it at the commas outside strings, brackets and braces.
        var items: [Substring] = []
        var depth = 0
        var inString = false
        var escaped = false
        var start = text.index(after: text.startIndex)
        for index in text.indices {
            let character = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                }
                continue
            }
            switch character {
            case "\"": inString = true
            case "[", "{": depth += 1
            case "]", "}":
                depth -= 1
                if depth == 0 { items.append(text[start..<index]) }
            case "," where depth == 1:
                items.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        let trimmed = items.map { Substring($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        // `[]` holds no item (one empty piece).
        return trimmed == [""] ? [] : trimmed
    }

    /// Backup intervals from `--backup-intervals`: intervals separated by commas (0: none).
    static func parseBackupIntervals(_ text: String) -> [String]? {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let seconds = items.map(RunCommand.parseBackupInterval)
        guard !items.isEmpty, seconds.allSatisfy({ $0 != nil }) else { return nil }
        return Set(seconds).count == seconds.count ? items : nil
    }
}

/// A finished job: its result, its trace checkpoints (with `--checkpoints`) and how long it
/// took (wall clock, outside the result).
struct SweepOutcome: Sendable {
    var result: RunResult
    var checkpoints: [TraceCheckpoint] = []
    /// Its timeline (with `--timeline`).
    var timeline: [TimelineSample] = []
    var wall: Duration
}

/// Runs the jobs of a sweep on `threads` threads, each world whole on one thread (a world is
/// single-threaded; parallelism is many worlds at once).
enum SweepRunner {
    /// Stack of each worker thread: a world runs as it does on the main thread.
    static let stackSize = 16 << 20

    /// For tests: after this many runs finish, the workers take no more jobs and `run` returns
    /// nil, as if the process had been stopped there (its journal then holds those runs).
    @TaskLocal static var stopAfter: Int?

    /// Every job's outcome, in job order: those of `completed` (by job, read back from a
    /// journal) as they are, the others run. `journal` gets each run as it ends; then
    /// `finished(index, done, outcome)` is called on the worker thread, in whatever order the
    /// jobs end, with the number of jobs done so far, `completed` included (for progress only).
    /// With `checkpointInterval` N > 0, each world takes a checkpoint every N events and at
    /// the end (`World.checkpointInterval`), which changes no run; with `timelineIntervalNs`
    /// > 0, each keeps its timeline (`World.timelineIntervalNs`), which changes none either.
    /// - Returns: nil only when `stopAfter` stopped it.
    static func run(
        _ jobs: [SweepPlan.Job], threads: Int, checkpointInterval: UInt64 = 0,
        timelineIntervalNs: UInt64 = 0, completed: [Int: SweepOutcome] = [:],
        journal: SweepJournal.Writer? = nil,
        finished: @escaping @Sendable (Int, Int, SweepOutcome) -> Void = { _, _, _ in }
    ) -> [SweepOutcome]? {
        precondition(threads >= 1, "a sweep needs at least one thread")
        let pending = jobs.indices.filter { completed[$0] == nil }
        let shared = SharedSweep(count: jobs.count, done: jobs.count - pending.count)
        shared.outcomes.withLock { outcomes in
            for (index, outcome) in completed { outcomes[index] = outcome }
        }
        let stopAfter = Self.stopAfter ?? Int.max
        let done = DispatchSemaphore(value: 0)
        let workers = min(threads, max(pending.count, 1))
        for _ in 0..<workers {
            let thread = Thread {
                while shared.ran.load(ordering: .relaxed) < stopAfter {
                    let next = shared.next.add(1, ordering: .relaxed).oldValue
                    guard next < pending.count else { break }
                    let index = pending[next]
                    let job = jobs[index]
                    let started = ContinuousClock.now
                    let world = World(scenario: job.scenario, seed: job.seed)
                    world.checkpointInterval = checkpointInterval
                    world.timelineIntervalNs = timelineIntervalNs
                    let result = world.run()
                    let outcome = SweepOutcome(
                        result: result, checkpoints: world.checkpoints,
                        timeline: world.timeline, wall: ContinuousClock.now - started)
                    journal?.append(SweepJournal.Entry(job: index, of: job, outcome: outcome))
                    shared.outcomes.withLock { $0[index] = outcome }
                    shared.ran.add(1, ordering: .relaxed)
                    finished(index, shared.done.add(1, ordering: .relaxed).newValue, outcome)
                }
                done.signal()
            }
            thread.stackSize = stackSize
            thread.start()
        }
        for _ in 0..<workers { done.wait() }
        let outcomes = shared.outcomes.withLock { $0 }
        if outcomes.contains(where: { $0 == nil }) {
            precondition(stopAfter != Int.max, "a sweep job did not run")
            return nil
        }
        return outcomes.map { $0! }
    }

    private final class SharedSweep: Sendable {
        let next = Atomic<Int>(0)
        let done: Atomic<Int>
        /// Runs this call made (not read back).
        let ran = Atomic<Int>(0)
        let outcomes: Mutex<[SweepOutcome?]>

        init(count: Int, done: Int) {
            self.done = Atomic(done)
            outcomes = Mutex(Array(repeating: nil, count: count))
        }
    }
}

/// The time left, for the progress lines of `sweep` and `suite` (standard error only: it is
/// wall-clock time, never part of a result).
struct SweepProgress: Sendable {
    let started: ContinuousClock.Instant
    let total: Int
    /// Runs read back from a journal, which took no time here.
    let readBack: Int

    /// `", about 3m12s left"` after `done` of `total` runs (nothing when none is left): the
    /// time so far over the runs this process made, times the runs to go.
    func left(done: Int, now: ContinuousClock.Instant = .now) -> String {
        let (ran, toGo) = (done - readBack, total - done)
        guard ran > 0 && toGo > 0 else { return "" }
        let (seconds, attoseconds) = (now - started).components
        let left = (Double(seconds) + Double(attoseconds) / 1e18) / Double(ran) * Double(toGo)
        return left < 0.5 ? ", under a second left" : ", about \(Self.text(seconds: left)) left"
    }

    /// 45s, 3m12s, 1h04m, 2d03h.
    static func text(seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole)s" }
        if whole < 3_600 { return "\(whole / 60)m" + String(format: "%02ds", whole % 60) }
        if whole < 86_400 { return "\(whole / 3_600)h" + String(format: "%02dm", whole % 3_600 / 60) }
        return "\(whole / 86_400)d" + String(format: "%02dh", whole % 86_400 / 3_600)
    }
}

/// A sweep ready to run: its command's options read and checked, its scenario loaded, its
/// plan made. `syncsim sweep` runs one; `syncsim suite` runs several, each exactly as `sweep`
/// would with the same options.
struct PreparedSweep {
    /// A command-line error found while preparing (status 64 for `sweep`).
    struct UsageFailure: Error {
        var message: String
    }

    var command: SweepCommand
    var scenarioName: String
    /// The scenario file's bytes (the embedded default's when no file was given).
    var scenarioBytes: [UInt8]
    /// Every seed of `--seeds`, and those this run runs (a shard's, or all).
    var seedList: [UInt64]
    var runSeeds: [UInt64]
    var shard: SweepShard?
    var plan: SweepPlan
    var jobs: [SweepPlan.Job]
    /// `--timeline` in seconds, if given.
    var timelineSeconds: UInt64?

    /// Reads `command`'s options and scenario, and plans its runs.
    /// - Throws: `UsageFailure` for options that make no sweep; `ExitCode(2)` (after printing
    ///   the error) for a scenario that cannot be used.
    static func prepare(_ command: SweepCommand) throws -> PreparedSweep {
        let common = command.settings.compactMap(ScenarioSetting.init)
        let (loaded, bytes) = try CommandSupport.loadScenario(command.scenario, settings: common)
        guard let seedList = SweepPlan.parseSeeds(command.seeds, first: loaded.seed) else {
            throw UsageFailure(
                message:
                    "--seeds '\(command.seeds)' from the scenario's seed \(loaded.seed) goes past 2^63-1; give a range A-B."
            )
        }
        let shard = command.shard.flatMap(SweepShard.init)
        if let shard, shard.count > seedList.count {
            throw UsageFailure(
                message:
                    "--shard \(shard.text): the sweep has \(seedList.count) seeds, fewer than \(shard.count) shards; give at most \(seedList.count) shards."
            )
        }
        let runSeeds = shard.map { Array(seedList[$0.range(of: seedList.count)]) } ?? seedList
        let modes: [ClientResetMode?] =
            command.resetModes.flatMap(SweepPlan.parseResetModes) ?? [nil]
        let intervals: [String?] =
            command.backupIntervals.flatMap(SweepPlan.parseBackupIntervals) ?? [nil]
        let varies = command.vary.compactMap(SweepPlan.parseVary)
        // Capped as it grows, so that no product of long lists overflows.
        let variantsCount = varies.reduce(modes.count * intervals.count) { count, choices in
            min(count * choices.count, SweepCommand.runsMax + 1)
        }
        guard variantsCount * runSeeds.count <= SweepCommand.runsMax else {
            throw UsageFailure(
                message:
                    "the sweep has \(variantsCount > SweepCommand.runsMax ? "more than \(SweepCommand.runsMax)" : String(variantsCount)) variants × \(runSeeds.count) seeds, more than \(SweepCommand.runsMax) runs; give fewer seeds or variants."
            )
        }
        let plan = try SweepPlan.make(
            path: command.scenario, settings: common, size: command.size, seeds: runSeeds,
            resetModes: modes, backupIntervals: intervals, varies: varies)
        let timelineSeconds = try CommandSupport.timelineSeconds(
            command.timelineInterval, durations: plan.variants.map(\.scenario.durationSeconds))
        return PreparedSweep(
            command: command, scenarioName: loaded.name, scenarioBytes: bytes,
            seedList: seedList, runSeeds: runSeeds, shard: shard, plan: plan, jobs: plan.jobs,
            timelineSeconds: timelineSeconds)
    }

    /// The sweep's options as its record holds them (`SweepRecord.optionsJSON`).
    var optionsJSON: String {
        (try? RunRecord.canonicalJSON(command.options(seedList, shard: shard))) ?? "{}"
    }

    /// What a journal records of this sweep (`SweepJournal.Identity`); `name` is a suite's.
    func journalSweep(name: String) -> SweepJournal.Identity.Sweep {
        SweepJournal.Identity.Sweep(
            name: name, options: optionsJSON,
            scenarioHash: RunRecordBuilder.contentHash(scenarioBytes))
    }

    /// The variants' console titles, in order.
    var titles: [String] { plan.variants.map(plan.title) }

    /// For each failed run of `outcomes` (in job order): a `FAILED:` line, a capsule in
    /// `outputDirectory` and the line that reproduces it; `name` (a suite's sweep) prefixes
    /// both the line and the capsule's file name.
    /// - Returns: whether any run failed.
    func reportFailures(
        _ outcomes: [SweepOutcome], name: String?, outputDirectory: String
    ) -> Bool {
        precondition(outcomes.count == jobs.count, "an outcome per job")
        let titles = titles
        var failed = false
        for (job, outcome) in zip(jobs, outcomes) where !outcome.result.passed {
            failed = true
            let variant = plan.variants[job.variant]
            print(
                "FAILED: \(name.map { "\($0): " } ?? "")\(titles[job.variant]), seed \(job.seed): \(outcome.result.failures.joined(separator: "; "))"
            )
            command.overrides(job, variant).writeCapsule(
                scenario: command.scenario, seed: job.seed, result: outcome.result,
                to:
                    "\(outputDirectory)/capsule-\(name.map { "\($0)-" } ?? "")variant-\(job.variant)-seed-\(job.seed).json"
            )
            print("reproduce: \(command.reproduceLine(job, variant))")
        }
        return failed
    }

    /// The `sweep:` line that starts a sweep's output.
    func headline(threads: Int) -> String {
        let shardText = shard.map { " shard=\($0.text) of \(seedList.first!)-\(seedList.last!)" }
        return
            "sweep: scenario=\(scenarioName) seeds=\(runSeeds.first!)-\(runSeeds.last!)\(shardText ?? "") variants=\(plan.variants.count) runs=\(jobs.count) jobs=\(threads) commit=\(BuildInfo.gitCommit) build=\(BuildInfo.configuration)"
    }

    /// What the sweep records of its finished jobs (`outcomes`, in job order): a run record per
    /// job, the variants with their runs, the sweep's record and its digest.
    func records(
        _ outcomes: [SweepOutcome]
    ) -> (records: [RunRecord], variants: [SweepVariant], sweep: SweepRecord, digest: TraceDigest) {
        precondition(outcomes.count == jobs.count, "an outcome per job")
        let variants = plan.variants
        let records = zip(jobs, outcomes).map { job, outcome in
            RunRecordBuilder.record(
                result: outcome.result, scenario: job.scenario, scenarioBytes: scenarioBytes,
                timings: Timings(wall: outcome.wall, result: outcome.result),
                overrides: command.overrides(job, variants[job.variant]))
        }
        let seedsCount = runSeeds.count
        let sweepVariants = variants.enumerated().map { index, variant in
            SweepVariant(
                labels: plan.labels(of: variant),
                runs: Array(records[index * seedsCount..<(index + 1) * seedsCount]))
        }
        let digest = SweepCommand.digest(outcomes.map(\.result.traceDigest.value))
        let sweep = SweepRecord(
            scenarioName: scenarioName,
            scenarioHash: RunRecordBuilder.contentHash(scenarioBytes),
            optionsJSON: optionsJSON,
            gitCommit: BuildInfo.gitCommit, digest: digest.hex, seeds: runSeeds,
            variantLabels: sweepVariants.map(\.labels))
        return (records, sweepVariants, sweep, digest)
    }
}
