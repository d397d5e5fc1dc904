import ArgumentParser
import Foundation
import Measurement

/// `syncsim export`: writes one table of a results database as CSV, one metric of a sweep
/// as an SVG chart, or one column of a timeline file as an SVG chart over simulated time.
///
/// The command only parses its arguments and calls `Measurement`. Failures print the
/// `MeasurementError` (code, path, remedy) to standard error and exit with a sysexits status:
/// 65 for a file that is not a usable results database or lacks the sweep asked for, 66 for a
/// missing one, 73 for an output path that cannot be created, 74 for an I/O failure. A timeline
/// file is read the same way: 66 when missing, 65 when it is not one or lacks the column.
public struct ExportCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Write a table of a results database as CSV, or a sweep's metric or a timeline's column as SVG.",
        discussion: """
            The runs and clients tables hold deterministic figures only: the same seed and \
            scenario give byte-identical rows. Wall-clock figures are in the timings table alone. \
            CSV follows RFC 4180 (CRLF line ends, one header row); docs/results.md lists every \
            column and its unit. With --format svg, --table sweep or sweep_paired and --metric \
            NAME, writes a chart of that metric instead: every seed's value per variant (or its \
            difference from variant 0), with the mean and its 95 % confidence interval, the \
            numbers of sweep.csv and sweep_paired.csv. With --timeline FILE (a timeline.csv or \
            sweep_timeline.csv) and --metric COLUMN instead of --database, writes a chart of \
            that column over simulated time: a line for the run, or for each variant's mean, \
            with the intervals where faults fired marked; --from and --to narrow it.
            """
    )

    /// Output formats: CSV for any table, SVG for one metric of a sweep table.
    public enum Format: String, ExpressibleByArgument, CaseIterable, Sendable {
        case csv, svg
    }

    /// The tables of a results database that can be exported.
    public enum Table: String, ExpressibleByArgument, CaseIterable, Sendable {
        case runs, clients, timings, sweep
        case sweepPaired = "sweep_paired"
        case sweeps, suite, suites

        /// The run table of that name, or nil.
        var resultTable: ResultTable? { ResultTable(rawValue: rawValue) }

        /// The sweep table of that name, or nil.
        var sweepTable: SweepTable? { SweepTable(rawValue: rawValue) }

        /// The suite table of that name, or nil.
        var suiteTable: SuiteTable? { SuiteTable(rawValue: rawValue) }
    }

    @Option(
        help: ArgumentHelp(
            "The results database written by `syncsim run`, `sweep` or `suite`.",
            valueName: "path"))
    public var database: String?

    @Option(
        help: ArgumentHelp(
            "Instead of --database: a timeline.csv or sweep_timeline.csv to draw a column of (--format svg --metric COLUMN).",
            valueName: "path"))
    public var timeline: String?

    @Option(
        help: ArgumentHelp(
            "With --timeline: draw from this simulated time on (seconds, or a number with s, m, h or d; 0: the start).",
            valueName: "time"))
    public var from: String?

    @Option(
        help: ArgumentHelp(
            "With --timeline: draw up to this simulated time.", valueName: "time"))
    public var to: String?

    @Option(
        help: ArgumentHelp(
            "With --timeline of a sweep_timeline.csv: draw only these variants (e.g. 0,1,2).",
            valueName: "list"))
    public var variants: String?

    @Option(help: "The output format.")
    public var format: Format = .csv

    @Option(
        help: """
            The table to write: runs (one row per run), clients (one row per client of a run), \
            timings (wall-clock figures, not deterministic), sweep or sweep_paired (the \
            statistics of one sweep, as its sweep.csv and sweep_paired.csv), sweeps (one row \
            per sweep), suite (one suite's suite.csv) or suites (one row per sweep of every \
            suite).
            """)
    public var table: Table = .runs

    @Option(
        help: ArgumentHelp(
            "With --table sweep or sweep_paired: the sweep (its sweep_id). Default: the last one.",
            valueName: "id"))
    public var sweep: Int64?

    @Option(
        help: ArgumentHelp(
            "With --table suite: the suite (its suite_id). Default: the last one.",
            valueName: "id"))
    public var suite: Int64?

    @Option(
        help: ArgumentHelp(
            "With --format svg: the metric to draw, as sweep.csv names it (snake_case); with --timeline, the column (e.g. clients_in_reset, cohort0_clients_in_reset).",
            valueName: "name"))
    public var metric: String?

    @Option(
        help: ArgumentHelp(
            "Write to this file, atomically, instead of standard output.", valueName: "path"))
    public var output: String?

    public init() {}

    public func validate() throws {
        if let timeline {
            if database != nil {
                throw ValidationError(
                    "--timeline \(timeline) draws a timeline file, not a database: drop --database, or --timeline."
                )
            }
            if format != .svg || metric == nil {
                throw ValidationError(
                    "--timeline draws one column as SVG: add --format svg and --metric COLUMN (e.g. clients_in_reset)."
                )
            }
            if table != .runs || sweep != nil || suite != nil {
                throw ValidationError(
                    "--table, --sweep and --suite read a database; a timeline file has one table: drop them."
                )
            }
            _ = try Self.variantList(variants)
            let (start, end) = (try Self.time(from, "--from"), try Self.time(to, "--to"))
            if let start, let end, start >= end {
                throw ValidationError(
                    "--from \(from!) is not before --to \(to!): give a window that ends after it starts."
                )
            }
            return
        }
        if from != nil || to != nil || variants != nil {
            throw ValidationError(
                "--from, --to and --variants apply to --timeline only; add it, or drop them.")
        }
        guard database != nil else {
            throw ValidationError(
                "Give --database PATH (a results database), or --timeline PATH (a timeline file to draw)."
            )
        }
        if format == .svg && (table != .sweep && table != .sweepPaired || metric == nil) {
            throw ValidationError(
                "--format svg draws one metric of a sweep: give --table sweep or sweep_paired and --metric NAME (a column of sweep.csv's metric rows, e.g. writes_lost_to_restore)."
            )
        }
        if metric != nil && format != .svg {
            throw ValidationError(
                "--metric applies to --format svg only; add it, or drop --metric.")
        }
        if let sweep, table != .sweep && table != .sweepPaired {
            throw ValidationError(
                "--sweep \(sweep) applies to --table sweep or sweep_paired only; drop it, or choose one of those tables."
            )
        }
        if let suite, table != .suite {
            throw ValidationError(
                "--suite \(suite) applies to --table suite only; drop it, or add --table suite.")
        }
    }

    public func run() throws {
        let (start, end) = (try Self.time(from, "--from"), try Self.time(to, "--to"))
        let only = try Self.variantList(variants)
        do throws(MeasurementError) {
            let text: String
            if let timeline, let metric {
                text = try Self.timelineSVG(
                    timeline, column: metric, from: start, to: end, variants: only)
            } else if let database, let metric {
                text = try Self.svgText(
                    database: database, table: table, sweep: sweep, metric: metric)
            } else {
                text = try Self.csvText(
                    database: database!, table: table, sweep: sweep, suite: suite)
            }
            if let output {
                try AtomicFile.write(text, to: output)
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(Self.exitStatus(for: error))
        }
    }

    /// The CSV text of `table` in the results database at `database`, opened read-only
    /// (`sweep`: the sweep of a sweep table, `suite` the suite of `suite`; nil for the last).
    public static func csvText(
        database: String, table: Table, sweep: Int64? = nil, suite: Int64? = nil
    ) throws(MeasurementError) -> String {
        let store = try ResultStore(path: database, access: .readOnly)
        if let resultTable = table.resultTable { return try store.csv(resultTable) }
        if let suiteTable = table.suiteTable { return try store.csv(suiteTable, suiteId: suite) }
        return try store.csv(table.sweepTable!, sweepId: sweep)
    }

    /// The SVG chart (`SweepPlot`) of `metric` (snake_case) in sweep `sweep` (nil: the last) of
    /// the database at `database`: per variant with `table` sweep, paired with sweep_paired.
    public static func svgText(
        database: String, table: Table, sweep: Int64?, metric: String
    ) throws(MeasurementError) -> String {
        let store = try ResultStore(path: database, access: .readOnly)
        let (stored, variants) = try store.sweep(sweep)
        let names = SweepCSV.metricNames(variants)
        guard let name = names.first(where: { MetricName.snakeCase($0) == metric }) else {
            throw .metricNotFound(
                path: database, metric: metric, available: names.map(MetricName.snakeCase))
        }
        let record = stored.record
        let title =
            "\(record.scenarioName): sweep \(stored.sweepId), "
            + "\(record.variantLabels.count) variants × \(SweepComparison.range(record.seeds)), "
            + "commit \(record.gitCommit)"
        return SweepPlot.svg(variants, metric: name, paired: table == .sweepPaired, title: title)
    }

    /// Seconds of simulated time from a `--from` or `--to` value (nil when not given).
    static func time(_ text: String?, _ option: String) throws(ValidationError) -> Double? {
        guard let text else { return nil }
        guard let seconds = text == "0" ? 0 : RunCommand.parseDuration(text) else {
            throw ValidationError(
                "\(option) \(text) is not a time: give whole seconds, or a number with s, m, h or d (e.g. 14h)."
            )
        }
        return Double(seconds)
    }

    /// The variants of a `--variants` list (nil when not given).
    static func variantList(_ text: String?) throws(ValidationError) -> [Int]? {
        guard let text else { return nil }
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        let numbers = items.compactMap { Int($0) }
        guard numbers.count == items.count, numbers.allSatisfy({ $0 >= 0 }) else {
            throw ValidationError(
                "--variants \(text) is not a list of variants: give their numbers, separated by commas (e.g. 0,1,2)."
            )
        }
        return numbers
    }

    /// The SVG chart (`TimelinePlot`) of `column` in the timeline file at `path`, between
    /// `from` and `to` (seconds; nil: no bound), of `variants` only (nil: all).
    public static func timelineSVG(
        _ path: String, column: String, from: Double?, to: Double?, variants: [Int]? = nil
    ) throws(MeasurementError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .timelineNotFound(path: path)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .notATimeline(path: path, reason: "it is not UTF-8 text")
        }
        let chart = try TimelinePlot.chart(
            text, path: path, column: column, from: from, to: to, variants: variants)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let window =
            from == nil && to == nil
            ? "" : ", \(from.map(Self.clock) ?? "start") to \(to.map(Self.clock) ?? "end")"
        return TimelinePlot.svg(chart, title: "\(name): \(chart.column)\(window)")
    }

    /// Simulated time as `D:HH:MM:SS` less its zero day (`14:00:00`, `1:02:00:00`).
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let (days, hours, minutes, rest) = (
            whole / 86_400, whole % 86_400 / 3_600, whole % 3_600 / 60, whole % 60
        )
        let time = String(format: "%02d:%02d:%02d", hours, minutes, rest)
        return days > 0 ? "\(days):\(time)" : time
    }

    /// The sysexits status for `error`: 65 `EX_DATAERR`, 66 `EX_NOINPUT`, 73 `EX_CANTCREAT`,
    /// 74 `EX_IOERR`.
    public static func exitStatus(for error: MeasurementError) -> Int32 {
        switch error {
        case .schemaTooNew, .notADatabase, .databaseCorrupt, .schemaTooOld, .foreignDatabase,
            .sweepNotFound, .sweepsNotComparable, .shardsNotCombinable, .runNotFound,
            .runsNotComparable, .metricNotFound, .notATimeline, .timelineColumnNotFound,
            .timelineVariantNotFound, .suiteNotFound, .journalNotResumable, .journalPending:
            65
        case .databaseNotFound, .timelineNotFound, .journalNotFound: 66
        case .outputNotWritable: 73
        case .databaseFailed, .outputWriteFailed: 74
        }
    }
}
