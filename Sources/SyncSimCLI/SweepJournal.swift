import ArgumentParser
import Foundation
import Measurement
import Simulation
import Synchronization

/// The journal of a sweep or suite under way: `DIR/journal-KEY.jsonl`, one JSON line per
/// finished run, so that an interrupted sweep (a killed process, a machine that went down,
/// Ctrl-C) resumes where it stopped (`--resume`) instead of starting over. KEY is a hash of
/// what the journal belongs to, so sweeps run at once into one directory keep apart.
///
/// A run's result depends only on its scenario, seed and build, so a run read back from the
/// journal is the run a fresh start would make: a resumed sweep writes the files, the database
/// rows and the digest an uninterrupted one writes, byte for byte (only `timings.csv`, which
/// never was deterministic, holds the wall times the runs took when they ran).
///
/// The first line names what the journal belongs to (`Identity`: the command, the build's
/// commit, each sweep's recorded options and scenario hash, and the per-run files asked for);
/// `--resume` finds the journal by it, and when there is none, names what differs in the
/// others the directory holds. Every further line is one finished run
/// (`Entry`), appended by one `write` as the run ends; a last line cut short (the process died
/// while writing it) is dropped on resume, and that run runs again. The journal is removed
/// once the results are written; while it is there, the same sweep or suite into that
/// directory without `--resume` is refused, so that its runs are never lost by accident.
enum SweepJournal {
    static let formatVersion = 1

    /// The journal of `identity` in `directory`.
    static func path(in directory: String, for identity: Identity) -> String {
        "\(directory)/journal-\(identity.key).jsonl"
    }

