import ArgumentParser
import Foundation
import Measurement
import Testing

@testable import SyncSimCLI

/// `syncsim export`: parsing, output, and the exit statuses of its failures.
@Suite struct ExportCommandTests {
    /// A fresh directory under the system's temporary directory, removed at the end of a test.
    struct Scratch: ~Copyable {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.path + "/syncsim-export-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        func file(_ name: String) -> String { path + "/" + name }
        func listing() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    private func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { Array($0) }
    }

    private func run(_ seed: UInt64) -> RunRecord {
        RunRecord(
            seed: seed, scenarioName: "two-clients", scenarioHash: "beef", optionsJSON: "{}",
            gitCommit: "abc1234", toolchain: "Swift 6.3.1", traceDigest: "f00d",
            simulatedDurationNs: 1_000, clientsCount: 1, eventsCount: 10,
            metrics: [.integer("mergesCount", Int64(seed))],
            timings: [.real("wallSecondsTotal", 0.5)],
            clients: [ClientRecord(clientIndex: 0, metrics: [.integer("uploadsCount", 3)])])
    }

    /// Parses `arguments` as the root command would and runs the subcommand. Returns the exit
    /// status it ends with (0 when it returns normally).
    private func execute(_ arguments: [String]) throws -> Int32 {
        var command = try SyncSimCommand.parseAsRoot(arguments)
        do {
            try command.run()
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        }
    }

