import Foundation
import Measurement
import Simulation
import Testing

@testable import SyncSimCLI

/// Interrupted sweeps and suites, resumed (`--resume`, `SweepJournal`): the files a resumed one
/// writes are those of one never interrupted, byte for byte; a journal of another command or
/// build, a damaged one or none is refused with nothing written; a journal left by an
/// interruption is never overwritten by starting afresh. The interruption is
/// `SweepRunner.stopAfter`, which stops taking jobs as a killed process would.
@Suite(.serialized) final class SweepResumeTests {
    private let directories = TemporaryDirectories()

    /// Six small runs: three seeds × two reset modes.
    static let sweep = [
        "sweep", "--seeds", "5-7", "--reset-modes", "recoverUnsyncedChanges,discardUnsyncedChanges",
        "--clients", "12", "--duration", "90m", "--quiet",
    ]
    static let files = ["runs.csv", "clients.csv", "sweep.csv", "sweep_paired.csv"]

    /// The one journal in `directory` (a path that does not exist when there is none).
    func journal(_ directory: String) -> String {
        let found = SweepJournal.paths(in: directory)
        #expect(found.count <= 1)
        return found.first ?? directory + "/journal-none.jsonl"
    }

    /// Runs `arguments` into `directory`, stopped after `runs` runs as by a kill.
    func interrupted(_ arguments: [String], into directory: String, after runs: Int) -> Int32 {
        SweepRunner.$stopAfter.withValue(runs) { syncsimStatus(arguments + ["--out", directory]) }
    }

