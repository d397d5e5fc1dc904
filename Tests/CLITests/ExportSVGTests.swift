import Foundation
import Testing

@testable import Measurement
@testable import SyncSimCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `export --format svg`: one metric of a sweep as a chart whose numbers are sweep.csv's and
/// sweep_paired.csv's, well-formed, the same bytes for the same sweep; bad requests refused.
@Suite(.serialized) final class ExportSVGTests {
    private let directories = TemporaryDirectories()

    /// Counts the elements of `svg` by name, or nil when it is not well-formed XML.
    final class Elements: NSObject, XMLParserDelegate {
        var counts: [String: Int] = [:]
        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            counts[name, default: 0] += 1
        }

        static func count(_ svg: String) -> [String: Int]? {
            let parser = XMLParser(data: Data(svg.utf8))
            let delegate = Elements()
            parser.delegate = delegate
            return parser.parse() ? delegate.counts : nil
        }
    }

    @Test func aSweepsMetricIsDrawnWithTheNumbersOfItsCSV() throws {
        let sweep = try directories.make()
        let restore = #"[{"kind":"restoreFromBackup","atSeconds":7200}]"#
        #expect(
            syncsimStatus([
                "sweep", "--seeds", "4", "--clients", "8", "--duration", "3h", "--quiet",
                "--backup-intervals", "1h", "--vary", "faults=[[],\(restore)]", "--out", sweep,
            ]) == 0)
        let database = sweep + "/results.sqlite"
        let charts = try directories.make()
        for table in ["sweep", "sweep_paired"] {
            #expect(
                syncsimStatus([
                    "export", "--database", database, "--table", table, "--format", "svg",
                    "--metric", "writes_lost_to_restore", "--output", "\(charts)/\(table).svg",
                ]) == 0)
        }
        let text = { (name: String) throws -> String in
            String(decoding: try #require(fileBytes("\(charts)/\(name)")), as: UTF8.self)
        }
        let chart = try text("sweep.svg")
        let paired = try text("sweep_paired.svg")
        // Well-formed: a dot per seed per row, one interval (three lines) and mean per row.
        let counts = try #require(Elements.count(chart))
        #expect(counts["svg"] == 1 && counts["circle"] == 8 && counts["rect"] == 1 + 2)
        #expect(try #require(Elements.count(paired))["circle"] == 4)
        // The paired row's mean and interval are sweep_paired.csv's, to one more decimal
        // than the axis's step.
        let pairedCSV = try #require(fileBytes(sweep + "/sweep_paired.csv"))
        let row = try #require(
            String(decoding: pairedCSV, as: UTF8.self).components(separatedBy: "\r\n")
                .first { $0.contains(",writes_lost_to_restore,") })
        let cells = row.components(separatedBy: ",")
        let (mean, low, high) = (
            try #require(Double(cells[cells.count - 9])),
            try #require(Double(cells[cells.count - 4])),
            try #require(Double(cells[cells.count - 3]))
        )
        #expect(mean > 0 && low <= mean && mean <= high)
        let stated = try #require(
            paired.components(separatedBy: #"font-size="11">mean "#).dropFirst().first)
        // "745.9 [689.3, 802.5]", with thousands separated by commas.
        let numbers = String(stated.prefix { $0 != "]" })
            .replacingOccurrences(of: " [", with: "|").replacingOccurrences(of: ", ", with: "|")
            .split(separator: "|").compactMap { Double($0.replacingOccurrences(of: ",", with: "")) }
        #expect(numbers.count == 3)
        for (drawn, csv) in zip(numbers, [mean, low, high]) {
            #expect(abs(drawn - csv) <= 1, "\(drawn) against \(csv) in sweep_paired.csv")
        }
        #expect(paired.contains("stroke-dasharray"))  // the zero line
        #expect(chart.contains("writes_lost_to_restore, per seed"))
        // The same sweep, the same bytes.
        #expect(
            syncsimStatus([
                "export", "--database", database, "--table", "sweep", "--format", "svg",
                "--metric", "writes_lost_to_restore", "--output", "\(charts)/again.svg",
            ]) == 0)
        #expect(try text("again.svg") == chart)

        // Refused: a metric the runs do not have (315, nothing written), and usage errors.
        let missing = "\(charts)/missing.svg"
        #expect(
            syncsimStatus([
                "export", "--database", database, "--table", "sweep", "--format", "svg",
                "--metric", "no_such_metric", "--output", missing,
            ]) == 65)
        #expect(!FileManager.default.fileExists(atPath: missing))
        for arguments in [
            ["--table", "sweep", "--format", "svg"],
            [
                "--table", "runs", "--format", "svg",
                "--metric", "writes_made",
            ], ["--table", "sweep", "--metric", "writes_made"],
        ] {
            #expect(syncsimStatus(["export", "--database", database] + arguments) == 64)
        }
    }

    @Test func aTimelinesColumnIsDrawnOverSimulatedTime() throws {
        let sweep = try directories.make()
        let restore = #"[{"kind":"restoreFromBackup","atSeconds":5400}]"#
        #expect(
            syncsimStatus([
                "sweep", "--seeds", "2", "--clients", "8", "--duration", "3h", "--quiet",
                "--backup-intervals", "1h", "--vary", "faults=[[],\(restore)]", "--timeline",
                "15m", "--out", sweep,
            ]) == 0)
        let charts = try directories.make()
        let export = { (file: String, column: String, extra: [String], name: String) in
            syncsimStatus(
                [
                    "export", "--timeline", file, "--format", "svg", "--metric", column,
                    "--output", "\(charts)/\(name)",
                ] + extra)
        }
        let text = { (name: String) throws -> String in
            String(decoding: try #require(fileBytes("\(charts)/\(name)")), as: UTF8.self)
        }
        // A run's timeline: one line, a point per row, the restore marked.
        let run = sweep + "/timelines/variant-1-seed-1.csv"
        #expect(export(run, "resets_started", [], "run.svg") == 0)
        let chart = try text("run.svg")
        let counts = try #require(Elements.count(chart))
        #expect(counts["polyline"] == 1 && counts["svg"] == 1)
        let rows = try #require(csvColumn("resets_started", in: run)).count
        let points = try #require(
            chart.components(separatedBy: "<polyline points=\"").dropFirst().first?
                .prefix { $0 != "\"" })
        #expect(points.split(separator: " ").count == rows)
        #expect(chart.contains(">restoreFromBackup</text>"))
        #expect(export(run, "resets_started", [], "again.svg") == 0)
        #expect(try text("again.svg") == chart)
        // The sweep's: a line per variant; a window of an hour from 1 h keeps four rows each.
        let means = sweep + "/sweep_timeline.csv"
        #expect(export(means, "clients_in_reset", ["--from", "1h", "--to", "2h"], "sweep.svg") == 0)
        let drawn = try text("sweep.svg")
        #expect(try #require(Elements.count(drawn))["polyline"] == 2)
        #expect(drawn.contains("clients_in_reset_mean, 01:00:00 to 02:00:00"))
        for line in drawn.components(separatedBy: "<polyline points=\"").dropFirst() {
            #expect(line.prefix { $0 != "\"" }.split(separator: " ").count == 4)
        }
        #expect(export(means, "clients_in_reset", ["--variants", "1"], "one.svg") == 0)
        #expect(try #require(Elements.count(try text("one.svg")))["polyline"] == 1)

        // Refused, nothing written: a file that is missing (66), not a timeline or without
        // the column (65); and usage errors (64).
        let missing = "\(charts)/missing.svg"
        #expect(export("\(sweep)/nope.csv", "uploads", [], "missing.svg") == 66)
        #expect(export("\(sweep)/runs.csv", "uploads", [], "missing.svg") == 65)
        #expect(export(run, "no_such_column", [], "missing.svg") == 65)
        #expect(export(means, "uploads", ["--variants", "0,7"], "missing.svg") == 65)
        #expect(!FileManager.default.fileExists(atPath: missing))
        for arguments in [
            ["export", "--timeline", run, "--metric", "uploads"],
            ["export", "--timeline", run, "--format", "svg"],
            ["export", "--timeline", run, "--format", "svg", "--metric", "uploads", "--database", "x"],
            ["export", "--timeline", run, "--format", "svg", "--metric", "uploads", "--sweep", "1"],
            ["export", "--timeline", run, "--format", "svg", "--metric", "uploads", "--from", "2h", "--to", "1h"],
            ["export", "--timeline", run, "--format", "svg", "--metric", "uploads", "--from", "soon"],
            ["export", "--timeline", run, "--format", "svg", "--metric", "uploads", "--variants", "0,x"],
            ["export", "--database", "\(sweep)/results.sqlite", "--variants", "0"],
            ["export", "--database", "\(sweep)/results.sqlite", "--from", "1h"],
            ["export", "--format", "csv"],
        ] {
            #expect(syncsimStatus(arguments + ["--output", missing]) == 64, "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
