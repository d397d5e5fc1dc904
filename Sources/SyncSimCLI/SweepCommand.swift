import ArgumentParser
import Foundation
import Measurement
import Simulation
import SyncEngine

/// `syncsim sweep`: many seeds of one scenario, in one or more variants (reset modes × backup
/// intervals), run in parallel worlds, recorded together and summarised with statistics.
public struct SweepCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a scenario over many seeds and variants, in parallel, with statistics.",
        discussion: """
            Runs every variant (each reset mode of --reset-modes times each interval of \
            --backup-intervals times each value of every --vary) for every seed of --seeds, \
            each run a world on one thread, --jobs at once. The runs and the sweep are appended \
            to DIR/results.sqlite in one transaction, in variant-major, seed order, so every \
            file is the same with one job or many. Writes DIR/runs.csv, DIR/clients.csv, \
            DIR/timings.csv (the whole database), DIR/sweep.csv (per variant and metric: mean, \
            spread, percentiles, 95% confidence interval of the mean) and DIR/sweep_paired.csv \
            (each variant minus the first, seed by seed), both made from the sweep as recorded \
            in the database, so `syncsim export --table sweep` makes them again. Exits 1 when a \
            run fails a check, and prints the line that reproduces each failed run. While it \
            runs, DIR/journal-KEY.jsonl keeps every finished run: an interrupted sweep is finished \
            by the same command line with --resume.
            """
    )

    /// At most this many runs in one sweep.
    static let runsMax = 10_000

    @Argument(help: "A scenario file (JSON). Default: the embedded default scenario.")
    public var scenario: String?

    @Option(
        help: """
            The seeds: N (N seeds from the scenario's seed) or A-B (A to B, both included).
            """)
    public var seeds: String = "10"

    @Option(
        name: .customLong("reset-modes"),
        help: """
            Reset modes to compare, separated by commas, or 'all'. Default: the scenario's \
            clientReset.mode.
            """)
    public var resetModes: String?

    @Option(
        name: .customLong("backup-intervals"),
        help: """
            Backup intervals to compare, separated by commas: seconds, or a number with s, m, \
            h or d; 0 for no backups. Default: the scenario's server.backupIntervalSeconds.
            """)
    public var backupIntervals: String?

    @OptionGroup public var size: SizeOverrides

    @Option(
        name: .customLong("set"),
        help: """
            Set a field of the scenario for every variant: PATH=VALUE, as for run. Repeatable.
            """)
    public var settings: [String] = []

    @Option(
        help: """
            Vary a field of the scenario: PATH=V1,V2,... (each value JSON or a bare string) or \
            PATH=[V1,V2,...] (the items of a JSON array, which may be arrays or objects), one \
            variant per value. Repeatable: the variants are every combination.
            """)
    public var vary: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run only shard I of N: the I-th of N contiguous ranges of the seeds, every variant.",
            discussion: """
                For a sweep split over machines: run the same command with --shard 1/N to \
                N/N, then `syncsim combine` the N results directories into the sweep one \
                command would have made.
                """, valueName: "I/N"))
    public var shard: String?

    @Option(
        name: .customLong("checkpoints"),
        help: ArgumentHelp(
            """
            Write DIR/checkpoints/variant-V-seed-S.csv for every run: its trace digest after \
            every N events and at the end, as `run --checkpoints N` writes it.
            """, valueName: "N"))
    public var checkpointInterval: UInt64?

    @Option(
        name: .customLong("timeline"),
        help: ArgumentHelp(
            """
            Write DIR/timelines/variant-V-seed-S.csv for every run, as `run --timeline I` \
            writes it, and DIR/sweep_timeline.csv: each variant's timeline averaged over its \
            seeds, interval by interval.
            """, valueName: "I"))
    public var timelineInterval: String?

    @Option(help: "Worlds run at once (1 ... 256). Default: the number of cores.")
    public var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "No progress lines and no table: only the sweep line and the final digest line.")
    public var quiet = false

    @Flag(
        help: """
            Finish an interrupted sweep: read back the runs DIR/journal-KEY.jsonl holds (the same \
            command line and build) and run only the others.
            """)
    public var resume = false

    public init() {}

    public func validate() throws {
        if SweepPlan.parseSeeds(seeds, first: 0) == nil {
            throw ValidationError(
                "--seeds '\(seeds)' is not a seed range; give a count (20) or a range A-B (1-20) of at most \(Self.runsMax) seeds, up to 2^63-1."
            )
        }
        if let resetModes, SweepPlan.parseResetModes(resetModes) == nil {
            let names = ClientResetMode.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError(
                "--reset-modes '\(resetModes)' is not a list of distinct reset modes; give 'all' or some of \(names), separated by commas."
            )
        }
        if let backupIntervals, SweepPlan.parseBackupIntervals(backupIntervals) == nil {
            throw ValidationError(
                "--backup-intervals '\(backupIntervals)' is not a list of distinct intervals; give 0 (no backups), whole seconds or numbers with s, m, h or d, separated by commas (0,1h,6h)."
            )
        }
        try CommandSupport.validate(settings: settings)
        var paths: [String] = []
        for text in vary {
            guard let choices = SweepPlan.parseVary(text) else {
                throw ValidationError(
                    "--vary '\(text)' is not PATH=V1,V2,... or PATH=[V1,V2,...]; give a dotted path of the scenario, '=' and distinct values separated by commas, e.g. workload.listPercent=0,10,20, or a JSON array of them, e.g. 'faults=[[],[{\"kind\":\"terminateSync\",\"atSeconds\":3600}]]'."
                )
            }
            paths.append(choices[0].pathText)
        }
        let shortcuts = [
            ("clientReset.mode", "--reset-modes", resetModes != nil),
            ("server.backupIntervalSeconds", "--backup-intervals", backupIntervals != nil),
        ]
        for (path, option, given) in shortcuts where given && paths.contains(path) {
            throw ValidationError("--vary \(path) and \(option) both vary it; give one of them.")
        }
        if Set(paths).count != paths.count {
            throw ValidationError(
                "--vary names one path twice; give each path once, with all its values.")
        }
        if let shard, SweepShard(shard) == nil {
            throw ValidationError(
                "--shard '\(shard)' is not I/N with 1 <= I <= N; e.g. --shard 2/4 for the second of four shards."
            )
        }
        try CommandSupport.validate(checkpointInterval: checkpointInterval)
        try CommandSupport.validate(timelineInterval: timelineInterval)
        try CommandSupport.validate(jobs: jobs)
    }

    public func run() throws {
        let prepared: PreparedSweep
        do {
            prepared = try PreparedSweep.prepare(self)
        } catch let failure as PreparedSweep.UsageFailure {
            FileHandle.standardError.write(Data("\(failure.message)\n".utf8))
            throw ExitCode(64)
        }
        let (variants, jobs, runSeeds) = (prepared.plan.variants, prepared.jobs, prepared.runSeeds)
        let timelineSeconds = prepared.timelineSeconds
        print(prepared.headline(threads: self.jobs))

        // A journal is read (or refused) before anything is written; then the results are
        // opened, to fail before simulating if they cannot be written.
        let identity = SweepJournal.Identity(
            command: "sweep", commit: BuildInfo.gitCommit, runs: jobs.count,
            sweeps: [prepared.journalSweep(name: "")],
            checkpointInterval: checkpointInterval ?? 0, timelineSeconds: timelineSeconds ?? 0)
        let completed = try SweepJournal.readBack(
            in: outputDirectory, identity: identity, jobs: jobs, resume: resume)
        let store = try CommandSupport.openStore(outputDirectory)
        let journal = try SweepJournal.writer(
            in: outputDirectory, identity: identity, resume: resume)
        if resume { SweepJournal.announce(completed, of: jobs.count, from: journal) }

        let started = ContinuousClock.now
        let progress = SweepProgress(started: started, total: jobs.count, readBack: completed.count)
        let quiet = self.quiet
        let titles = prepared.titles
        let total = jobs.count
        let finished = SweepRunner.run(
            jobs, threads: self.jobs, checkpointInterval: checkpointInterval ?? 0,
            timelineIntervalNs: (timelineSeconds ?? 0) * Time.nanosecondsPerSecond,
            completed: completed, journal: journal
        ) { index, done, outcome in
            guard !quiet else { return }
            let job = jobs[index]
            let verdict = outcome.result.passed ? "passed" : "FAILED"
            FileHandle.standardError.write(
                Data(
                    "[\(done)/\(total)] \(titles[job.variant]), seed \(job.seed): \(verdict), digest \(outcome.result.traceDigest.hex)\(progress.left(done: done))\n"
                        .utf8))
        }
        let wall = ContinuousClock.now - started
        guard let outcomes = finished else {
            throw SweepJournal.interrupted(journal)
        }

        let (records, sweepVariants, sweepRecord, digest) = prepared.records(outcomes)
        // sweep.csv and sweep_paired.csv are made from what the database holds, as `export`
        // makes them.
        try CommandSupport.writeResults(outputDirectory, store: store) {
            () throws(MeasurementError) in
            let sweepId = try store.insert(sweep: sweepRecord, runs: records)
            var files = [
                ("sweep.csv", try store.csv(.sweep, sweepId: sweepId)),
                ("sweep_paired.csv", try store.csv(.sweepPaired, sweepId: sweepId)),
            ]
            // One file per run in `directory`, as `run` writes it for that run.
            func perRun(
                _ directory: String, _ name: (Int, UInt64) -> String,
                _ text: (SweepOutcome) -> String
            ) throws(MeasurementError) {
                try OutputDirectory.prepare("\(outputDirectory)/\(directory)")
                for (job, outcome) in zip(jobs, outcomes) {
                    files.append((name(job.variant, job.seed), text(outcome)))
                }
            }
            if timelineSeconds != nil {
                try perRun("timelines", SweepTimeline.file) { RunCommand.timelineText($0.timeline) }
                let timelines = variants.indices.map { variant in
                    outcomes[variant * runSeeds.count..<(variant + 1) * runSeeds.count]
                        .map(\.timeline)
                }
                files.append(
                    (
                        "sweep_timeline.csv",
                        SweepTimeline.text(
                            labels: sweepVariants.map(\.labels), timelines: timelines)
                    ))
            }
            if checkpointInterval != nil {
                try perRun("checkpoints", Self.checkpointsFile) {
                    RunCommand.checkpointsText($0.checkpoints)
                }
            }
            return files
        }
        journal.finish()

        if !quiet {
            SweepSummaryPrinter.print(
                variants: sweepVariants, titles: titles, outcomes: outcomes, wall: wall,
                threads: self.jobs, readBack: Set(completed.keys),
                outputDirectory: outputDirectory)
        }
        print("digest=\(digest.hex)")
        if prepared.reportFailures(outcomes, name: nil, outputDirectory: outputDirectory) {
            throw ExitCode(1)
        }
    }

    /// The sweep's options as recorded with it (`sweep.optionsJSON`): what decides its runs,
    /// with the seeds as a range (all of the sweep's, for a shard too) and the shard. `--jobs`,
    /// `--out` and `--quiet` change no result and are left out.
    func options(_ seeds: [UInt64], shard: SweepShard?) -> SweepOptions {
        SweepOptions(
            seeds: "\(seeds.first!)-\(seeds.last!)", resetModes: resetModes,
            backupIntervals: backupIntervals, vary: vary.isEmpty ? nil : vary,
            set: settings.isEmpty ? nil : settings, clients: size.clients,
            duration: size.duration, shard: shard?.text)
    }

    /// The options of one run of the sweep, as `syncsim run` would record them: the common
    /// `--set`s, then the variant's `--vary` choices.
    func overrides(_ job: SweepPlan.Job, _ variant: SweepPlan.Variant) -> RunOverrides {
        let all = settings + variant.settings.map(\.text)
        return RunOverrides(
            seed: job.seed, clients: size.clients, duration: size.duration,
            resetMode: variant.resetMode, backupInterval: variant.backupInterval,
            set: all.isEmpty ? nil : all)
    }

    /// The sweep's digest (`digest=`): every run's trace digest folded in run order
    /// (variant-major, seeds ascending). `combine` folds the shards' runs alike.
    static func digest(_ traceDigests: [UInt64]) -> TraceDigest {
        var digest = TraceDigest()
        for value in traceDigests { digest.fold(value) }
        return digest
    }

    /// The checkpoints file of one run of a sweep, relative to its results directory.
    static func checkpointsFile(variant: Int, seed: UInt64) -> String {
        "checkpoints/variant-\(variant)-seed-\(seed).csv"
    }

    /// The `syncsim run` line that replays one run of the sweep bit for bit.
    func reproduceLine(_ job: SweepPlan.Job, _ variant: SweepPlan.Variant) -> String {
        overrides(job, variant).reproduceLine(scenario: scenario, seed: job.seed)
    }
}

