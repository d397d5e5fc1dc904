import Foundation
import Simulation
import Testing

@testable import Measurement
@testable import SyncSimCLI

/// `sweep --checkpoints N`: a checkpoint file per run, the one `run --checkpoints N` writes for
/// the same run, and no run changed by it; `compare` reads them to say where a pair parts.
@Suite(.serialized) final class SweepCheckpointTests {
    static let sweep = [
        "sweep", "--seeds", "2", "--clients", "6", "--duration", "2h", "--backup-intervals",
        "0,1h", "--quiet",
    ]
    private let directories = TemporaryDirectories()

    @Test func everyRunHasTheCheckpointsItsRunWouldWrite() throws {
        let (plain, checked, single) = (
            try directories.make(), try directories.make(), try directories.make()
        )
        #expect(syncsimStatus(Self.sweep + ["--out", plain]) == 0)
        #expect(
            syncsimStatus(
                Self.sweep + ["--checkpoints", "300", "--timeline", "30m", "--out", checked]) == 0)
        // Checkpoints and timelines change no run.
        for file in ["runs.csv", "clients.csv", "sweep.csv"] {
            #expect(fileBytes("\(plain)/\(file)") == fileBytes("\(checked)/\(file)"), "\(file)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: checked + "/checkpoints")
        #expect(
            files.sorted() == [
                "variant-0-seed-1.csv", "variant-0-seed-2.csv", "variant-1-seed-1.csv",
                "variant-1-seed-2.csv",
            ])
        // Variant 1 (backups hourly), seed 2, as `run` makes it.
        #expect(
            syncsimStatus([
                "run", "--seed", "2", "--clients", "6", "--duration", "2h", "--backup-interval",
                "1h", "--checkpoints", "300", "--timeline", "30m", "--quiet", "--out", single,
            ]) == 0)
        let fromRun = try #require(fileBytes(single + "/checkpoints.csv"))
        #expect(fileBytes(checked + "/checkpoints/variant-1-seed-2.csv") == fromRun)
        let timelineFromRun = try #require(fileBytes(single + "/timeline.csv"))
        #expect(fileBytes(checked + "/timelines/variant-1-seed-2.csv") == timelineFromRun)
        // sweep_timeline.csv: per variant, four half hours and the rest, each the mean of the
        // variant's two runs.
        let summary = checked + "/sweep_timeline.csv"
        #expect(
            csvColumn("variant", in: summary) == ["0", "0", "0", "0", "0", "1", "1", "1", "1", "1"])
        #expect(csvColumn("interval", in: summary)?.prefix(5) == ["0", "1", "2", "3", "4"])
        #expect(csvColumn("runs", in: summary)?.allSatisfy { $0 == "2" } == true)
        #expect(csvColumn("events", in: summary)?.last == "healing")
        let uploads = try [1, 2].map { seed in
            try #require(
                csvColumn("uploads", in: checked + "/timelines/variant-1-seed-\(seed).csv"))
        }
        let means = try #require(csvColumn("uploads_mean", in: summary))
        for interval in 0..<5 {
            let mean = Double(Int(uploads[0][interval])! + Int(uploads[1][interval])!) / 2
            #expect(means[5 + interval] == CSV.real(mean), "interval \(interval)")
        }
        #expect(syncsimStatus(Self.sweep + ["--timeline", "0", "--out", single]) == 64)
        #expect(syncsimStatus(Self.sweep + ["--checkpoints", "0", "--out", single]) == 64)

        // A lossier sweep with checkpoints: each differing pair's files say where it parts.
        let lossy = try directories.make()
        #expect(
            syncsimStatus(
                Self.sweep + [
                    "--checkpoints", "300", "--set", "network.lossPerMillion=20000", "--out",
                    lossy,
                ]) == 0)
        let runs = { (directory: String) throws -> [RunRecord] in
            try ResultStore(path: directory + "/results.sqlite", access: .readOnly).runs()
                .map(\.record)
        }
        // Run 4 is variant 1, seed 2 in each (variant-major, seeds ascending).
        let (ours, theirs) = (try runs(checked)[3], try runs(lossy)[3])
        #expect(ours.seed == 2 && theirs.seed == 2)
        let parting = ComparisonPrinter.parting(
            (checked, lossy), variants: (1, 1), seed: 2, runs: (ours, theirs))
        guard case .at(_, let first)? = parting else {
            Issue.record("no parting point: \(String(describing: parting))")
            return
        }
        #expect(first.events >= 300)
        #expect(
            ComparisonPrinter.parting(
                (checked, plain), variants: (1, 1), seed: 2, runs: (ours, ours)) == nil)
        #expect(
            ComparisonPrinter.parting(
                (checked, checked), variants: (1, 1), seed: 2, runs: (ours, ours)) == .allAgree)
        // Files that are not those runs' (another sweep's, in the same directory) are not read.
        #expect(
            ComparisonPrinter.parting(
                (checked, lossy), variants: (1, 1), seed: 2, runs: (ours, ours)) == nil)
    }

    /// Variants with and without cohorts share one `sweep_timeline.csv`: the cohort columns
    /// are the most cohorts' ones, empty for a variant without them, and means otherwise.
    @Test func cohortTimelinesAverageBesideVariantsWithoutCohorts() throws {
        func sample(_ end: UInt64, cohorts: [[UInt64]]) -> TimelineSample {
            var sample = TimelineSample(endNs: end)
            sample.writesMade = cohorts.reduce(0) { $0 + $1[0] } + (cohorts.isEmpty ? 7 : 0)
            sample.cohorts = cohorts.map { figures in
                var cohort = CohortTimelineFigures()
                cohort.figures = figures
                return cohort
            }
            return sample
        }
        let plain = [[sample(10, cohorts: [])], [sample(10, cohorts: [])]]
        let split = [
            [sample(10, cohorts: [[4, 1, 0, 0, 3, 2, 1], [2, 0, 0, 1, 5, 5, 0]])],
            [sample(10, cohorts: [[6, 3, 2, 0, 1, 1, 1], [2, 0, 0, 0, 4, 4, 0]])],
        ]
        // Written and read back alike.
        for run in split {
            #expect(SweepTimeline.parse(RunCommand.timelineText(run)) == run)
        }
        let labels = [0, 1].map { [SweepLabel(column: "cohorts", value: "\($0)")] }
        let text = SweepTimeline.text(labels: labels, timelines: [plain, split])
        let path = try directories.make() + "/sweep_timeline.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(csvColumn("writes_made_mean", in: path) == ["7.000000", "7.000000"])
        #expect(csvColumn("cohort0_writes_made_mean", in: path) == ["", "5.000000"])
        #expect(csvColumn("cohort0_resets_started_mean", in: path) == ["", "2.000000"])
        #expect(csvColumn("cohort1_clients_online_mean", in: path) == ["", "4.500000"])
        #expect(csvColumn("cohort2_writes_made_mean", in: path) == nil)
        // Not a timeline: a cohort's columns cut short.
        let whole = RunCommand.timelineText(split[0])
        let cut = whole.replacingOccurrences(of: ",cohort1_clients_in_reset", with: "")
        #expect(SweepTimeline.parse(cut) == nil)
    }
}
