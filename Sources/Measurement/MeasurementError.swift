//! Errors of the results database and of the files written from it.
//!
//! Every case has a stable numeric code (301 ...), names the file or path involved, and ends its
//! message with a remedy. Codes are never renumbered or reused; new cases are appended.
//! When SQLite is the cause, the GRDB `DatabaseError` is kept in the case (and in `databaseError`)
//! so that callers can still match it by its result code.
//! Misuse by the program itself (a NaN metric, a metric name that is not lowerCamelCase) is a
//! programmer error and traps with a precondition instead.

import GRDB

/// A failure of the results database or of a results file, with a stable code and a remedy.
public enum MeasurementError: Error, Sendable, CustomStringConvertible {
    /// 301: the database was migrated by a newer SyncSim (it records migrations this build does
    /// not know).
    case schemaTooNew(path: String, unknownMigrations: [String])
    /// 302: the file is not an SQLite database at all (SQLite: "file is not a database").
    case notADatabase(path: String, cause: DatabaseError)
    /// 303: the file is an SQLite database whose pages are damaged.
    case databaseCorrupt(path: String, detail: String, cause: DatabaseError?)
    /// 304: a database that must exist (for export) does not.
    case databaseNotFound(path: String)
    /// 305: an older results database opened read-only: its schema lacks migrations this build
    /// needs.
    case schemaTooOld(path: String, missingMigrations: [String])
    /// 306: any other SQLite failure (I/O error, read-only file, busy, constraint violation).
    /// Nothing of the failed operation was written: each write is one transaction.
    case databaseFailed(path: String, operation: String, cause: DatabaseError)
    /// 307: the directory of an output file does not exist or cannot be written.
    case outputNotWritable(path: String, directory: String, reason: String)
    /// 308: writing, syncing or renaming an output file failed after it was started. The target
    /// is unchanged and the temporary file has been removed.
    case outputWriteFailed(path: String, reason: String)
    /// 309: an SQLite database that is not a SyncSim results database (it has tables but no
    /// SyncSim migrations), so it is neither read nor changed.
    case foreignDatabase(path: String)
    /// 310: the sweep asked for is not in the database (`sweepId` nil: it holds no sweep at
    /// all); `available` lists the sweeps it holds.
    case sweepNotFound(path: String, sweepId: Int64?, available: [Int64])
    /// 311: two sweeps share no variant, or no seed, so no run of one can be compared with a
    /// run of the other (`path` is the baseline's database).
    case sweepsNotComparable(path: String, candidate: String, reason: String)
    /// 312: the sweeps given to `syncsim combine` are not the shards of one sweep (`path` is
    /// the first shard's database; `reason` says which shard and how).
    case shardsNotCombinable(path: String, reason: String)
    /// 313: the run asked for is not in the database (`runId` nil: it holds no run at all);
    /// `lastRunId` is its last run.
    case runNotFound(path: String, runId: Int64?, lastRunId: Int64?)
    /// 314: two runs of different seeds, which `syncsim compare` does not hold against each
    /// other (`path` is the baseline's database).
    case runsNotComparable(path: String, candidate: String, reason: String)
    /// 315: `export --format svg --metric NAME` names a metric that the sweep's runs do not
    /// have; `available` lists theirs (snake_case).
    case metricNotFound(path: String, metric: String, available: [String])
    /// 316: a timeline file to draw (`export --timeline`) does not exist.
    case timelineNotFound(path: String)
    /// 317: the file is not a timeline `syncsim run` or `sweep` writes (`reason` says how).
    case notATimeline(path: String, reason: String)
    /// 318: `export --timeline PATH --metric NAME` names a column the timeline does not have;
    /// `available` lists its figure columns.
    case timelineColumnNotFound(path: String, column: String, available: [String])
    /// 319: `export --timeline PATH --variants LIST` names a variant the sweep's timeline does
    /// not have; `available` lists its variants (none: a run's timeline, which has none).
    case timelineVariantNotFound(path: String, variant: Int, available: [String])
    /// 320: the database holds no such suite (`wanted`: "named 'x'" or its id), or none.
    case suiteNotFound(path: String, wanted: String, available: [String])
    /// 321: `--resume` found no journal of this sweep or suite, run by this build, but another
    /// (`DIR/journal-KEY.jsonl`), or a file so named that is not one, or this one's has a
    /// damaged line (`reason` says which and how).
    case journalNotResumable(path: String, reason: String)
    /// 322: `--resume` found no journal to resume in the results directory.
    case journalNotFound(path: String)
    /// 323: a sweep or suite without `--resume` found the journal of an interrupted one, with
    /// `runs` finished runs that starting over would lose.
    case journalPending(path: String, runs: Int)

