import ArgumentParser
import Foundation
import Simulation
import Testing

@testable import SyncSimCLI

/// `syncsim run` end to end, in process: determinism of the files it writes, and every
/// bad-input case with its documented status, leaving existing outputs untouched.
@Suite(.serialized) final class RunCommandTests {
    static let small = ["--clients", "30", "--duration", "2h", "--quiet"]

    private let directories = TemporaryDirectories()

    func temporaryDirectory() throws -> String { try directories.make() }
    func status(_ arguments: [String]) -> Int32 { syncsimStatus(arguments) }
    func bytes(_ path: String) -> Data? { fileBytes(path) }

    @Test func sameSeedGivesByteIdenticalCSV() throws {
        let first = try temporaryDirectory()
        let second = try temporaryDirectory()
        let other = try temporaryDirectory()
        #expect(status(["run", "--seed", "11", "--out", first] + Self.small) == 0)
        // Checkpoints and the timeline change no result: the second run takes them.
        #expect(
            status(
                [
                    "run", "--seed", "11", "--out", second, "--checkpoints", "1000", "--timeline",
                    "30m", "--writes",
                ]
                    + Self.small) == 0)
        #expect(status(["run", "--seed", "12", "--out", other] + Self.small) == 0)
        let checkpoints = try #require(csvColumn("trace_digest", in: "\(second)/checkpoints.csv"))
        let events = try #require(csvColumn("events", in: "\(second)/checkpoints.csv"))
        #expect(checkpoints.count > 3)
        #expect(events.dropLast().enumerated().allSatisfy { $1 == String(($0 + 1) * 1000) })
        #expect(csvColumn("events_count", in: "\(second)/runs.csv") == [events.last!])
        #expect(csvColumn("trace_digest", in: "\(second)/runs.csv") == [checkpoints.last!])
        #expect(!FileManager.default.fileExists(atPath: "\(first)/checkpoints.csv"))
        // The timeline: four half hours and the rest (healing); its counts add up to the run's.
        let timeline = "\(second)/timeline.csv"
        let ends = try #require(csvColumn("end_ns", in: timeline))
        #expect(Array(ends.prefix(4)) == ["1800", "3600", "5400", "7200"].map { $0 + "000000000" })
        #expect(ends.count == 5 && UInt64(ends[4])! >= 7_200_000_000_000)
        #expect(csvColumn("events", in: timeline)?.last == "healing")
        #expect(csvColumn("clients_in_reset", in: timeline)?.last == "0")
        for (column, total) in [
            ("uploads", "uploads"), ("writes_made", "writes_made"), ("resets_ended", "resets"),
            ("resets_started", "resets"), ("messages_lost", "messages_lost"),
        ] {
            let sum = try #require(csvColumn(column, in: timeline)).reduce(0) { $0 + Int($1)! }
            #expect(csvColumn(total, in: "\(second)/runs.csv") == [String(sum)], "\(column)")
        }
        // writes.csv: one row per write, its states counted as runs.csv counts them.
        let states = try #require(csvColumn("state", in: "\(second)/writes.csv"))
        #expect(csvColumn("writes_made", in: "\(second)/runs.csv") == [String(states.count)])
        for state in ["synced", "lost_to_restore", "pending", "discarded_by_reset"] {
            #expect(
                csvColumn("writes_\(state)", in: "\(second)/runs.csv")
                    == [String(states.filter { $0 == state }.count)], "\(state)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(first)/writes.csv"))
        for table in ["runs", "clients"] {
            let a = try #require(bytes("\(first)/\(table).csv"))
            #expect(a == bytes("\(second)/\(table).csv"), "\(table).csv differs for the same seed")
            #expect(
                a != bytes("\(other)/\(table).csv"), "\(table).csv identical for different seeds")
        }
        let header = String(decoding: try #require(bytes("\(first)/runs.csv")), as: UTF8.self)
            .components(separatedBy: "\r\n")[0]
        #expect(
            header.hasPrefix(
                "run_id,seed,scenario_name,scenario_hash,options_json,git_commit,toolchain,trace_digest"
            ))
        #expect(header.contains("writes_lost_to_restore"))
        #expect(header.contains("resets208"))
    }

    @Test func aMalformedScenarioExits2AndWritesNothing() throws {
        let directory = try temporaryDirectory()
        let scenario = directory + "/bad.json"
        try Data("{ \"clientsCount\": -3 }".utf8).write(to: URL(fileURLWithPath: scenario))
        #expect(status(["run", scenario, "--out", directory + "/out"]) == 2)
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
    }

    @Test func unknownOptionsAndOutOfRangeValuesExit64() {
        #expect(status(["run", "--speed", "3"]) == 64)
        #expect(status(["run", "--clients", "0"]) == 64)
        #expect(status(["run", "--clients", "1000000"]) == 64)
        #expect(status(["run", "--duration", "5 weeks"]) == 64)
        #expect(status(["run", "--duration", "400d"]) == 64)
        #expect(status(["run", "--seed", "-1"]) == 64)
        #expect(status(["run", "--checkpoints", "0"]) == 64)
        #expect(status(["run", "--timeline", "0"]) == 64)
        #expect(status(["run", "--timeline", "1s", "--duration", "366d", "--quiet"]) == 64)
    }

    @Test func anOutputPathThatIsAFileExits3AndIsUntouched() throws {
        let directory = try temporaryDirectory()
        let file = directory + "/not-a-directory"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: file))
        #expect(status(["run", "--out", file] + Self.small) == 3)
        #expect(bytes(file) == Data("keep me".utf8))
    }

    @Test func aCorruptResultsDatabaseExits3AndIsUntouched() throws {
        let directory = try temporaryDirectory()
        let database = directory + "/results.sqlite"
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try garbage.write(to: URL(fileURLWithPath: database))
        try Data("previous,csv\r\n".utf8).write(to: URL(fileURLWithPath: directory + "/runs.csv"))
        #expect(status(["run", "--out", directory] + Self.small) == 3)
        #expect(bytes(database) == garbage)
        #expect(bytes(directory + "/runs.csv") == Data("previous,csv\r\n".utf8))
    }

    /// Healing may last 1 s but reconnecting takes 30 s: the run must fail, print the
    /// reproduction line and leave a capsule that `Data/seeds/` can take as it is.
    @Test func aFailingRunExits1AndWritesACapsule() throws {
        let directory = try temporaryDirectory()
        let scenario = directory + "/failing.json"
        let json = """
            { "name": "failing", "clientsCount": 20, "partitionsCount": 2, "durationSeconds": 3600,
              "network": { "lossPerMillion": 200000, "reconnectSecondsMin": 30, "reconnectSecondsMax": 60 },
              "healing": { "secondsMax": 1 } }
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: scenario))
        #expect(status(["run", scenario, "--seed", "3", "--out", directory, "--quiet"]) == 1)
        let capsule = try #require(bytes(directory + "/capsule-seed-3.json"))
        let fields = try #require(try JSONSerialization.jsonObject(with: capsule) as? [String: Any])
        #expect(fields["seed"] as? Int == 3)
        #expect(fields["scenario"] as? String == scenario)
        #expect((fields["failure"] as? String)?.contains("not quiescent") == true)
        #expect((fields["reproduce"] as? String) == "syncsim run \(scenario) --seed 3")
        #expect((fields["digest"] as? String)?.count == 16)
    }

    @Test func theResetModeOverrideIsRecordedAndChecked() throws {
        let directory = try temporaryDirectory()
        let arguments = ["run", "--seed", "4", "--out", directory, "--reset-mode", "manual"]
        #expect(status(arguments + Self.small) == 0)
        let csv = String(decoding: try #require(bytes("\(directory)/runs.csv")), as: UTF8.self)
        let lines = csv.components(separatedBy: "\r\n")
        let header = lines[0].components(separatedBy: ",")
        let row = lines[1]
        #expect(row.contains(#"""resetMode"":""manual"""#))
        let column = try #require(header.firstIndex(of: "reset_mode"))
        // options_json holds commas inside quotes: read the column from the end instead.
        let fromEnd = header.count - column
        let cells = row.components(separatedBy: ",")
        #expect(cells[cells.count - fromEnd] == "4")
        #expect(status(["run", "--reset-mode", "recover", "--out", directory]) == 64)
    }

    @Test func theBackupIntervalOverrideIsRecordedAndChecked() throws {
        let directory = try temporaryDirectory()
        let arguments = ["run", "--seed", "4", "--out", directory, "--backup-interval", "30m"]
        #expect(status(arguments + Self.small) == 0)
        let csv = String(decoding: try #require(bytes("\(directory)/runs.csv")), as: UTF8.self)
        #expect(csv.contains(#"""backupInterval"":""30m"""#))
        // Backups every 30 min of a 2 h run: at 0, 30, 60, 90 and 120 min (the scenario's own
        // interval, 6 h, would give one).
        let header = csv.components(separatedBy: "\r\n")[0].components(separatedBy: ",")
        let cells = csv.components(separatedBy: "\r\n")[1].components(separatedBy: ",")
        let column = try #require(header.firstIndex(of: "backups"))
        #expect(cells[cells.count - (header.count - column)] == "5")
        #expect(RunCommand.parseBackupInterval("0") == 0)
        #expect(RunCommand.parseBackupInterval("6h") == 21_600)
        #expect(RunCommand.parseBackupInterval("-1") == nil)
        #expect(status(["run", "--backup-interval", "often", "--out", directory]) == 64)
    }

    /// `--set` changes the scenario as the file would: recorded, replayed by the reproduction
    /// line, and a field set to the value it has changes nothing.
    @Test func settingsAreAppliedAndRecorded() throws {
        func digest(_ arguments: [String]) throws -> String? {
            let directory = try temporaryDirectory()
            #expect(
                status(["run", "--seed", "4", "--out", directory] + arguments + Self.small) == 0)
            return csvColumn("trace_digest", in: "\(directory)/runs.csv")?.first
        }
        let plain = try digest([])
        #expect(try digest(["--set", "workload.listPercent=10"]) == plain)
        #expect(try digest(["--set", "workload.listPercent=40"]) != plain)
        let directory = try temporaryDirectory()
        let arguments = ["run", "--set", "workload.listPercent=40", "--out", directory]
        #expect(status(arguments + Self.small) == 0)
        let csv = String(decoding: try #require(bytes("\(directory)/runs.csv")), as: UTF8.self)
        #expect(csv.contains(#"""set"":[""workload.listPercent=40""]"#))
        var command = try #require(try SyncSimCommand.parseAsRoot(arguments) as? RunCommand)
        command.settings.append("name=two words")
        #expect(
            command.reproduceLine(seed: 1)
                == "syncsim run --seed 1 --set workload.listPercent=40 --set 'name=two words'")
        #expect(status(["run", "--set", "workload.listPercnt=4", "--out", directory]) == 2)
        #expect(status(["run", "--set", "listPercent", "--out", directory]) == 64)
    }

    /// With cohorts, `runs.csv` gives each cohort's figures, and they add up to the run's;
    /// `clients.csv` gives each client's cohort and where its writes ended; a cohort's own crash
    /// rate crashes only its apps. Without cohorts, `runs.csv` has no cohort columns.
    @Test func cohortsAreReportedAndAddUp() throws {
        let directory = try temporaryDirectory()
        let scenario = directory + "/cohorts.json"
        let json = """
            { "name": "cohorts", "clientsCount": 20, "partitionsCount": 4, "durationSeconds": 3600,
              "faults": [ { "kind": "restoreFromBackup", "atSeconds": 3000 } ],
              "server": { "backupIntervalSeconds": 1200 },
              "cohorts": [ { "name": "busy", "clientsPercent": 30,
                             "workload": { "writesPerMinuteOnline": 5 },
                             "crashes": { "appCrashesPerDay": 48 } } ] }
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: scenario))
        #expect(
            status(["run", scenario, "--out", directory, "--quiet", "--timeline", "10m"]) == 0)
        let runs = "\(directory)/runs.csv"
        func number(_ column: String, _ path: String) throws -> [Int] {
            try #require(csvColumn(column, in: path)).map { Int($0)! }
        }
        #expect(try number("cohort0_clients", runs) == [6])
        #expect(try number("cohort1_clients", runs) == [14])
        #expect(csvColumn("cohort2_clients", in: runs) == nil)
        let clients = "\(directory)/clients.csv"
        #expect(
            try number("cohort", clients) == Array(repeating: 0, count: 6)
                + Array(repeating: 1, count: 14))
        for column in [
            "writes_made", "writes_synced", "writes_lost_to_restore", "resets", "app_crashes",
        ] {
            let total = try number(column, runs)[0]
            #expect(
                try number("cohort0_" + column, runs)[0] + number("cohort1_" + column, runs)[0]
                    == total, "\(column)")
            #expect(try number(column, clients).reduce(0, +) == total, "\(column)")
        }
        #expect(try number("writes_lost_to_restore", runs)[0] > 0)
        // Only the busy cohort's apps crash at random.
        #expect(try number("cohort0_app_crashes", runs)[0] > 0)
        #expect(try number("cohort1_app_crashes", runs)[0] == 0)
        // Five writes a minute against one: the busy cohort writes more per client.
        #expect(
            try number("cohort0_writes_made", runs)[0] * 14 > number("cohort1_writes_made", runs)[0]
                * 6 * 2)

        // The timeline per cohort: each cohort's counts add up to its runs.csv columns, and
        // in every row the cohorts' figures add up to the run-wide ones.
        let timeline = "\(directory)/timeline.csv"
        for column in ["writes_made", "app_crashes"] {
            #expect(
                try number("cohort0_" + column, timeline).reduce(0, +)
                    == number("cohort0_" + column, runs)[0], "\(column)")
        }
        for column in CohortTimelineFigures.columns {
            let total = try number(column, timeline)
            let split = zip(try number("cohort0_" + column, timeline),
                            try number("cohort1_" + column, timeline)).map { $0 + $1 }
            #expect(split == total, "\(column)")
        }
        #expect(try number("resets_started", timeline).reduce(0, +) > 0)
        #expect(
            try number("cohort0_resets_ended", timeline).reduce(0, +)
                + number("cohort1_resets_ended", timeline).reduce(0, +)
                == number("reset_duration_ns_count", runs)[0])
        #expect(csvColumn("cohort2_writes_made", in: timeline) == nil)
        // Read back as written (`sweep` and `combine` average them).
        let text = String(decoding: try #require(fileBytes(timeline)), as: UTF8.self)
        let samples = try #require(SweepTimeline.parse(text))
        #expect(samples.allSatisfy { $0.cohorts.count == 2 })
        #expect(RunCommand.timelineText(samples) == text)

        let plain = try temporaryDirectory()
        #expect(status(["run", "--out", plain, "--timeline", "1h"] + Self.small) == 0)
        #expect(csvColumn("cohort0_writes_made", in: "\(plain)/timeline.csv") == nil)
        let header = try #require(csvColumn("run_id", in: "\(plain)/runs.csv")).count
        #expect(header == 1)
        #expect(csvColumn("cohort0_clients", in: "\(plain)/runs.csv") == nil)
        #expect(try number("cohort", "\(plain)/clients.csv").allSatisfy { $0 == 0 })
    }

    @Test func durationsParse() {
        #expect(RunCommand.parseDuration("3600") == 3_600)
        #expect(RunCommand.parseDuration("90s") == 90)
        #expect(RunCommand.parseDuration("30m") == 1_800)
        #expect(RunCommand.parseDuration("6h") == 21_600)
        #expect(RunCommand.parseDuration("1d") == 86_400)
        #expect(RunCommand.parseDuration("0") == nil)
        #expect(RunCommand.parseDuration("h") == nil)
        #expect(RunCommand.parseDuration("1.5h") == nil)
        #expect(RunCommand.parseDuration("367d") == nil)
    }
}