    @Test func helpIsVerbatim() {
        let help = SyncSimCommand.helpMessage(for: ExportCommand.self, columns: 100)
        #expect(help == """
            OVERVIEW: Write a table of a results database as CSV, or a sweep's metric or a timeline's column as
            SVG.

            The runs and clients tables hold deterministic figures only: the same seed and scenario give
            byte-identical rows. Wall-clock figures are in the timings table alone. CSV follows RFC 4180 (CRLF
            line ends, one header row); docs/results.md lists every column and its unit. With --format svg,
            --table sweep or sweep_paired and --metric NAME, writes a chart of that metric instead: every
            seed's value per variant (or its difference from variant 0), with the mean and its 95 % confidence
            interval, the numbers of sweep.csv and sweep_paired.csv. With --timeline FILE (a timeline.csv or
            sweep_timeline.csv) and --metric COLUMN instead of --database, writes a chart of that column over
            simulated time: a line for the run, or for each variant's mean, with the intervals where faults
            fired marked; --from and --to narrow it.

            USAGE: syncsim export [--database <path>] [--timeline <path>] [--from <time>] [--to <time>] [--variants <list>] [--format <format>] [--table <table>] [--sweep <id>] [--suite <id>] [--metric <name>] [--output <path>]

            OPTIONS:
              --database <path>       The results database written by `syncsim run`, `sweep` or `suite`.
              --timeline <path>       Instead of --database: a timeline.csv or sweep_timeline.csv to draw a
                                      column of (--format svg --metric COLUMN).
              --from <time>           With --timeline: draw from this simulated time on (seconds, or a number
                                      with s, m, h or d; 0: the start).
              --to <time>             With --timeline: draw up to this simulated time.
              --variants <list>       With --timeline of a sweep_timeline.csv: draw only these variants (e.g.
                                      0,1,2).
              --format <format>       The output format. (values: csv, svg; default: csv)
              --table <table>         The table to write: runs (one row per run), clients (one row per client
                                      of a run), timings (wall-clock figures, not deterministic), sweep or
                                      sweep_paired (the statistics of one sweep, as its sweep.csv and
                                      sweep_paired.csv), sweeps (one row per sweep), suite (one suite's
                                      suite.csv) or suites (one row per sweep of every suite). (values: runs,
                                      clients, timings, sweep, sweep_paired, sweeps, suite, suites; default:
                                      runs)
              --sweep <id>            With --table sweep or sweep_paired: the sweep (its sweep_id). Default:
                                      the last one.
              --suite <id>            With --table suite: the suite (its suite_id). Default: the last one.
              --metric <name>         With --format svg: the metric to draw, as sweep.csv names it
                                      (snake_case); with --timeline, the column (e.g. clients_in_reset,
                                      cohort0_clients_in_reset).
              --output <path>         Write to this file, atomically, instead of standard output.
              -h, --help              Show help information.

            """)
    }

    @Test(arguments: ResultTable.allCases)
    func exportWritesEachTableToTheOutputFile(table: ResultTable) throws {
        let scratch = try Scratch()
        let database = scratch.file("results.sqlite")
        let store = try ResultStore(path: database)
        try store.insert(run(1))
        try store.insert(run(2))
        let output = scratch.file("\(table.rawValue).csv")
        let status = try execute([
            "export", "--database", database, "--format", "csv", "--table", table.rawValue,
            "--output", output,
        ])
        #expect(status == 0)
        #expect(bytes(output) == Array(try store.csv(table).utf8))
        #expect(try scratch.listing() == ["\(table.rawValue).csv", "results.sqlite"].sorted())
    }

    @Test func runsIsTheDefaultTable() throws {
        let scratch = try Scratch()
        let database = scratch.file("results.sqlite")
        try ResultStore(path: database).insert(run(7))
        let text = try ExportCommand.csvText(database: database, table: .runs)
        let output = scratch.file("out.csv")
        #expect(try execute(["export", "--database", database, "--output", output]) == 0)
        #expect(bytes(output) == Array(text.utf8))
        #expect(text.hasPrefix("run_id,seed,scenario_name,"))
        #expect(text.hasSuffix("\r\n1,7,two-clients,beef,{},abc1234,Swift 6.3.1,f00d,1000,1,10,7\r\n"))
    }

    @Test func anUnknownFormatIsAUsageError() throws {
        do {
            _ = try SyncSimCommand.parseAsRoot(["export", "--database", "x.sqlite", "--format", "json"])
            Issue.record("expected a parse error")
        } catch {
            #expect(SyncSimCommand.exitCode(for: error) == .validationFailure)
            #expect(SyncSimCommand.exitCode(for: error).rawValue == 64)
            #expect(SyncSimCommand.message(for: error).contains("'json'"))
        }
    }

    @Test func aCorruptDatabaseExits65AndLeavesTheOutputAlone() throws {
        let scratch = try Scratch()
        let database = scratch.file("results.sqlite")
        let noise = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        _ = FileManager.default.createFile(atPath: database, contents: Data(noise))
        let output = scratch.file("runs.csv")
        _ = FileManager.default.createFile(atPath: output, contents: Data("previous\r\n".utf8))
        let status = try execute(["export", "--database", database, "--output", output])
        #expect(status == 65)
        #expect(bytes(output) == Array("previous\r\n".utf8))
        #expect(bytes(database) == noise)
        #expect(try scratch.listing() == ["results.sqlite", "runs.csv"])
    }

    @Test func aMissingDatabaseExits66() throws {
        let scratch = try Scratch()
        let status = try execute(["export", "--database", scratch.file("absent.sqlite")])
        #expect(status == 66)
        #expect(try scratch.listing() == [])
    }

    @Test func anOutputDirectoryThatCannotBeWrittenExits73() throws {
        let scratch = try Scratch()
        let database = scratch.file("results.sqlite")
        try ResultStore(path: database).insert(run(1))
        let status = try execute([
            "export", "--database", database, "--output", scratch.file("missing/runs.csv"),
        ])
        #expect(status == 73)
        #expect(try scratch.listing() == ["results.sqlite"])
    }

    @Test func exitStatusesFollowSysexits() {
        #expect(ExportCommand.exitStatus(for: .databaseNotFound(path: "p")) == 66)
        #expect(ExportCommand.exitStatus(for: .foreignDatabase(path: "p")) == 65)
        #expect(ExportCommand.exitStatus(for: .outputWriteFailed(path: "p", reason: "r")) == 74)
    }
}