    /// The stable numeric code of this error. Never renumbered; new codes are appended.
    public var code: UInt16 {
        switch self {
        case .schemaTooNew: 301
        case .notADatabase: 302
        case .databaseCorrupt: 303
        case .databaseNotFound: 304
        case .schemaTooOld: 305
        case .databaseFailed: 306
        case .outputNotWritable: 307
        case .outputWriteFailed: 308
        case .foreignDatabase: 309
        case .sweepNotFound: 310
        case .sweepsNotComparable: 311
        case .shardsNotCombinable: 312
        case .runNotFound: 313
        case .runsNotComparable: 314
        case .metricNotFound: 315
        case .timelineNotFound: 316
        case .notATimeline: 317
        case .timelineColumnNotFound: 318
        case .timelineVariantNotFound: 319
        case .suiteNotFound: 320
        case .journalNotResumable: 321
        case .journalNotFound: 322
        case .journalPending: 323
        }
    }

    /// The file or directory the error is about.
    public var path: String {
        switch self {
        case .schemaTooNew(let path, _), .notADatabase(let path, _),
            .databaseCorrupt(let path, _, _), .databaseNotFound(let path),
            .schemaTooOld(let path, _), .databaseFailed(let path, _, _),
            .outputNotWritable(let path, _, _), .outputWriteFailed(let path, _),
            .foreignDatabase(let path), .sweepNotFound(let path, _, _),
            .sweepsNotComparable(let path, _, _), .shardsNotCombinable(let path, _),
            .runNotFound(let path, _, _), .runsNotComparable(let path, _, _),
            .metricNotFound(let path, _, _), .timelineNotFound(let path),
            .notATimeline(let path, _), .timelineColumnNotFound(let path, _, _),
            .timelineVariantNotFound(let path, _, _), .suiteNotFound(let path, _, _),
            .journalNotResumable(let path, _), .journalNotFound(let path),
            .journalPending(let path, _):
            path
        }
    }

    /// The SQLite error underneath, when there is one (match it by `resultCode`).
    public var databaseError: DatabaseError? {
        switch self {
        case .notADatabase(_, let cause), .databaseFailed(_, _, let cause): cause
        case .databaseCorrupt(_, _, let cause): cause
        default: nil
        }
    }