/// A sweep's command-line options, recorded with it (as canonical JSON).
struct SweepOptions: Codable, Equatable {
    var seeds: String
    var resetModes: String?
    var backupIntervals: String?
    var vary: [String]?
    var set: [String]?
    var clients: UInt32?
    var duration: String?
    /// `I/N` for one shard of the sweep (`--shard`); nil (left out) for a whole sweep.
    var shard: String? = nil
}

/// Shard `index` of `count` (1-based) of a sweep's seeds: the `index`-th of `count`
/// contiguous ranges, whose lengths differ by at most one.
struct SweepShard: Equatable {
    var index: Int
    var count: Int

    init(index: Int, count: Int) {
        (self.index, self.count) = (index, count)
    }

    /// Parses `I/N` with 1 <= I <= N <= 10,000.
    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]),
            (1...SweepCommand.runsMax).contains(count), (1...count).contains(index)
        else { return nil }
        self.init(index: index, count: count)
    }

    var text: String { "\(index)/\(count)" }

    /// The positions of this shard's seeds among `total` seeds (empty when `count > total`).
    func range(of total: Int) -> Range<Int> {
        (index - 1) * total / count..<index * total / count
    }
}

/// The console table of a sweep: the headline metrics per variant, with their 95 % confidence
/// intervals, and each variant's paired difference from the first.
enum SweepSummaryPrinter {
    /// The metrics shown, with their labels (every metric is in `sweep.csv`).
    static let headline: [(name: String, label: String)] = [
        ("resetsPerClientPerDay", "resets per client per day"),
        ("writesLostToRestore", "writes lost to a server restore"),
        ("writesDiscardedByReset", "writes discarded by a reset"),
        ("writesDroppedByRecovery", "writes dropped by recovery rules"),
        ("writesKeptInBackup", "writes only in a manual backup"),
        ("writesDeletedAfterPermissionDenied", "writes deleted, permission denied"),
        ("resetsManual", "files handed to the app (manual)"),
        ("resetCycles", "reset cycles detected"),
        ("divergentClients", "clients not converged"),
    ]