    /// The journal's lines (its first line and one per finished run).
    func lines(_ path: String) throws -> [String] {
        String(decoding: try #require(fileBytes(path)), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    @Test func aResumedSweepWritesTheFilesOfOneNeverInterrupted() throws {
        let (whole, cut) = (try directories.make(), try directories.make())
        #expect(syncsimStatus(Self.sweep + ["--out", whole, "--jobs", "2"]) == 0)
        #expect(fileBytes(journal(whole)) == nil)  // removed once the results are written

        #expect(interrupted(Self.sweep + ["--jobs", "2"], into: cut, after: 2) == 130)
        let kept = try #require(fileBytes(journal(cut)))
        let finished = try lines(journal(cut)).count - 1
        #expect(finished >= 2 && finished < 6)
        #expect(fileBytes(cut + "/runs.csv") == nil)  // no results yet

        // Starting afresh would lose those runs: refused (323, status 65), the journal kept.
        #expect(syncsimStatus(Self.sweep + ["--out", cut]) == 65)
        #expect(fileBytes(journal(cut)) == kept)
        #expect(fileBytes(cut + "/runs.csv") == nil)

        // Resumed, with another number of jobs (it changes no run): interrupted once more, then
        // finished.
        #expect(interrupted(Self.sweep + ["--jobs", "1", "--resume"], into: cut, after: 1) == 130)
        #expect(try lines(journal(cut)).count - 1 == finished + 1)
        #expect(syncsimStatus(Self.sweep + ["--out", cut, "--jobs", "1", "--resume"]) == 0)
        for file in Self.files {
            let bytes = try #require(fileBytes("\(whole)/\(file)"))
            #expect(bytes == fileBytes("\(cut)/\(file)"), "\(file) differs after a resume")
        }
        #expect(fileBytes(journal(cut)) == nil)
    }

    /// Two sweeps interrupted in one directory keep a journal each, and each resumes its own.
    @Test func twoSweepsInOneDirectoryKeepTheirJournalsApart() throws {
        let (shared, alone) = (try directories.make(), try directories.make())
        var other = Self.sweep
        other[2] = "8-9"
        #expect(interrupted(Self.sweep, into: shared, after: 1) == 130)
        #expect(interrupted(other, into: shared, after: 1) == 130)
        let journals = SweepJournal.paths(in: shared)
        #expect(journals.count == 2)
        #expect(syncsimStatus(other + ["--out", shared, "--resume"]) == 0)
        #expect(SweepJournal.paths(in: shared).count == 1)
        #expect(syncsimStatus(Self.sweep + ["--out", shared, "--resume"]) == 0)
        #expect(SweepJournal.paths(in: shared).isEmpty)
        // Both sweeps are in the database, as if run one after the other.
        #expect(syncsimStatus(other + ["--out", alone]) == 0)
        #expect(syncsimStatus(Self.sweep + ["--out", alone]) == 0)
        for file in ["runs.csv", "clients.csv", "sweep.csv", "sweep_paired.csv"] {
            #expect(fileBytes("\(shared)/\(file)") == fileBytes("\(alone)/\(file)"), "\(file)")
        }
    }

    /// Stopped before its first run ended, a sweep leaves a journal of its first line alone:
    /// nothing to lose, so the next sweep starts afresh over it.
    @Test func aJournalWithoutFinishedRunsIsStartedOver() throws {
        let cut = try directories.make()
        #expect(interrupted(Self.sweep, into: cut, after: 0) == 130)
        #expect(try lines(journal(cut)).count == 1)
        #expect(syncsimStatus(Self.sweep + ["--out", cut]) == 0)
        #expect(fileBytes(journal(cut)) == nil && fileBytes(cut + "/runs.csv") != nil)
    }

    @Test func aLineCutShortIsDroppedAndItsRunRunsAgain() throws {
        let (whole, cut) = (try directories.make(), try directories.make())
        #expect(syncsimStatus(Self.sweep + ["--out", whole]) == 0)
        #expect(interrupted(Self.sweep, into: cut, after: 3) == 130)
        // The process died while writing a line: half of a run's line, no line end.
        let entries = try lines(journal(cut))
        let half = entries[1].prefix(entries[1].count / 2)
        let handle = try #require(FileHandle(forWritingAtPath: journal(cut)))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(half.utf8))
        try handle.close()
        #expect(syncsimStatus(Self.sweep + ["--out", cut, "--resume"]) == 0)
        for file in Self.files {
            #expect(fileBytes("\(whole)/\(file)") == fileBytes("\(cut)/\(file)"), "\(file)")
        }
    }

    @Test func aJournalOfAnotherSweepADamagedOneOrNoneIsRefusedWritingNothing() throws {
        let cut = try directories.make()
        #expect(interrupted(Self.sweep, into: cut, after: 1) == 130)
        let kept = try #require(fileBytes(journal(cut)))
        let database = try #require(fileBytes(cut + "/results.sqlite"))
        func refused(_ arguments: [String], status: Int32) {
            #expect(syncsimStatus(arguments + ["--out", cut, "--resume"]) == status)
            #expect(fileBytes(journal(cut)) == kept)
            #expect(fileBytes(cut + "/results.sqlite") == database)
            #expect(fileBytes(cut + "/runs.csv") == nil)
        }
        // Other seeds, another scenario setting, a checkpoint interval: other runs (321, 65).
        var otherSeeds = Self.sweep
        otherSeeds[2] = "5-8"
        refused(otherSeeds, status: 65)
        refused(Self.sweep + ["--set", "network.lossPerMillion=5000"], status: 65)
        refused(Self.sweep + ["--checkpoints", "1000"], status: 65)
        // A suite's journal is not a sweep's, nor the other way round.
        let suiteDirectory = try directories.make()
        let suite = suiteDirectory + "/s.json"
        try Data(#"{ "name": "s", "sweeps": [ { "name": "a", "seeds": 1 } ] }"#.utf8)
            .write(to: URL(fileURLWithPath: suite))
        refused(["suite", suite, "--quiet"], status: 65)

        // A damaged line in the middle (not the last, which may be cut short): refused.
        var damaged = try lines(journal(cut))
        damaged.insert("{\"job\": 0", at: 1)
        try Data((damaged.joined(separator: "\n") + "\n").utf8)
            .write(to: URL(fileURLWithPath: journal(cut)))
        let damagedBytes = try #require(fileBytes(journal(cut)))
        #expect(syncsimStatus(Self.sweep + ["--out", cut, "--resume"]) == 65)
        #expect(fileBytes(journal(cut)) == damagedBytes)

        // No journal at all (322, 66).
        let empty = try directories.make()
        #expect(syncsimStatus(Self.sweep + ["--out", empty, "--resume"]) == 66)
        #expect(fileBytes(empty + "/results.sqlite") == nil)
    }

    @Test func aResumedSuiteWritesTheFilesOfOneNeverInterrupted() throws {
        let directory = try directories.make()
        let suite = directory + "/pair.json"
        try Data(
            """
            { "name": "pair", "sweeps": [
                { "name": "modes", "seeds": "3-4", "resetModes": "recoverUnsyncedChanges,manual",
                  "clients": 10, "duration": "1h" },
                { "name": "lossy", "seeds": 2, "clients": 8, "duration": "1h",
                  "set": ["network.lossPerMillion=50000"] } ] }
            """.utf8
        ).write(to: URL(fileURLWithPath: suite))
        let arguments = ["suite", suite, "--quiet", "--jobs", "2"]
        let (whole, cut) = (directory + "/whole", directory + "/cut")
        #expect(syncsimStatus(arguments + ["--out", whole]) == 0)
        #expect(interrupted(arguments, into: cut, after: 3) == 130)
        #expect(syncsimStatus(arguments + ["--out", cut]) == 65)
        #expect(syncsimStatus(arguments + ["--out", cut, "--resume"]) == 0)
        let files = [
            "suite.csv", "runs.csv", "clients.csv", "sweeps/modes/sweep.csv",
            "sweeps/modes/sweep_paired.csv", "sweeps/lossy/sweep.csv",
        ]
        for file in files {
            let bytes = try #require(fileBytes("\(whole)/\(file)"))
            #expect(bytes == fileBytes("\(cut)/\(file)"), "\(file) differs after a resume")
        }
        #expect(fileBytes(journal(cut)) == nil)
    }

    /// A failed write of the results (status 3: here a directory where `sweep.csv` goes, the
    /// last file made) rolls the database back, writes no file (`runs.csv`, made first, was
    /// only staged) and keeps the journal; `--resume` then records the sweep once, and writes
    /// the files of a sweep never interrupted. The same for a plain `run` run again.
    @Test func aFailedWriteOfTheResultsLeavesTheDatabaseWithoutThem() throws {
        let (whole, failed) = (try directories.make(), try directories.make())
        #expect(syncsimStatus(Self.sweep + ["--out", whole]) == 0)
        try FileManager.default.createDirectory(
            atPath: failed + "/sweep.csv", withIntermediateDirectories: false)
        #expect(syncsimStatus(Self.sweep + ["--out", failed]) == 3)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: failed).sorted() == [
                URL(fileURLWithPath: journal(failed)).lastPathComponent, "results.sqlite",
                "sweep.csv",
            ])
        let store = try ResultStore(path: failed + "/results.sqlite", access: .readOnly)
        #expect(try store.runs().isEmpty)
        #expect(try store.sweeps().isEmpty)
        #expect(try lines(journal(failed)).count == 7)

        try FileManager.default.removeItem(atPath: failed + "/sweep.csv")
        #expect(syncsimStatus(Self.sweep + ["--out", failed, "--resume"]) == 0)
        #expect(try store.runs().count == 6)
        #expect(try store.sweeps().count == 1)
        for file in Self.files {
            let bytes = try #require(fileBytes("\(whole)/\(file)"))
            #expect(bytes == fileBytes("\(failed)/\(file)"), "\(file) differs")
        }
        #expect(fileBytes(journal(failed)) == nil)

        let run = ["run", "--clients", "8", "--duration", "30m", "--quiet"]
        let single = try directories.make()
        try FileManager.default.createDirectory(
            atPath: single + "/timings.csv", withIntermediateDirectories: false)
        #expect(syncsimStatus(run + ["--out", single]) == 3)
        #expect(fileBytes(single + "/runs.csv") == nil)
        let runs = try ResultStore(path: single + "/results.sqlite", access: .readOnly)
        #expect(try runs.runs().isEmpty)
        try FileManager.default.removeItem(atPath: single + "/timings.csv")
        #expect(syncsimStatus(run + ["--out", single]) == 0)
        #expect(try runs.runs().count == 1)
    }