    /// What went wrong, naming the path, followed by what to do about it.
    public var message: String {
        switch self {
        case .schemaTooNew(let path, let unknown):
            "\(path) was written by a newer SyncSim (unknown migrations: "
                + "\(unknown.joined(separator: ", "))). "
                + "Use the SyncSim version that wrote it, or point --database at another file."
        case .notADatabase(let path, let cause):
            "\(path) is not a SyncSim results database (SQLite said: \(sqliteSaid(cause))). "
                + "Point --database at a results file written by `syncsim run`, "
                + "or delete it to start over."
        case .databaseCorrupt(let path, let detail, _):
            "\(path) is a damaged SQLite database (\(detail)). "
                + "Restore it from a copy, or delete it and re-run the simulations to start over."
        case .databaseNotFound(let path):
            "\(path) does not exist. "
                + "Point --database at a results file written by `syncsim run`."
        case .schemaTooOld(let path, let missing):
            "\(path) was written by an older SyncSim (missing migrations: "
                + "\(missing.joined(separator: ", "))). "
                + "Open it once for writing (for example with `syncsim run --database \(path)`) "
                + "to upgrade it, then export again."
        case .databaseFailed(let path, let operation, let cause):
            "\(path): \(operation) failed (SQLite said: \(sqliteSaid(cause))); "
                + "nothing of it was written. "
                + "Check that the file and its directory are writable and the disk is not full, "
                + "then try again."
        case .outputNotWritable(let path, let directory, let reason):
            "Cannot write \(path): the directory \(directory) \(reason). "
                + "Choose an output path in an existing, writable directory, "
                + "or create the directory or fix its permissions."
        case .outputWriteFailed(let path, let reason):
            "Writing \(path) failed (\(reason)); the file was left as it was. "
                + "Check free disk space and that the path is not a directory, then try again."
        case .foreignDatabase(let path):
            "\(path) is an SQLite database but not a SyncSim results database "
                + "(it has tables but no SyncSim migrations); it was left untouched. "
                + "Point --database at a results file written by `syncsim run`, or at a new file."
        case .sweepNotFound(let path, let sweepId, let available):
            if let sweepId {
                "\(path) holds no sweep \(sweepId) (its sweeps: "
                    + (available.isEmpty
                        ? "none" : available.map(String.init).joined(separator: ", "))
                    + "). Give one of those to --sweep; `syncsim export --table sweeps` lists them."
            } else {
                "\(path) holds no sweep: only `syncsim sweep` records one (since 2026-11-27). "
                    + "Run `syncsim sweep --out DIR` and use DIR/results.sqlite, "
                    + "or export this file's runs with --table runs."
            }
        case .sweepsNotComparable(let path, let candidate, let reason):
            "The sweeps of \(path) and \(candidate) cannot be compared: \(reason). "
                + "Run the baseline's sweep again with the candidate build (its options are in "
                + "`syncsim export --table sweeps`), or choose other sweeps with --baseline-sweep "
                + "and --candidate-sweep."
        case .shardsNotCombinable(let path, let reason):
            "The results of \(path) and the others given are not the shards of one sweep or "
                + "suite: \(reason). Give every shard (1/N to N/N) of one `syncsim sweep ... "
                + "--shard I/N` or `syncsim suite ... --shard I/N` command line, each run by the "
                + "same build with the same options."
        case .runNotFound(let path, let runId, let lastRunId):
            if let runId {
                "\(path) holds no run \(runId) (its runs: "
                    + (lastRunId.map { "1 to \($0)" } ?? "none")
                    + "). Give one of those; `syncsim export --table runs` lists them."
            } else {
                "\(path) holds no run. Give the results of `syncsim run --out DIR`: DIR or "
                    + "DIR/results.sqlite."
            }
        case .runsNotComparable(let path, let candidate, let reason):
            "The runs of \(path) and \(candidate) cannot be compared: \(reason). Run the "
                + "baseline's seed with the candidate build (`syncsim run --seed N`), or choose "
                + "other runs with --baseline-run and --candidate-run."
        case .metricNotFound(let path, let metric, let available):
            "The sweep in \(path) has no metric '\(metric)'. Give one of its metrics to "
                + "--metric, as sweep.csv names them: " + available.joined(separator: ", ") + "."
        case .timelineNotFound(let path):
            "\(path) does not exist. Point --timeline at a timeline.csv written by `syncsim run "
                + "--timeline I`, or a sweep_timeline.csv written by `syncsim sweep --timeline I`."
        case .notATimeline(let path, let reason):
            "\(path) is not a timeline SyncSim writes: \(reason). Point --timeline at a "
                + "timeline.csv (`syncsim run --timeline I`) or a sweep_timeline.csv (`syncsim "
                + "sweep --timeline I`), as written."
        case .timelineColumnNotFound(let path, let column, let available):
            "\(path) has no figure column '\(column)'. Give one of its columns to --metric: "
                + available.joined(separator: ", ") + "."
        case .timelineVariantNotFound(let path, let variant, let available):
            available.isEmpty
                ? "\(path) is a run's timeline, with no variants (asked for \(variant)). "
                    + "Drop --variants, or give a sweep_timeline.csv."
                : "\(path) has no variant \(variant). Give --variants from its variants: "
                    + available.joined(separator: ", ") + "."
        case .suiteNotFound(let path, let wanted, let available):
            "\(path) holds no suite \(wanted) (its suites: "
                + (available.isEmpty ? "none" : available.joined(separator: ", "))
                + "). Give the results of `syncsim suite` run with that suite file (for "
                + "--baseline, by the baseline build), or a suite_id `export --table suites` lists."
        case .journalNotResumable(let path, let reason):
            "\(path) cannot be resumed by this command: \(reason). Resume with the command line "
                + "and the build that started it (the file's first line names them), or remove "
                + "the file to start over (its finished runs are then lost)."
        case .journalNotFound(let path):
            "\(path) does not exist: no interrupted sweep or suite to resume there. Give --out "
                + "the directory of the interrupted one, or leave out --resume to start afresh."
        case .journalPending(let path, let runs):
            "\(path) holds \(runs) finished run\(runs == 1 ? "" : "s") of an interrupted sweep "
                + "or suite, which starting afresh would lose. Run the same command line with "
                + "--resume to finish it, or remove the file to start over."
        }
    }

    /// `error 302: <message>`.
    public var description: String { "error \(code): \(message)" }
}

/// The SQLite message of an error, without GRDB's SQL and arguments (which are noise to a user).
private func sqliteSaid(_ error: DatabaseError) -> String {
    error.message ?? "result code \(error.extendedResultCode.rawValue)"
}
