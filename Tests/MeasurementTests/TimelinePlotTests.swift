import Foundation
import Testing

@testable import Measurement

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `TimelinePlot` and `CSV.records` on made-up timelines: what is read from each kind of file,
/// the window, the marks, and every way a file is refused.
@Suite struct TimelinePlotTests {
    static let run =
        [
            "end_ns,writes_made,clients_in_reset,events",
            "600000000000,5,0,",
            "1200000000000,7,3,restoreFromBackup",
            "1800000000000,6,1,",
            "1900000000000,0,0,healing",
        ].joined(separator: "\r\n") + "\r\n"

    // Variant 1's label holds a comma and a quote (quoted as RFC 4180 has it), and has no
    // cohort column.
    static let sweep =
        [
            "variant,faults,interval,runs,end_ns_mean,writes_made_mean,cohort0_clients_in_reset_mean,events",
            "0,none,0,2,600000000000.000000,5.500000,1.000000,",
            "0,none,1,2,1200000000000.000000,6.000000,2.500000,appCrash",
            "1,\"[{\"\"kind\"\":1},2]\",0,2,600000000000.000000,4.000000,,restoreFromBackup",
            "1,\"[{\"\"kind\"\":1},2]\",1,2,1200000000000.000000,3.000000,,appCrash",
        ].joined(separator: "\r\n") + "\r\n"

