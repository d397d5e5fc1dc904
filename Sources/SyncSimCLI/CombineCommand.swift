import ArgumentParser
import Foundation
import Measurement
import Simulation

/// `syncsim combine`: the shards of one sweep (`sweep --shard I/N`) or of one suite (`suite
/// --shard I/N`), run on one machine or many, made into the sweep or suite that one command
/// would have made.
public struct CombineCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "combine",
        abstract:
            "Combine the shards of a sweep or suite (sweep/suite --shard I/N) into one.",
        discussion: """
            Reads the last sweep of each SHARD (a results database, or a directory holding \
            results.sqlite), checks that they are shards 1/N to N/N of one sweep (the same \
            options, scenario, build and variants, each with its own range of the seeds), and \
            writes the whole sweep to DIR: its runs, in the order one command runs them, in \
            DIR/results.sqlite, with runs.csv, clients.csv, timings.csv, sweep.csv and \
            sweep_paired.csv made from it, and, when the shards ran with --timeline, \
            DIR/timelines/ and sweep_timeline.csv from the shards' run timelines. Every file \
            but timings.csv, and the digest line, are those of the unsharded sweep byte for \
            byte (in a new DIR: run IDs count from 1). The shards are only read. When each \
            SHARD's last results are a suite's (suite --shard I/N), the suite is combined: each \
            of its sweeps as above, recorded as one suite, with the files `syncsim suite` \
            writes (suite.csv, suite_timings.csv, sweeps/NAME/), and, with --baseline, held \
            against the baseline's suite of that name as `syncsim suite --baseline` holds it.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The shards: results databases, or directories holding results.sqlite.",
            valueName: "shard"))
    public var shards: [String]

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Option(
        help: ArgumentHelp(
            """
            Suite shards only: the results of the same suite run whole by another build (a \
            results database, or a directory holding results.sqlite), held sweep by sweep \
            against the combined suite as `syncsim suite --baseline` holds it.
            """, valueName: "path"))
    public var baseline: String?

    @Flag(
        name: .customLong("require-identical"),
        help: "With --baseline: exit 1 unless every sweep is identical to the baseline's.")
    public var requireIdentical = false

    @Flag(help: "Print only the sweep (or suite) line, the verdict line and the digest line.")
    public var quiet = false

    public init() {}

    public func validate() throws {
        guard !shards.isEmpty else {
            throw ValidationError("Give the shards' results: one directory or database per shard.")
        }
        if requireIdentical && baseline == nil {
            throw ValidationError(
                "--require-identical compares with a baseline; give --baseline PATH too.")
        }
    }

    public func run() throws {
        let paths = shards.map(CompareCommand.databasePath)
        let combined: CombinedSweep
        let timelines: [[(file: String, samples: [TimelineSample])]]?
        do {
            var read = [ShardInput]()
            var suites = [(input: ShardInput, suite: StoredSuite, sweeps: [StoredSweep])]()
            for path in paths {
                let store = try ResultStore(path: path, access: .readOnly)
                // The sweeps' records and run IDs alone (`sweep(_:)` would also rebuild their
                // variants from the runs, which `runs()` reads next); `CombinedSweep` checks
                // the grid of run IDs itself.
                let sweeps = try store.sweeps()
                guard let last = sweeps.last else {
                    throw MeasurementError.sweepNotFound(path: path, sweepId: nil, available: [])
                }
                let input = ShardInput(path: path, sweep: last, runs: try store.runs())
                read.append(input)
                // A suite's sweeps are inserted just before it: its last sweep is the file's.
                if let suite = try store.suites().last, suite.sweepIds.last == last.sweepId {
                    suites.append((input, suite, sweeps))
                }
            }
            if !suites.isEmpty {
                guard suites.count == read.count else {
                    let sweep = read.first { input in
                        !suites.contains { $0.input.path == input.path }
                    }!
                    throw MeasurementError.shardsNotCombinable(
                        path: sweep.path,
                        reason:
                            "its last results are a sweep's, but those of \(suites[0].input.path) are a suite's; give the shards of one sweep, or of one suite"
                    )
                }
                try combineSuites(
                    CombinedSuite(suites.map { ($0.input, $0.suite, $0.sweeps) }))
                return
            }
            guard baseline == nil else {
                FileHandle.standardError.write(
                    Data(
                        "--baseline holds a combined suite against a baseline's, and these are the shards of a sweep; combine them, then compare the sweep with `syncsim compare BASELINE DIR`.\n"
                            .utf8))
                throw ExitCode(64)
            }
            combined = try CombinedSweep(read)
            timelines = try Self.timelines(of: combined)
        } catch let error as MeasurementError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
        let record = combined.record
        print(
            "combine: scenario=\(record.scenarioName) shards=\(paths.count) seeds=\(record.seeds.first!)-\(record.seeds.last!) variants=\(record.variantLabels.count) runs=\(combined.runs.count) commit=\(record.gitCommit)"
        )
        let store = try CommandSupport.openStore(outputDirectory)
        try CommandSupport.writeResults(outputDirectory, store: store) {
            () throws(MeasurementError) in
            let sweepId = try store.insert(sweep: record, runs: combined.runs)
            var files = [
                ("sweep.csv", try store.csv(.sweep, sweepId: sweepId)),
                ("sweep_paired.csv", try store.csv(.sweepPaired, sweepId: sweepId)),
            ]
            if let timelines {
                try OutputDirectory.prepare("\(outputDirectory)/timelines")
                for run in timelines.joined() {
                    files.append((run.file, RunCommand.timelineText(run.samples)))
                }
                files.append(
                    (
                        "sweep_timeline.csv",
                        SweepTimeline.text(
                            labels: record.variantLabels,
                            timelines: timelines.map { $0.map(\.samples) })
                    ))
            }
            return files
        }
        if !quiet {
            let failed = combined.runs.filter { run in
                run.metrics.contains { $0.name == "passed" && $0.value == .integer(0) }
            }.count
            print("failed runs: \(failed) of \(combined.runs.count) (see each shard's output)")
            print(
                "Results: \(outputDirectory)/results.sqlite, runs.csv, clients.csv, timings.csv, sweep.csv, sweep_paired.csv"
                    + (timelines == nil ? "" : ", sweep_timeline.csv, timelines/"))
        }
        print("digest=\(record.digest)")
    }
}

extension CombineCommand {
    /// Records the combined suite in `DIR`, with `syncsim suite`'s files, held against
    /// `--baseline`; prints its lines.
    func combineSuites(_ combined: CombinedSuite) throws {
        let record = combined.record
        let runsCount = combined.sweeps.reduce(0) { $0 + $1.runs.count }
        let baselineSuite = try baseline.map {
            try SuiteCommand.readBaseline($0, name: record.name)
        }
        print(
            "combine: suite=\(record.name) shards=\(combined.shardsCount) sweeps=\(combined.sweeps.count) runs=\(runsCount) commit=\(record.gitCommit)"
        )
        let store = try CommandSupport.openStore(outputDirectory)
        let (stored, comparisons) = try SuiteCommand.write(
            record, sweeps: combined.sweeps.map { ($0.record, $0.runs) },
            baseline: baselineSuite, fileNames: record.sweepNames, store: store,
            into: outputDirectory)
        if !quiet {
            let pad = SuitePrinter.padding(stored)
            print("")
            SuitePrinter.printSweeps(stored, pad: pad)
            SuitePrinter.printEnd(
                comparisons: comparisons, baseline: baseline, pad: pad,
                outputDirectory: outputDirectory)
            if let note = SuitePrinter.baselineNote(baselineSuite?.suite, record) { print(note) }
        }
        if let comparisons { print(SuitePrinter.verdictLine(comparisons)) }
        print("digest=\(record.digest)")
        if requireIdentical, let comparisons,
            comparisons.contains(where: { $0.verdict != .identical })
        {
            throw ExitCode(1)
        }
    }
}

extension CombineCommand {
    /// The run timelines the shards' `sweep --timeline` wrote (`timelines/` beside each
    /// shard's database), per variant in seed order, or nil when no shard has any.
    /// - Throws: `MeasurementError.shardsNotCombinable` (312) when only some runs have one,
    ///   when one is not a timeline this build writes, or when the intervals differ.
    static func timelines(of combined: CombinedSweep) throws(MeasurementError)
        -> [[(file: String, samples: [TimelineSample])]]?
    {
        let variants = combined.record.variantLabels.count
        var result = [[(file: String, samples: [TimelineSample])]](repeating: [], count: variants)
        var missing: (path: String, file: String)?
        var interval: UInt64?
        for variant in 0..<variants {
            for shard in combined.shards {
                let parent = (shard.path as NSString).deletingLastPathComponent
                let directory = parent.isEmpty ? "." : parent
                for seed in shard.seeds {
                    let file = SweepTimeline.file(variant: variant, seed: seed)
                    guard let data = FileManager.default.contents(atPath: "\(directory)/\(file)")
                    else {
                        missing = missing ?? (shard.path, file)
                        continue
                    }
                    guard let samples = SweepTimeline.parse(String(decoding: data, as: UTF8.self))
                    else {
                        throw .shardsNotCombinable(
                            path: shard.path,
                            reason: "\(directory)/\(file) is not a run timeline this build writes")
                    }
                    // Every row but the last (the rest of the run) ends on a multiple of the
                    // interval, the same for every run.
                    if samples.count > 1 {
                        let step = samples[0].endNs
                        if interval == nil { interval = step }
                        guard step == interval,
                            samples.dropLast().enumerated().allSatisfy({
                                $1.endNs == UInt64($0 + 1) * step
                            })
                        else {
                            throw .shardsNotCombinable(
                                path: shard.path,
                                reason:
                                    "\(directory)/\(file) has another --timeline interval than the other runs"
                            )
                        }
                    }
                    result[variant].append((file, samples))
                }
            }
        }
        let found = result.reduce(0) { $0 + $1.count }
        if found == 0 { return nil }
        if let missing {
            throw .shardsNotCombinable(
                path: missing.path,
                reason:
                    "its directory lacks \(missing.file), which other runs of the sweep have (sweep --timeline); run every shard with the same --timeline, or none"
            )
        }
        // Each timeline must be its run's (not left by an earlier sweep into the same
        // directory): its counts add up to the run's. `runs` is in the same order.
        for (run, timeline) in zip(combined.runs, result.joined()) {
            for (figure, metric) in [
                ("writes_made", "writesMade"), ("uploads", "uploads"), ("downloads", "downloads"),
            ] {
                let column = TimelineSample.figureColumns.firstIndex(of: figure)!
                let sum = timeline.samples.reduce(UInt64(0)) { $0 + $1.figures[column] }
                let recorded = run.metrics.first { $0.name == metric }?.value
                guard recorded == .integer(Int64(sum)) else {
                    throw .shardsNotCombinable(
                        path: combined.shards.first { $0.seeds.contains(run.seed) }?.path ?? "",
                        reason:
                            "\(timeline.file) is not the timeline of its run (its \(figure) add up to \(sum)); it was left by another sweep into that directory"
                    )
                }
            }
        }
        return result
    }
}

/// One shard as read back: its database path, its last sweep, and every run it holds.
struct ShardInput {
    var path: String
    var sweep: StoredSweep
    var runs: [StoredRun]
}

/// The sweep that the shards make together: its record and its runs in the order one
/// `syncsim sweep` runs them (variant by variant, seeds ascending).
struct CombinedSweep {
    var record: SweepRecord
    var runs: [RunRecord]
    /// Each shard's database and the seeds it ran, in shard order.
    var shards: [(path: String, seeds: [UInt64])] = []

    /// Checks that `shards` are shards 1/N ... N/N of one sweep, in any order, and joins them.
    /// - Throws: `MeasurementError.shardsNotCombinable` (312) naming the shard and the field
    ///   that disagree.
    init(_ shards: [ShardInput]) throws(MeasurementError) {
        let first = shards[0]
        func fail(_ reason: String) -> MeasurementError {
            .shardsNotCombinable(path: first.path, reason: reason)
        }
        var parsed = [(input: ShardInput, options: SweepOptions, shard: SweepShard)]()
        for input in shards {
            guard
                let options = try? JSONDecoder().decode(
                    SweepOptions.self, from: Data(input.sweep.record.optionsJSON.utf8))
            else {
                throw fail("the sweep of \(input.path) has options this build cannot read")
            }
            guard let text = options.shard, let shard = SweepShard(text) else {
                throw fail("the sweep of \(input.path) is not a shard (it was run without --shard)")
            }
            parsed.append((input, options, shard))
        }
        parsed.sort { $0.shard.index < $1.shard.index }
        let count = parsed[0].shard.count
        guard parsed.allSatisfy({ $0.shard.count == count }) else {
            throw fail(
                "their shard counts differ ("
                    + parsed.map { "\($0.input.path): \($0.shard.text)" }.joined(separator: ", ")
                    + ")")
        }
        let indices = parsed.map(\.shard.index)
        guard indices == Array(1...count) else {
            let missing = (1...count).filter { !indices.contains($0) }
            let repeated = Set(indices.filter { index in indices.filter { $0 == index }.count > 1 })
            throw fail(
                (missing.isEmpty
                    ? ""
                    : "shards \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) missing")
                    + (missing.isEmpty || repeated.isEmpty ? "" : "; ")
                    + (repeated.isEmpty
                        ? ""
                        : "shards \(repeated.sorted().map { "\($0)/\(count)" }.joined(separator: ", ")) given twice")
            )
        }
        var whole = parsed[0].options
        whole.shard = nil
        let reference = parsed[0].input.sweep.record
        for (input, options, _) in parsed.dropFirst() {
            var unsharded = options
            unsharded.shard = nil
            let record = input.sweep.record
            let field: String? =
                unsharded != whole
                ? "options (\(record.optionsJSON))"
                : record.scenarioHash != reference.scenarioHash
                    ? "scenario (hash \(record.scenarioHash), not \(reference.scenarioHash))"
                    : record.gitCommit != reference.gitCommit
                        ? "build (commit \(record.gitCommit), not \(reference.gitCommit))"
                        : record.variantLabels != reference.variantLabels ? "variants" : nil
            if let field {
                throw fail(
                    "the sweep of \(input.path) differs from that of \(parsed[0].input.path) in its \(field)"
                )
            }
        }
        let bounds = whole.seeds.split(separator: "-")
        guard bounds.count == 2, let low = UInt64(bounds[0]), let high = UInt64(bounds[1]),
            low <= high
        else {
            throw fail("the seed range '\(whole.seeds)' in the options is not A-B")
        }
        let seeds = Array(low...high)
        let variants = reference.variantLabels.count
        var byVariant = [[RunRecord]](repeating: [], count: variants)
        for (input, _, shard) in parsed {
            let expected = Array(seeds[shard.range(of: seeds.count)])
            self.shards.append((path: input.path, seeds: expected))
            guard input.sweep.record.seeds == expected else {
                throw fail(
                    "shard \(shard.text) of \(input.path) ran seeds \(SweepComparison.range(input.sweep.record.seeds)), not \(SweepComparison.range(expected))"
                )
            }
            // Lookups only: the runs come out in the sweep's order.
            var byId = [Int64: RunRecord]()
            for stored in input.runs { byId[stored.runId] = stored.record }
            let perVariant = expected.count
            guard input.sweep.runIds.count == variants * perVariant else {
                throw fail(
                    "the sweep of \(input.path) holds \(input.sweep.runIds.count) runs, not "
                        + "\(variants) variants × \(perVariant) seeds")
            }
            for (offset, runId) in input.sweep.runIds.enumerated() {
                guard let run = byId[runId] else {
                    throw fail("\(input.path) lost run \(runId) of its sweep")
                }
                byVariant[offset / perVariant].append(run)
            }
        }
        runs = byVariant.flatMap { $0 }
        // One commit built by two toolchains is two builds: their runs may differ.
        if let toolchain = runs.first?.toolchain,
            let other = runs.first(where: { $0.toolchain != toolchain })
        {
            throw fail(
                "its runs were built by two toolchains (\(toolchain) and \(other.toolchain))")
        }
        var traceDigests = [UInt64]()
        for run in runs {
            guard let value = UInt64(run.traceDigest, radix: 16) else {
                throw fail("a run of seed \(run.seed) has the trace digest '\(run.traceDigest)'")
            }
            traceDigests.append(value)
        }
        let digest = SweepCommand.digest(traceDigests)
        let options: String
        do {
            options = try RunRecord.canonicalJSON(whole)
        } catch {
            throw fail("its options cannot be written again (\(error))")
        }
        record = SweepRecord(
            scenarioName: reference.scenarioName, scenarioHash: reference.scenarioHash,
            optionsJSON: options, gitCommit: reference.gitCommit, digest: digest.hex,
            seeds: seeds, variantLabels: reference.variantLabels)
    }
}

/// The suite that the shards of one `syncsim suite --shard` make together: each of its sweeps
/// combined (`CombinedSweep`), and its record with the digest of the whole suite.
struct CombinedSuite {
    var record: SuiteRecord
    var sweeps: [CombinedSweep]
    var shardsCount: Int

    /// Checks that `shards` (each a database's path and last sweep, its last suite, and its
    /// sweeps) are shards of one suite: the same name, file, build and sweeps, each sweep
    /// combined as `CombinedSweep` combines a sweep's shards.
    /// - Throws: `MeasurementError.shardsNotCombinable` (312) naming the shard, and the sweep
    ///   or field that disagrees.
    init(
        _ shards: [(input: ShardInput, suite: StoredSuite, sweeps: [StoredSweep])]
    ) throws(MeasurementError) {
        let first = shards[0].suite.record
        for (input, suite, _) in shards.dropFirst() {
            let other = suite.record
            let field: String? =
                other.name != first.name
                ? "name ('\(other.name)', not '\(first.name)')"
                : other.fileHash != first.fileHash
                    ? "suite file (hash \(other.fileHash), not \(first.fileHash))"
                    : other.gitCommit != first.gitCommit
                        ? "build (commit \(other.gitCommit), not \(first.gitCommit))"
                        : other.sweepNames != first.sweepNames
                            ? "sweeps (\(other.sweepNames.joined(separator: ", ")), not \(first.sweepNames.joined(separator: ", ")); run every shard with the same --only)"
                            : nil
            if let field {
                throw .shardsNotCombinable(
                    path: input.path,
                    reason:
                        "its suite differs from that of \(shards[0].input.path) in its \(field)")
            }
        }
        var sweeps: [CombinedSweep] = []
        for (position, name) in first.sweepNames.enumerated() {
            var inputs: [ShardInput] = []
            for (input, suite, stored) in shards {
                let sweepId = suite.sweepIds[position]
                guard let sweep = stored.first(where: { $0.sweepId == sweepId }) else {
                    throw .shardsNotCombinable(
                        path: input.path, reason: "its suite's sweep '\(name)' is not in it")
                }
                inputs.append(ShardInput(path: input.path, sweep: sweep, runs: input.runs))
            }
            do throws(MeasurementError) {
                sweeps.append(try CombinedSweep(inputs))
            } catch .shardsNotCombinable(let path, let reason) {
                throw .shardsNotCombinable(path: path, reason: "sweep '\(name)': \(reason)")
            }
        }
        var digests: [UInt64] = []
        for sweep in sweeps {
            guard let value = UInt64(sweep.record.digest, radix: 16) else {
                throw .shardsNotCombinable(
                    path: shards[0].input.path,
                    reason: "a sweep has the digest '\(sweep.record.digest)'")
            }
            digests.append(value)
        }
        record = SuiteRecord(
            name: first.name, fileHash: first.fileHash, gitCommit: first.gitCommit,
            digest: SweepCommand.digest(digests).hex, sweepNames: first.sweepNames)
        self.sweeps = sweeps
        shardsCount = shards.count
    }
}