    /// The time left on a progress line: the time so far over the runs this process made
    /// (not those read back), times the runs to go.
    @Test func progressLinesSayTheTimeLeft() {
        let started = ContinuousClock.now
        let progress = SweepProgress(started: started, total: 10, readBack: 2)
        let later = started + .seconds(30)
        #expect(progress.left(done: 5, now: later) == ", about 50s left")  // 30 s / 3 × 5
        #expect(progress.left(done: 3, now: later) == ", about 3m30s left")  // 30 s / 1 × 7
        #expect(progress.left(done: 10, now: later) == "")  // none to go
        #expect(progress.left(done: 2, now: later) == "")  // none run yet
        #expect(
            progress.left(done: 9, now: started + .milliseconds(100)) == ", under a second left")
        // The wall-time line counts only the runs made here.
        var scenario = Scenario()
        scenario.clientsCount = 2
        scenario.durationSeconds = 60
        let result = World(scenario: scenario, seed: 1).run()
        let outcomes = [2, 3, 5].map { SweepOutcome(result: result, wall: .seconds($0)) }
        #expect(SweepSummaryPrinter.secondsOfRuns(outcomes, notIn: [1]) == 7)
        #expect(SweepSummaryPrinter.readBackNote(1) == "; 1 more read back from the journal")
        #expect(SweepSummaryPrinter.readBackNote(0) == "")
        #expect(SweepProgress.text(seconds: 192) == "3m12s")
        #expect(SweepProgress.text(seconds: 3_725) == "1h02m")
        #expect(SweepProgress.text(seconds: 90_061) == "1d01h")
    }

    /// An entry gives back the run it was made of, timeline, checkpoints and all, and the
    /// full range of a 64-bit digest survives JSON.
    @Test func anEntryGivesBackItsRun() throws {
        var scenario = Scenario()
        scenario.clientsCount = 6
        scenario.durationSeconds = 3_600
        let world = World(scenario: scenario, seed: 3)
        world.checkpointInterval = 500
        world.timelineIntervalNs = 600 * Time.nanosecondsPerSecond
        let result = world.run()
        let outcome = SweepOutcome(
            result: result, checkpoints: world.checkpoints, timeline: world.timeline,
            wall: .nanoseconds(1_234_567_891))
        #expect(!outcome.timeline.isEmpty && !outcome.checkpoints.isEmpty)
        let job = SweepPlan.Job(variant: 0, seed: 3, scenario: scenario)
        let entry = SweepJournal.Entry(job: 4, of: job, outcome: outcome)
        let data = try SweepJournal.encoder().encode(entry)
        #expect(!data.contains(UInt8(ascii: "\n")))  // one line
        let back = try JSONDecoder().decode(SweepJournal.Entry.self, from: data).outcome
        #expect(back.result == result)
        #expect(back.timeline == outcome.timeline && back.checkpoints == outcome.checkpoints)
        #expect(back.wall == outcome.wall)

        let largest = Data(#"{"value":18446744073709551615}"#.utf8)
        let digest = try JSONDecoder().decode(TraceDigest.self, from: largest)
        #expect(digest.value == UInt64.max)
        #expect(
            try JSONDecoder().decode(TraceDigest.self, from: JSONEncoder().encode(digest)) == digest
        )
    }
}