    /// The journals in `directory` (any sweep's or suite's), by name.
    static func paths(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix("journal-") && $0.hasSuffix(".jsonl") }.sorted()
            .map { "\(directory)/\($0)" }
    }

    /// What a journal belongs to: equal identities make the same runs.
    struct Identity: Codable, Equatable {
        struct Sweep: Codable, Equatable {
            /// The suite's name for the sweep ("" for `syncsim sweep`).
            var name: String
            /// The sweep's recorded options (`SweepRecord.optionsJSON`).
            var options: String
            var scenarioHash: String
        }

        var syncsimJournal = SweepJournal.formatVersion
        /// "sweep" or "suite NAME".
        var command: String
        var commit: String
        var runs: Int
        var sweeps: [Sweep]
        /// `--checkpoints` and `--timeline` (0: none): they decide what each entry holds.
        var checkpointInterval: UInt64
        var timelineSeconds: UInt64

        /// The journal's first line (no line end).
        var line: Data { (try? SweepJournal.encoder().encode(self)) ?? Data() }

        /// The file name's hash of `line`.
        var key: String { RunRecordBuilder.contentHash(Array(line)) }

        /// The first field that differs from `other`, described for an error.
        func difference(from other: Identity) -> String? {
            if syncsimJournal != other.syncsimJournal {
                return
                    "it is of journal format \(other.syncsimJournal), this build writes \(syncsimJournal)"
            }
            if command != other.command {
                return "it is the journal of `\(other.command)`, not of `\(command)`"
            }
            if commit != other.commit {
                return "it was written by the build of commit \(other.commit), this is \(commit)"
            }
            if sweeps.count != other.sweeps.count {
                return "it has \(other.sweeps.count) sweeps, this command \(sweeps.count)"
            }
            for (mine, theirs) in zip(sweeps, other.sweeps) where mine != theirs {
                let name = mine.name.isEmpty ? "the sweep" : "sweep '\(mine.name)'"
                if mine.name != theirs.name {
                    return "it has sweep '\(theirs.name)' where this command has '\(mine.name)'"
                }
                if mine.scenarioHash != theirs.scenarioHash {
                    return "\(name) had scenario \(theirs.scenarioHash), now \(mine.scenarioHash)"
                }
                return "\(name) had the options \(theirs.options), now \(mine.options)"
            }
            if runs != other.runs { return "it has \(other.runs) runs, this command \(runs)" }
            if checkpointInterval != other.checkpointInterval {
                return "it had --checkpoints \(other.checkpointInterval), now \(checkpointInterval)"
            }
            if timelineSeconds != other.timelineSeconds {
                return "it had --timeline \(other.timelineSeconds) s, now \(timelineSeconds) s"
            }
            return nil
        }
    }

    /// One finished run: its position among the command's runs (job order), what identifies
    /// it, and everything the command writes of it.
    struct Entry: Codable {
        var job: Int
        var seed: UInt64
        var variant: Int
        var wallNanoseconds: Int64
        var result: RunResult
        var timeline: [TimelineSample]
        var checkpoints: [TraceCheckpoint]

        init(job: Int, of planned: SweepPlan.Job, outcome: SweepOutcome) {
            self.job = job
            (seed, variant) = (planned.seed, planned.variant)
            let (seconds, attoseconds) = outcome.wall.components
            wallNanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            (result, timeline, checkpoints) = (
                outcome.result, outcome.timeline, outcome.checkpoints
            )
        }

        var outcome: SweepOutcome {
            SweepOutcome(
                result: result, checkpoints: checkpoints, timeline: timeline,
                wall: .nanoseconds(wallNanoseconds))
        }
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Without `--resume`: refuses to start when `directory` holds the journal of this one,
    /// interrupted, with finished runs (one stopped before its first run ended is started
    /// afresh).
    static func checkNonePending(in directory: String, for identity: Identity)
        throws(MeasurementError)
    {
        let path = path(in: directory, for: identity)
        guard let data = FileManager.default.contents(atPath: path) else { return }
        // Whole lines after the first: finished runs (a last line cut short is not one).
        let whole = data.filter { $0 == UInt8(ascii: "\n") }.count
        if whole > 1 { throw .journalPending(path: path, runs: whole - 1) }
    }

    /// With `--resume`: the runs `identity`'s journal in `directory` holds, by job, after
    /// checking that each entry is the run `jobs` plans at its place. Without that journal,
    /// the first other one there (by name) says what differs; without any, none to resume.
    static func load(
        in directory: String, identity: Identity, jobs: [SweepPlan.Job]
    ) throws(MeasurementError) -> [Int: SweepOutcome] {
        let path = path(in: directory, for: identity)
        guard let data = FileManager.default.contents(atPath: path) else {
            for other in paths(in: directory) {
                _ = try lines(of: other, identity: identity)  // throws what differs
            }
            throw .journalNotFound(path: path)
        }
        let lines = try lines(of: path, data: data, identity: identity)
        let decoder = JSONDecoder()
        var outcomes: [Int: SweepOutcome] = [:]
        for (number, line) in lines.enumerated().dropFirst() {
            guard let entry = try? decoder.decode(Entry.self, from: Data(line)) else {
                throw .journalNotResumable(
                    path: path, reason: "line \(number + 1) is not a finished run")
            }
            guard entry.job >= 0 && entry.job < jobs.count,
                jobs[entry.job].seed == entry.seed && jobs[entry.job].variant == entry.variant,
                entry.result.seed == entry.seed
            else {
                throw .journalNotResumable(
                    path: path,
                    reason:
                        "line \(number + 1) holds run \(entry.job) (variant \(entry.variant), seed \(entry.seed)), which this command does not make there"
                )
            }
            outcomes[entry.job] = entry.outcome
        }
        return outcomes
    }

    /// The whole lines of the journal at `path` (`data`, read when nil), the first checked to
    /// be `identity`'s: what follows the last line end is a line cut short, and dropped.
    private static func lines(of path: String, data: Data? = nil, identity: Identity)
        throws(MeasurementError) -> [Data.SubSequence]
    {
        guard let data = data ?? FileManager.default.contents(atPath: path) else {
            throw .journalNotFound(path: path)
        }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        lines.removeLast()
        guard let first = lines.first else {
            throw .journalNotResumable(path: path, reason: "it has no first line")
        }
        guard let written = try? JSONDecoder().decode(Identity.self, from: Data(first)) else {
            throw .journalNotResumable(
                path: path, reason: "its first line is not a SyncSim journal's")
        }
        if let difference = identity.difference(from: written) {
            throw .journalNotResumable(path: path, reason: difference)
        }
        return lines
    }

    /// Appends entries to a journal from any thread, one whole line per `write`.
    final class Writer: Sendable {
        let path: String
        private let handle: Mutex<FileHandle?>

        /// Starts `directory`'s journal afresh with `identity`'s line, or (`resuming`) goes on
        /// appending to the one there, which ends with a whole line or a line cut short: that
        /// part is cut off first.
        init(in directory: String, identity: Identity, resuming: Bool) throws(MeasurementError) {
            path = SweepJournal.path(in: directory, for: identity)
            do {
                if resuming {
                    let data = FileManager.default.contents(atPath: path) ?? Data()
                    let whole = (data.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
                    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
                    try file.truncate(atOffset: UInt64(whole))
                    try file.seekToEnd()
                    handle = Mutex(file)
                } else {
                    var line = identity.line
                    line.append(UInt8(ascii: "\n"))
                    guard FileManager.default.createFile(atPath: path, contents: line) else {
                        throw MeasurementError.outputNotWritable(
                            path: path, directory: directory, reason: "would not take a new file")
                    }
                    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                    try file.seekToEnd()
                    handle = Mutex(file)
                }
            } catch let error as MeasurementError {
                throw error
            } catch {
                throw .outputWriteFailed(path: path, reason: "\(error)")
            }
        }

        /// Appends `entry`. A journal that cannot be written is reported once and closed: the
        /// sweep goes on, and only a resume after an interruption would miss those runs.
        func append(_ entry: Entry) {
            guard var line = try? SweepJournal.encoder().encode(entry) else { return }
            line.append(UInt8(ascii: "\n"))
            handle.withLock { file in
                guard let current = file else { return }
                do {
                    try current.write(contentsOf: line)
                } catch {
                    FileHandle.standardError.write(
                        Data("warning: \(path): \(error); the journal stops here.\n".utf8))
                    try? current.close()
                    file = nil
                }
            }
        }

        /// Closes and removes the journal: the results it served are written.
        func finish() {
            handle.withLock { file in
                try? file?.close()
                file = nil
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

extension SweepJournal {
    /// For `sweep` and `suite`, before anything is written: with `resume`, the runs the
    /// journal in `directory` holds (checked against `identity` and `jobs`); without, none,
    /// after checking that no interrupted one's journal is there. Exits as `export` does for a
    /// results error (65, or 66 when there is no journal).
    static func readBack(
        in directory: String, identity: Identity, jobs: [SweepPlan.Job], resume: Bool
    ) throws -> [Int: SweepOutcome] {
        do throws(MeasurementError) {
            guard resume else {
                try checkNonePending(in: directory, for: identity)
                return [:]
            }
            return try load(in: directory, identity: identity, jobs: jobs)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(ExportCommand.exitStatus(for: error))
        }
    }

    /// Says on standard error how many of the `total` runs a resume read back from `writer`'s
    /// journal.
    static func announce(_ completed: [Int: SweepOutcome], of total: Int, from writer: Writer) {
        FileHandle.standardError.write(
            Data(
                "resuming: \(completed.count) of \(total) runs read back from \(writer.path)\n".utf8
            ))
    }

    /// The journal's writer, once the results directory is ready (exits 3 when it cannot be
    /// written, as the results).
    static func writer(in directory: String, identity: Identity, resume: Bool) throws -> Writer {
        do throws(MeasurementError) {
            return try Writer(in: directory, identity: identity, resuming: resume)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(3)
        }
    }

    /// What a command stopped by `SweepRunner.stopAfter` prints, and its status: 130, as a
    /// process stopped by Ctrl-C.
    static func interrupted(_ writer: Writer) -> ExitCode {
        FileHandle.standardError.write(
            Data(
                "interrupted: \(writer.path) keeps the finished runs; run the same command line with --resume to finish\n"
                    .utf8))
        return ExitCode(130)
    }
}
