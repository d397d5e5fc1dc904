import ArgumentParser
import Foundation
import Measurement
import Simulation

/// `syncsim suite`: the sweeps of a suite file, run together and recorded as one suite, and
/// held sweep by sweep against a baseline's run of the same suite.
public struct SuiteCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "suite",
        abstract:
            "Run a suite of sweeps (a benchmark or regression suite), optionally against a baseline.",
        discussion: """
            A suite file (JSON, see Data/suites/) names sweeps, each with the options of \
            `syncsim sweep`. Every sweep is checked before anything runs; then every run of \
            every sweep runs, --jobs at once, each exactly the run `syncsim sweep` makes with \
            those options. The suite, its sweeps and their runs are appended to \
            DIR/results.sqlite in one transaction. Writes DIR/runs.csv, DIR/clients.csv and \
            DIR/timings.csv (the whole database), DIR/suite.csv (one row per sweep: runs, \
            passes, events, digest), DIR/suite_timings.csv (wall-clock figures, apart) and \
            DIR/sweeps/NAME/sweep.csv and sweep_paired.csv. With --baseline (the results of \
            the same suite run by another build), each sweep is compared run by run with the \
            baseline's sweep of the same name, as `syncsim compare` does: DIR/suite_compare.csv \
            gives each sweep's verdict, DIR/sweeps/NAME/compare.csv and compare_runs.csv the \
            details. Exits 1 when a run fails a check, or with --require-identical when a \
            sweep is not identical to the baseline's (the files are written first). While it \
            runs, DIR/journal-KEY.jsonl keeps every finished run: an interrupted suite is finished \
            by the same command line with --resume. With --shard I/N, only the I-th of N ranges \
            of every sweep's seeds runs; `syncsim combine` makes the N shards' results into the \
            suite one command would have made.
            """
    )

    @Argument(help: "A suite file (JSON; see Data/suites/).")
    public var suite: String

    @Option(
        help: ArgumentHelp(
            "Run only these sweeps of the suite: names separated by commas.",
            valueName: "names"))
    public var only: String?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            """
            Set a field of every sweep's scenario: PATH=VALUE, as for run, before the sweep's \
            own settings (a sweep that sets or varies the field keeps its own). Repeatable: a \
            benchmark suite run on your workload.
            """, valueName: "PATH=VALUE"))
    public var settings: [String] = []

    @Option(
        help: ArgumentHelp(
            """
            The results of this suite run by another build (a results database, or a \
            directory holding results.sqlite): each sweep is compared with the baseline's \
            sweep of the same name.
            """, valueName: "path"))
    public var baseline: String?

    @Flag(
        name: .customLong("require-identical"),
        help: """
            Exit 1 unless every sweep run is identical to the baseline's of the same name and \
            none is new or missing (a regression gate for a change meant to keep results).
            """)
    public var requireIdentical = false

    @Option(
        help: ArgumentHelp(
            "Run only shard I of N: the I-th of N contiguous ranges of every sweep's seeds.",
            discussion: """
                For a suite split over machines: run the same command with --shard 1/N to \
                --shard N/N, each into its own DIR, then `syncsim combine` the N results. N \
                is at most the fewest seeds of a sweep.
                """, valueName: "I/N"))
    public var shard: String?

    @Option(help: "Worlds run at once (1 ... 256). Default: the number of cores.")
    public var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "No progress lines and no tables: the suite line, the verdict and the digest.")
    public var quiet = false

    @Flag(
        help: """
            Finish an interrupted suite: read back the runs DIR/journal-KEY.jsonl holds (the same \
            command line and build) and run only the others.
            """)
    public var resume = false

    public init() {}

    public func validate() throws {
        try CommandSupport.validate(settings: settings)
        try CommandSupport.validate(jobs: jobs)
        if requireIdentical && baseline == nil {
            throw ValidationError(
                "--require-identical compares with a baseline; give --baseline PATH too.")
        }
        if let shard {
            guard SweepShard(shard) != nil else {
                throw ValidationError(
                    "--shard '\(shard)' is not I/N with 1 <= I <= N; e.g. --shard 2/4 for the second of four shards."
                )
            }
            guard baseline == nil else {
                throw ValidationError(
                    "--shard runs part of each sweep, which a baseline's whole sweeps would not match; give --baseline to `syncsim combine`, which makes the shards one suite."
                )
            }
        }
    }

    /// A sweep of the suite, prepared to run.
    struct Entry {
        var spec: SuiteSpec.Sweep
        var prepared: PreparedSweep
        /// Its first job's position among all the suite's jobs.
        var firstJob: Int
    }

    public func run() throws {
        let (spec, bytes) = try loadSuite()
        let selected = try select(spec)
        var entries: [Entry] = []
        var jobsCount = 0
        for sweep in selected {
            let prepared: PreparedSweep
            do {
                prepared = try prepare(sweep)
            } catch let error as ScenarioError {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(2)
            } catch let failure as PreparedSweep.UsageFailure {  // too many shards for its seeds
                FileHandle.standardError.write(
                    Data("\(suite): sweep '\(sweep.name)': \(failure.message)\n".utf8))
                throw ExitCode(64)
            }
            entries.append(Entry(spec: sweep, prepared: prepared, firstJob: jobsCount))
            jobsCount += prepared.jobs.count
        }
        guard jobsCount <= SweepCommand.runsMax else {
            FileHandle.standardError.write(
                Data(
                    "\(suite): the suite's sweeps make \(jobsCount) runs, more than \(SweepCommand.runsMax); run fewer sweeps (--only) or give them fewer seeds.\n"
                        .utf8))
            throw ExitCode(64)
        }
        // The baseline and a journal are read, and the results opened, before anything runs.
        let baselineSuite = try baseline.map { try Self.readBaseline($0, name: spec.name) }
        let allJobs = entries.flatMap(\.prepared.jobs)
        let identity = SweepJournal.Identity(
            command: "suite \(spec.name)", commit: BuildInfo.gitCommit, runs: jobsCount,
            sweeps: entries.map { $0.prepared.journalSweep(name: $0.spec.name) },
            checkpointInterval: 0, timelineSeconds: 0)
        let completed = try SweepJournal.readBack(
            in: outputDirectory, identity: identity, jobs: allJobs, resume: resume)
        let store = try CommandSupport.openStore(outputDirectory)
        let journal = try SweepJournal.writer(
            in: outputDirectory, identity: identity, resume: resume)
        print(
            "suite: name=\(spec.name)\(shard.map { " shard=\($0)" } ?? "") sweeps=\(entries.count) runs=\(jobsCount) jobs=\(jobs) commit=\(BuildInfo.gitCommit) build=\(BuildInfo.configuration)"
        )
        if resume { SweepJournal.announce(completed, of: jobsCount, from: journal) }

        let owner = entries.indices.flatMap { index in
            Array(repeating: index, count: entries[index].prepared.jobs.count)
        }
        let titles = entries.map(\.prepared.titles)
        let names = entries.map(\.spec.name)
        let (quiet, total) = (self.quiet, jobsCount)
        let started = ContinuousClock.now
        let progress = SweepProgress(started: started, total: jobsCount, readBack: completed.count)
        let finished = SweepRunner.run(
            allJobs, threads: jobs, completed: completed, journal: journal
        ) { index, done, outcome in
            guard !quiet else { return }
            let job = allJobs[index]
            let verdict = outcome.result.passed ? "passed" : "FAILED"
            FileHandle.standardError.write(
                Data(
                    "[\(done)/\(total)] \(names[owner[index]]): \(titles[owner[index]][job.variant]), seed \(job.seed): \(verdict), digest \(outcome.result.traceDigest.hex)\(progress.left(done: done))\n"
                        .utf8))
        }
        let wall = ContinuousClock.now - started
        guard let outcomes = finished else { throw SweepJournal.interrupted(journal) }

        let made = entries.map { entry in
            entry.prepared.records(
                Array(outcomes[entry.firstJob..<entry.firstJob + entry.prepared.jobs.count]))
        }
        let digest = SweepCommand.digest(made.map(\.digest.value))
        let record = SuiteRecord(
            name: spec.name, fileHash: RunRecordBuilder.contentHash(bytes),
            gitCommit: BuildInfo.gitCommit, digest: digest.hex,
            sweepNames: entries.map(\.spec.name))
        let (stored, comparisons) = try Self.write(
            record, sweeps: made.map { ($0.sweep, $0.records) }, baseline: baselineSuite,
            fileNames: spec.sweeps.map(\.name), store: store, into: outputDirectory)
        journal.finish()

        if !quiet {
            SuitePrinter.print(
                sweeps: stored, titles: titles, comparisons: comparisons, baseline: baseline,
                outcomes: outcomes, wall: wall, threads: jobs, readBack: Set(completed.keys),
                outputDirectory: outputDirectory)
            if let note = SuitePrinter.baselineNote(baselineSuite?.suite, record) { print(note) }
        }
        if let comparisons {
            print(SuitePrinter.verdictLine(comparisons))
        }
        print("digest=\(digest.hex)")
        var failedAny = false
        for entry in entries {
            let slice = outcomes[entry.firstJob..<entry.firstJob + entry.prepared.jobs.count]
            if entry.prepared.reportFailures(
                Array(slice), name: entry.spec.name, outputDirectory: outputDirectory)
            {
                failedAny = true
            }
        }
        if failedAny { throw ExitCode(1) }
        if requireIdentical, let comparisons,
            comparisons.contains(where: { $0.verdict != .identical })
        {
            throw ExitCode(1)
        }
    }

    // MARK: - Writing the results

    /// Records suite `record` with `sweeps` (in its order) in `store`, and writes its files
    /// into `directory` from what the database then holds (`CommandSupport.writeResults`):
    /// `suite.csv`, `suite_timings.csv`, `sweeps/NAME/sweep.csv` and `sweep_paired.csv`, and
    /// with `baseline` (a suite read back, with its sweeps) `suite_compare.csv` and each
    /// comparable sweep's `compare.csv` and `compare_runs.csv`. `fileNames`: the suite file's
    /// sweeps (a baseline's sweep not among them is `missing`). `combine` writes a combined
    /// suite with it too.
    /// - Returns: the sweeps as stored, and the comparisons with the baseline.
    static func write(
        _ record: SuiteRecord, sweeps: [(sweep: SweepRecord, runs: [RunRecord])],
        baseline: (suite: StoredSuite, sweeps: [SuiteSweep])?, fileNames: [String],
        store: ResultStore, into directory: String
    ) throws -> (stored: [SuiteSweep], comparisons: [SuiteSweepComparison]?) {
        var stored: [SuiteSweep] = []
        var comparisons: [SuiteSweepComparison]?
        try CommandSupport.writeResults(directory, store: store) {
            () throws(MeasurementError) in
            let (suiteId, sweepIds) = try store.insert(suite: record, sweeps: sweeps)
            // Every file is made from what the database holds.
            let suiteStored = StoredSuite(suiteId: suiteId, record: record, sweepIds: sweepIds)
            stored = try store.sweeps(of: suiteStored)
            var files: [(name: String, text: String)] = [
                ("suite.csv", SuiteCSV.summaryText(suite: suiteStored, sweeps: stored))
            ]
            for sweep in stored {
                try OutputDirectory.prepare("\(directory)/sweeps/\(sweep.name)")
                files.append(
                    ("sweeps/\(sweep.name)/sweep.csv", SweepCSV.summaryText(sweep.variants)))
                files.append(
                    ("sweeps/\(sweep.name)/sweep_paired.csv", SweepCSV.pairedText(sweep.variants)))
            }
            if let baseline {
                let matched = SuiteSweepComparison.match(
                    candidate: stored, baseline: baseline.sweeps, fileNames: fileNames)
                comparisons = matched
                files.append(("suite_compare.csv", SuiteCSV.comparisonText(matched)))
                for entry in matched {
                    guard let comparison = entry.comparison,
                        comparison.incomparableReason == nil
                    else { continue }
                    files.append(
                        ("sweeps/\(entry.name)/compare.csv", comparison.differencesText()))
                    files.append(
                        ("sweeps/\(entry.name)/compare_runs.csv", comparison.runsText()))
                }
            }
            files.append(
                (
                    "suite_timings.csv",
                    SuiteCSV.timingsText(
                        suite: suiteStored, sweeps: stored, comparisons: comparisons)
                ))
            return files
        }
        return (stored, comparisons)
    }

    // MARK: - Reading the suite

    private func loadSuite() throws -> (SuiteSpec, [UInt8]) {
        do {
            return try SuiteSpec.load(path: suite)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// The sweeps `--only` names (all without it), in the file's order.
    private func select(_ spec: SuiteSpec) throws -> [SuiteSpec.Sweep] {
        guard let only else { return spec.sweeps }
        let names = only.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let known = spec.sweeps.map(\.name)
        for name in names where !known.contains(name) {
            FileHandle.standardError.write(
                Data(
                    "--only: the suite \(suite) has no sweep '\(name)'; give names of its sweeps, separated by commas: \(known.joined(separator: ", ")).\n"
                        .utf8))
            throw ExitCode(64)
        }
        return spec.sweeps.filter { names.contains($0.name) }
    }

    /// The `syncsim sweep` command of one sweep of the suite, checked as `sweep` checks its
    /// command line, and prepared.
    /// - Throws: `ScenarioError` naming the suite file and the sweep's field, for an option
    ///   `sweep` refuses; `ExitCode(2)`, after printing the scenario's error and which sweep it
    ///   was, for a scenario that cannot be used.
    func prepare(_ sweep: SuiteSpec.Sweep) throws -> PreparedSweep {
        var arguments = ["--seeds", sweep.seeds]
        var fieldOfOption = [("--seeds", "seeds")]
        func add(_ option: String, _ field: String, _ values: [String]) {
            for value in values { arguments += [option, value] }
            fieldOfOption.append((option, field))
        }
        add("--reset-modes", "resetModes", sweep.resetModes.map { [$0] } ?? [])
        add("--backup-intervals", "backupIntervals", sweep.backupIntervals.map { [$0] } ?? [])
        add("--vary", "vary", sweep.vary)
        add("--set", "set", settings + sweep.set)
        add("--clients", "clients", sweep.clients.map { [String($0)] } ?? [])
        add("--duration", "duration", sweep.duration.map { [$0] } ?? [])
        if let shard { arguments += ["--shard", shard] }
        arguments += ["--jobs", String(jobs), "--out", outputDirectory, "--quiet"]
        if let scenario = sweep.scenario { arguments += ["--", scenario] }
        let context = "(in \(suite), \(sweep.field), \"\(sweep.name)\")"
        let command: SweepCommand
        do {
            command = try SweepCommand.parse(arguments)
        } catch {
            let message = SweepCommand.message(for: error)
            let field = fieldOfOption.first { message.contains($0.0) }
            throw invalid(sweep, field: field?.1, problem: message, option: field?.0)
        }
        do {
            return try PreparedSweep.prepare(command)
        } catch let failure as PreparedSweep.UsageFailure {
            if failure.message.hasPrefix("--shard") { throw failure }  // the command line's
            let field = fieldOfOption.first { failure.message.contains($0.0) }
            throw invalid(sweep, field: field?.1, problem: failure.message, option: field?.0)
        } catch {
            // The scenario's own error is printed: say which sweep of the suite it was.
            FileHandle.standardError.write(Data("\(context)\n".utf8))
            throw error
        }
    }

    /// The error of a sweep's option, as an error of the suite file.
    private func invalid(
        _ sweep: SuiteSpec.Sweep, field: String?, problem: String, option: String?
    ) -> ScenarioError {
        var text = problem.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasSuffix(".") { text.removeLast() }
        return ScenarioError(
            code: .outOfRange, file: suite,
            field: field.map { "\(sweep.field).\($0)" } ?? sweep.field, problem: text,
            fix: option.map {
                "correct it: the field takes what `syncsim sweep \($0)` takes (README, \"Suite format\")"
            } ?? "correct the sweep's fields (README, \"Suite format\")")
    }

    // MARK: - The database

    /// The last suite named `name` in the baseline at `path`, with its sweeps.
    static func readBaseline(
        _ path: String, name: String
    ) throws -> (suite: StoredSuite, sweeps: [SuiteSweep]) {
        let databasePath = CompareCommand.databasePath(path)
        do {
            let store = try ResultStore(path: databasePath, access: .readOnly)
            let suite = try store.suite(named: name)
            return (suite, try store.sweeps(of: suite))
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
    }
}

/// The console report of a suite: its sweeps, their wall-clock figures, and how each stands
/// against the baseline.
enum SuitePrinter {
    /// `titles`: each sweep's variants' console titles, in order.
    /// `readBack`: the runs a resume read back from the journal, which took no time here.
    static func print(
        sweeps: [SuiteSweep], titles: [[String]], comparisons: [SuiteSweepComparison]?,
        baseline: String?, outcomes: [SweepOutcome], wall: Duration, threads: Int,
        readBack: Set<Int> = [], outputDirectory: String
    ) {
        let pad = padding(sweeps)
        // Each sweep's headline metrics, as `sweep` prints them: the benchmark's answers.
        for (sweep, titles) in zip(sweeps, titles) {
            let record = sweep.sweep.record
            Swift.print("")
            Swift.print(
                "== \(sweep.name): \(record.scenarioName), \(record.variantLabels.count) variants × \(SweepComparison.range(record.seeds))"
            )
            SweepSummaryPrinter.printMetrics(variants: sweep.variants, titles: titles)
        }
        Swift.print("")
        printSweeps(sweeps, pad: pad)
        Swift.print("")
        Swift.print("Wall-clock figures (this machine, not deterministic)")
        for sweep in sweeps {
            let seconds = sweep.runSeconds
            var line =
                "  \(pad(sweep.name))\(RunSummaryPrinter.format(seconds, 2)) s of runs, \(RunSummaryPrinter.format(seconds > 0 ? Double(sweep.events) / seconds : 0, 0)) events/s"
            if let baseline = comparisons?.first(where: { $0.name == sweep.name })?.baseline,
                baseline.runSeconds > 0
            {
                line +=
                    ", \(RunSummaryPrinter.format(seconds / baseline.runSeconds, 2))x the baseline's \(RunSummaryPrinter.format(baseline.runSeconds, 2)) s"
            }
            Swift.print(line)
        }
        let runSeconds = SweepSummaryPrinter.secondsOfRuns(outcomes, notIn: readBack)
        Swift.print(
            "  wall time \(RunSummaryPrinter.format(wall.seconds, 2)) s for \(RunSummaryPrinter.format(runSeconds, 2)) s of runs on \(threads) threads\(SweepSummaryPrinter.readBackNote(readBack.count))"
        )
        printEnd(
            comparisons: comparisons, baseline: baseline, pad: pad,
            outputDirectory: outputDirectory)
    }

    /// Pads a sweep's name to the width of the longest of `sweeps` (at least 12) and two
    /// spaces, for the columns of the lines below.
    static func padding(_ sweeps: [SuiteSweep]) -> (String) -> String {
        let width = max(12, sweeps.map(\.name.count).max() ?? 0) + 2
        return { $0.padding(toLength: width, withPad: " ", startingAt: 0) }
    }

    /// Each sweep's variants, seeds, passed runs, events and digest.
    static func printSweeps(_ sweeps: [SuiteSweep], pad: (String) -> String) {
        Swift.print("Sweeps (deterministic results)")
        for sweep in sweeps {
            let record = sweep.sweep.record
            Swift.print(
                "  \(pad(sweep.name))\(record.variantLabels.count) variants × \(record.seeds.count) seeds, passed \(sweep.runsPassed) of \(sweep.sweep.runIds.count), \(sweep.events) events, digest \(record.digest)"
            )
        }
    }

    /// The verdicts against `baseline` (when compared), then the results line.
    static func printEnd(
        comparisons: [SuiteSweepComparison]?, baseline: String?, pad: (String) -> String,
        outputDirectory: String
    ) {
        if let comparisons, let baseline {
            Swift.print("")
            Swift.print("Against the baseline \(baseline)")
            for entry in comparisons {
                Swift.print(
                    "  \(pad(entry.name))\(describe(entry, baseline: baseline, candidate: outputDirectory))"
                )
            }
        }
        Swift.print("")
        Swift.print(
            "Results: \(outputDirectory)/results.sqlite, runs.csv, clients.csv, timings.csv, suite.csv, suite_timings.csv\(comparisons == nil ? "" : ", suite_compare.csv"), sweeps/NAME/"
        )
    }

    /// The note when the baseline's suite ran another version of the suite file than
    /// `record`'s (nil when the same, or without a baseline).
    static func baselineNote(_ baseline: StoredSuite?, _ record: SuiteRecord) -> String? {
        guard let baseline, baseline.record.fileHash != record.fileHash else { return nil }
        return
            "note: the baseline ran another version of the suite file (hash \(baseline.record.fileHash), this one \(record.fileHash)); its sweeps were matched by name"
    }

    /// One sweep's verdict, with what it rests on and where to look next (the `compare` line
    /// that prints a changed sweep's details, with the two results directories).
    static func describe(
        _ entry: SuiteSweepComparison, baseline: String, candidate: String
    ) -> String {
        switch entry.verdict {
        case .identical:
            return "identical (\(entry.comparison!.comparedRuns) run pairs)"
        case .new:
            return "new (the baseline's suite has no sweep of that name)"
        case .missing:
            return "missing (only in the baseline's suite)"
        case .incomparable:
            return "incomparable: \(entry.comparison!.incomparableReason!)"
        case .changed:
            let comparison = entry.comparison!
            var parts = [
                "\(comparison.differingRuns.count) of \(comparison.comparedRuns) run pairs differ"
            ]
            let onlyOneSide =
                comparison.baselineOnly.count + comparison.candidateOnly.count
                + comparison.baselineOnlySeeds.count + comparison.candidateOnlySeeds.count
            if onlyOneSide > 0 { parts.append("variants or seeds on one side only") }
            return "changed: " + parts.joined(separator: "; ")
                + "; syncsim compare \(CommandSupport.shellWord(baseline)) \(CommandSupport.shellWord(candidate)) --baseline-sweep \(entry.baseline!.sweep.sweepId) --candidate-sweep \(entry.candidate!.sweep.sweepId) --out DIR"
        }
    }

    /// `verdict=identical|changed sweeps=N identical=I changed=C new=W missing=M
    /// incomparable=X`.
    static func verdictLine(_ comparisons: [SuiteSweepComparison]) -> String {
        let count = { (verdict: SuiteSweepComparison.Verdict) in
            comparisons.count { $0.verdict == verdict }
        }
        let identical = comparisons.allSatisfy { $0.verdict == .identical }
        return
            "verdict=\(identical ? "identical" : "changed") sweeps=\(comparisons.count) identical=\(count(.identical)) changed=\(count(.changed)) new=\(count(.new)) missing=\(count(.missing)) incomparable=\(count(.incomparable))"
    }
}