    /// The wall time of the runs of `outcomes` this process made (those not in `readBack`).
    static func secondsOfRuns(_ outcomes: [SweepOutcome], notIn readBack: Set<Int>) -> Double {
        outcomes.indices.reduce(0.0) { readBack.contains($1) ? $0 : $0 + outcomes[$1].wall.seconds }
    }

    /// What follows the wall-time line of a resumed sweep or suite.
    static func readBackNote(_ count: Int) -> String {
        count == 0 ? "" : "; \(count) more read back from the journal"
    }

    /// `readBack`: the runs a resume read back from the journal, which took no time here.
    static func print(
        variants: [SweepVariant], titles: [String], outcomes: [SweepOutcome], wall: Duration,
        threads: Int, readBack: Set<Int> = [], outputDirectory: String
    ) {
        Swift.print("")
        printMetrics(variants: variants, titles: titles)
        let passed = outcomes.count { $0.result.passed }
        Swift.print("")
        Swift.print("  runs passed: \(passed) of \(outcomes.count)")
        let wallSeconds = wall.seconds
        let runSeconds = Self.secondsOfRuns(outcomes, notIn: readBack)
        Swift.print("")
        Swift.print("Wall-clock figures (this machine, not deterministic)")
        Swift.print(
            "  wall time \(RunSummaryPrinter.format(wallSeconds, 2)) s for \(RunSummaryPrinter.format(runSeconds, 2)) s of runs on \(threads) threads (\(RunSummaryPrinter.format(wallSeconds > 0 ? runSeconds / wallSeconds : 0, 2))x)\(Self.readBackNote(readBack.count))"
        )
        Swift.print("")
        Swift.print(
            "Results: \(outputDirectory)/results.sqlite, runs.csv, clients.csv, timings.csv, sweep.csv, sweep_paired.csv"
        )
    }