    @Test func recordsReadRFC4180() {
        #expect(
            CSV.records("a,\"b,c\",\"d\"\"e\"\r\n,\"\",\"x\r\ny\"\n")
                == [["a", "b,c", "d\"e"], ["", "", "x\r\ny"]])
        #expect(CSV.records("a,b") == [["a", "b"]])
        #expect(CSV.records("") == [])
        // Written and read back alike.
        let fields = ["plain", "with, comma", "with \"quotes\"", "", "line\r\nend"]
        #expect(CSV.records(CSV.line(fields) + CSV.line(["1"])) == [fields, ["1"]])
        #expect(CSV.records("a,\"unclosed\r\n") == nil)
        #expect(CSV.records("\"closed\"early,b\r\n") == nil)
    }

    @Test func aRunsColumnIsOneLineWithItsMarks() throws {
        let chart = try TimelinePlot.chart(Self.run, path: "t.csv", column: "clients_in_reset")
        #expect(!chart.isSweep && chart.column == "clients_in_reset")
        #expect(chart.series.count == 1 && chart.series[0].label == "clients_in_reset")
        #expect(chart.series[0].times == [600, 1_200, 1_800, 1_900])
        #expect(chart.series[0].values == [0, 3, 1, 0])
        // A fault is marked at the start of the interval it fired in.
        #expect(
            chart.marks == [
                .init(seconds: 600, names: ["restoreFromBackup"]),
                .init(seconds: 1_800, names: ["healing"]),
            ])
        // A window keeps the rows whose interval ends after its start and by its end, and the
        // marks of intervals that start in it.
        let window = try TimelinePlot.chart(
            Self.run, path: "t.csv", column: "writes_made", from: 600, to: 1_800)
        #expect(window.series[0].times == [1_200, 1_800] && window.series[0].values == [7, 6])
        #expect(window.marks == [.init(seconds: 600, names: ["restoreFromBackup"])])
        let svg = TimelinePlot.svg(chart, title: "a <run>")
        #expect(XMLParser(data: Data(svg.utf8)).parse())
        #expect(svg.contains("a &lt;run&gt;") && svg.contains("restoreFromBackup"))
        #expect(svg.components(separatedBy: "<polyline").count == 2)
        #expect(svg.contains("simulated time (min)"))
        #expect(TimelinePlot.svg(chart, title: "a <run>") == svg)
    }

    @Test func aSweepsColumnIsALinePerVariantThatHasIt() throws {
        for column in ["cohort0_clients_in_reset", "cohort0_clients_in_reset_mean"] {
            let chart = try TimelinePlot.chart(Self.sweep, path: "s.csv", column: column)
            #expect(chart.isSweep && chart.column == "cohort0_clients_in_reset_mean")
            #expect(chart.labelColumns == ["faults"])
            #expect(chart.series.map(\.label) == ["0: none", "1: [{\"kind\":1},2]"])
            // Variant 1 has no such cohort: its line has no point, and is not drawn.
            #expect(chart.series.map(\.values) == [[1, 2.5], []])
            // Each variant's intervals start where its own previous one ended; marks merge.
            #expect(
                chart.marks == [
                    .init(seconds: 0, names: ["restoreFromBackup"]),
                    .init(seconds: 600, names: ["appCrash"]),
                ])
            let svg = TimelinePlot.svg(chart, title: "sweep")
            #expect(XMLParser(data: Data(svg.utf8)).parse())
            #expect(svg.components(separatedBy: "<polyline").count == 2)
            #expect(svg.contains("variants: faults"))
        }
        let both = try TimelinePlot.chart(Self.sweep, path: "s.csv", column: "writes_made")
        #expect(both.series.map(\.values) == [[5.5, 6], [4, 3]])
        // Some variants only: their lines and marks.
        let one = try TimelinePlot.chart(
            Self.sweep, path: "s.csv", column: "writes_made", variants: [1])
        #expect(one.series.map(\.values) == [[4, 3]])
        #expect(
            one.marks == [
                .init(seconds: 0, names: ["restoreFromBackup"]),
                .init(seconds: 600, names: ["appCrash"]),
            ])
        #expect(
            try TimelinePlot.chart(
                Self.sweep, path: "s.csv", column: "writes_made", variants: [0]
            ).marks == [.init(seconds: 600, names: ["appCrash"])])
        #expect(throws: MeasurementError.self) {
            try TimelinePlot.chart(
                Self.sweep, path: "s.csv", column: "writes_made", variants: [0, 2])
        }
        // A run's timeline has no variants.
        do {
            _ = try TimelinePlot.chart(
                Self.run, path: "t.csv", column: "writes_made", variants: [0])
            Issue.record("a run's timeline took --variants")
        } catch {
            #expect(error.code == 319 && error.message.contains("a run's timeline"))
        }
        // Nothing in the window: the chart says so.
        let none = try TimelinePlot.chart(
            Self.sweep, path: "s.csv", column: "writes_made", from: 5_000)
        let svg = TimelinePlot.svg(none, title: "sweep")
        #expect(XMLParser(data: Data(svg.utf8)).parse() && svg.contains("no row of this file"))
    }

    @Test func whatIsNotATimelineIsRefusedByName() {
        func reason(_ text: String, _ column: String = "writes_made") -> String? {
            do {
                _ = try TimelinePlot.chart(text, path: "f.csv", column: column)
                return nil
            } catch {
                #expect(error.path == "f.csv")
                return "\(error.code): \(error.message)"
            }
        }
        #expect(reason("")?.hasPrefix("317: f.csv is not a timeline") == true)
        #expect(reason("run_id,seed\r\n1,2\r\n")?.contains("its header is neither") == true)
        #expect(reason("end_ns,writes_made,events\r\n1,2\r\n")?.contains("line 2 has 2") == true)
        #expect(
            reason("end_ns,writes_made,events\r\n1,x,\r\n")?
                .contains("line 2, column writes_made: 'x' is not a number") == true)
        #expect(
            reason("end_ns,writes_made,events\r\n1,nan,\r\n")?.contains("is not a number") == true)
        // An empty cell is a number missing from a run's timeline.
        #expect(reason("end_ns,writes_made,events\r\n1,,\r\n")?.contains("'' is not") == true)
        let missing = reason(Self.run, "uploads")
        #expect(missing?.hasPrefix("318: f.csv has no figure column 'uploads'") == true)
        #expect(missing?.contains("writes_made, clients_in_reset.") == true)
        // The label and time columns of a sweep are not figures.
        #expect(reason(Self.sweep, "faults")?.hasPrefix("318") == true)
        #expect(reason(Self.sweep, "end_ns")?.hasPrefix("318") == true)
    }
}
