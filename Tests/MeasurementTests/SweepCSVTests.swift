import Foundation
import Testing

@testable import Measurement

/// `sweep.csv` and `sweep_paired.csv` from hand-made runs, against figures worked out by hand.
@Suite struct SweepCSVTests {
    /// A run of `seed` with the metrics `lost` (an integer) and `rate` (a real).
    func run(_ seed: UInt64, lost: Int64, rate: Double) -> RunRecord {
        RunRecord(
            seed: seed, scenarioName: "s", scenarioHash: "h", optionsJSON: "{}", gitCommit: "c",
            toolchain: "t", traceDigest: "d", simulatedDurationNs: 1, clientsCount: 1,
            eventsCount: 1, metrics: [.integer("writesLost", lost), .real("rate", rate)])
    }

    func variant(_ mode: String, _ lost: [Int64], _ rates: [Double]) -> SweepVariant {
        SweepVariant(
            labels: [SweepLabel(column: "reset_mode", value: mode)],
            runs: zip(lost, rates).enumerated().map { index, pair in
                run(UInt64(index + 1), lost: pair.0, rate: pair.1)
            })
    }

    func rows(_ text: String) -> [[String]] {
        text.components(separatedBy: "\r\n").dropLast().map { $0.components(separatedBy: ",") }
    }

    @Test func summaryRowsHoldEachVariantsStatistics() {
        let variants = [
            variant("recover", [1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5]),
            variant("discard", [10, 20, 30, 40], [1, 2, 3, 4]),
        ]
        let table = rows(SweepCSV.summaryText(variants))
        #expect(
            table[0] == ["variant", "reset_mode", "metric"] + SweepCSV.summaryColumns)
        #expect(table.count == 5)  // header, 2 variants × 2 metrics
        // 1, 2, 3, 4: mean 2.5, sample sd √(5/3), t(0.975, 3) = 3.182446305284263,
        // half-width 3.182446 · 1.290994 / 2 = 2.054260.
        #expect(
            table[1] == [
                "0", "recover", "writes_lost", "4", "2.500000", "1.290994", "1.000000",
                "2.500000", "3.850000", "3.970000", "4.000000", "0.445740", "4.554260",
            ])
        #expect(table[2][0...4] == ["0", "recover", "rate", "4", "0.500000"])
        #expect(table[2][12] == "0.500000")  // no spread, no interval
        #expect(table[3][0...5] == ["1", "discard", "writes_lost", "4", "25.000000", "12.909944"])
    }

    @Test func pairedRowsHoldSeedBySeedDifferences() {
        let variants = [
            variant("recover", [5, 5, 5, 5], [1, 1, 1, 1]),
            variant("discard", [6, 4, 9, 5], [1, 1, 1, 1]),
        ]
        let table = rows(SweepCSV.pairedText(variants))
        #expect(table[0] == ["variant", "reset_mode", "metric"] + SweepCSV.pairedColumns)
        #expect(table.count == 3)  // header, 1 compared variant × 2 metrics
        // Differences 1, −1, 4, 0: mean 1, sd √(14/3) = 2.160247, half-width 3.437435.
        #expect(
            table[1] == [
                "1", "discard", "writes_lost", "4", "1.000000", "2.160247", "-1.000000",
                "0.500000", "4.000000", "-2.437435", "4.437435", "2", "1",
            ])
        #expect(table[2][3...5] == ["4", "0.000000", "0.000000"])
        #expect(table[2][11...12] == ["0", "0"])
    }

    @Test func oneVariantHasAPairedHeaderAndNoRows() {
        let text = SweepCSV.pairedText([variant("recover", [1, 2], [1, 2])])
        #expect(rows(text).count == 1)
    }

    @Test func aMetricMissingFromSomeRunsIsSummarisedOverTheOthers() {
        var variants = [variant("recover", [1, 2, 3], [1, 2, 3])]
        variants[0].runs[1].metrics.removeFirst()  // run 2 has no writesLost
        let table = rows(SweepCSV.summaryText(variants))
        #expect(table[1][2...4] == ["writes_lost", "2", "2.000000"])
        let paired = SweepCSV.differences(
            of: "writesLost", variants[0].runs, variant("x", [0, 0, 0], [0, 0, 0]).runs)
        #expect(paired == [1, 3])
    }
}