    /// The headline metrics of `variants` (titled `titles`): each variant's mean and 95 %
    /// confidence interval, and, after the first, its paired difference from the first.
    static func printMetrics(variants: [SweepVariant], titles: [String]) {
        let seeds = variants.first?.runs.count ?? 0
        Swift.print(
            "Deterministic results: mean [95% confidence interval] over \(seeds) seeds"
                + (variants.count > 1 ? "; Δ: paired difference from variant 0, seed by seed" : ""))
        for (ordinal, title) in titles.enumerated() {
            Swift.print("  variant \(ordinal): \(title)")
        }
        for (name, label) in headline {
            Swift.print("")
            Swift.print("  \(label)")
            for (ordinal, variant) in variants.enumerated() {
                let summary = Summary.of(SweepCSV.values(of: name, in: variant.runs))
                var line = "    \(ordinal)  " + interval(summary)
                if ordinal > 0, let baseline = variants.first {
                    line =
                        line.padding(toLength: 42, withPad: " ", startingAt: 0)
                        + difference(SweepCSV.differences(of: name, variant.runs, baseline.runs))
                }
                Swift.print(line)
            }
        }
    }

    /// `Δ mean [low, high] (higher in n, lower in m)` of paired differences `pairs`.
    static func difference(_ pairs: [Double]) -> String {
        "Δ " + interval(Summary.of(pairs))
            + " (higher in \(pairs.count { $0 > 0 }), lower in \(pairs.count { $0 < 0 }))"
    }

    /// `mean [low, high]`, with the decimals the magnitude needs.
    static func interval(_ summary: Summary) -> String {
        let decimals = summary.mean.magnitude < 10 && summary.mean != summary.mean.rounded() ? 3 : 1
        return
            "\(RunSummaryPrinter.format(summary.mean, decimals)) [\(RunSummaryPrinter.format(summary.confidenceLow95, decimals)), \(RunSummaryPrinter.format(summary.confidenceHigh95, decimals))]"
    }
}
