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
}
