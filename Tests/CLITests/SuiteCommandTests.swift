import Foundation
import Measurement
import Simulation
import Testing

@testable import SyncSimCLI

/// `syncsim suite` end to end, in process: each sweep of a suite is the sweep `syncsim sweep`
/// makes with its options, file for file; a suite is held sweep by sweep against a baseline;
/// a bad suite is refused naming the file and the field, and writes nothing.
@Suite(.serialized) final class SuiteCommandTests {
    private let directories = TemporaryDirectories()

    /// Writes `text` to `name` in `directory`; returns the path.
    private func write(_ text: String, _ name: String, in directory: String) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A tiny scenario file, and a suite of two sweeps: the embedded default at 10 clients for
    /// an hour in two modes, and the tiny scenario (a path relative to the suite) with loss.
    private func smallSuite(
        in directory: String, name: String = "small", lossy: String = "50000",
        extra: String = ""
    ) throws -> String {
        _ = try write(
            #"{ "name": "tiny", "clientsCount": 8, "durationSeconds": 3600 }"#,
            "scenarios/tiny.json", in: directory)
        return try write(
            """
            {
              "name": "\(name)",
              "sweeps": [
                { "name": "modes", "seeds": "3-4", "resetModes": "recoverUnsyncedChanges,manual",
                  "clients": 10, "duration": "1h" },
                { "name": "lossy", "scenario": "../scenarios/tiny.json", "seeds": 2,
                  "set": ["network.lossPerMillion=\(lossy)"] }\(extra)
              ]
            }
            """, "suites/\(name).json", in: directory)
    }

    @Test func eachSweepIsTheSweepItsOptionsMakeAndTheFilesRepeat() throws {
        let directory = try directories.make()
        let suite = try smallSuite(in: directory)
        let (first, again, alone) = (directory + "/a", directory + "/b", directory + "/sweep")
        #expect(syncsimStatus(["suite", suite, "--out", first, "--jobs", "2", "--quiet"]) == 0)
        #expect(syncsimStatus(["suite", suite, "--out", again, "--jobs", "1", "--quiet"]) == 0)
        #expect(
            syncsimStatus([
                "sweep", "--seeds", "3-4", "--reset-modes", "recoverUnsyncedChanges,manual",
                "--clients", "10", "--duration", "1h", "--out", alone, "--quiet",
            ]) == 0)

        #expect(csvColumn("sweep", in: first + "/suite.csv") == ["modes", "lossy"])
        #expect(csvColumn("runs", in: first + "/suite.csv") == ["4", "2"])
        #expect(csvColumn("runs_passed", in: first + "/suite.csv") == ["4", "2"])
        #expect(csvColumn("scenario", in: first + "/suite.csv") == ["default", "tiny"])
        // The first sweep is `syncsim sweep` with its options, file for file and run for run.
        for file in ["sweep.csv", "sweep_paired.csv"] {
            #expect(fileBytes(first + "/sweeps/modes/" + file) == fileBytes(alone + "/" + file))
        }
        let digests = try #require(csvColumn("trace_digest", in: first + "/runs.csv"))
        #expect(Array(digests.prefix(4)) == csvColumn("trace_digest", in: alone + "/runs.csv"))
        #expect(csvColumn("seed", in: first + "/runs.csv") == ["3", "4", "3", "4", "1", "2"])
        // The tiny scenario lost messages; its path was read relative to the suite file.
        let lost = try #require(csvColumn("messages_lost", in: first + "/runs.csv"))
        #expect(lost.suffix(2).allSatisfy { Int($0)! > 0 })
        // One job or two: the same deterministic files, byte for byte.
        for file in [
            "suite.csv", "runs.csv", "clients.csv", "sweeps/modes/sweep.csv",
            "sweeps/lossy/sweep_paired.csv",
        ] {
            #expect(fileBytes(first + "/" + file) == fileBytes(again + "/" + file), "\(file)")
        }
        // Recorded as one suite of two sweeps, and the timings kept apart.
        let store = try ResultStore(path: first + "/results.sqlite", access: .readOnly)
        let suites = try store.suites()
        #expect(suites.map(\.record.sweepNames) == [["modes", "lossy"]])
        #expect(try store.sweeps().count == 2)
        let seconds = try #require(csvColumn("run_seconds", in: first + "/suite_timings.csv"))
        #expect(seconds.count == 2 && seconds.allSatisfy { Double($0)! > 0 })
        #expect(csvColumn("baseline_run_seconds", in: first + "/suite_timings.csv") == ["", ""])
        #expect(!FileManager.default.fileExists(atPath: first + "/suite_compare.csv"))
        // `export` makes suite.csv again from the database, byte for byte, and lists the suites.
        let exported = directory + "/exported.csv"
        let database = first + "/results.sqlite"
        #expect(
            syncsimStatus([
                "export", "--database", database, "--table", "suite", "--suite", "1", "--output",
                exported,
            ]) == 0)
        #expect(fileBytes(exported) == fileBytes(first + "/suite.csv"))
        #expect(
            syncsimStatus([
                "export", "--database", database, "--table", "suites", "--output", exported,
            ])
                == 0)
        #expect(csvColumn("sweep", in: exported) == ["modes", "lossy"])
        #expect(csvColumn("sweep_id", in: exported) == ["1", "2"])
        #expect(
            syncsimStatus(["export", "--database", database, "--table", "suite", "--suite", "9"])
                == 65)
        #expect(syncsimStatus(["export", "--database", database, "--suite", "1"]) == 64)
    }

    @Test func aBaselineIsHeldSweepBySweep() throws {
        let directory = try directories.make()
        let suite = try smallSuite(in: directory)
        let (baseline, same, out) = (directory + "/base", directory + "/same", directory + "/out")
        #expect(syncsimStatus(["suite", suite, "--out", baseline, "--quiet"]) == 0)

        // The same suite again: identical, sweep by sweep, and the gate passes.
        #expect(
            syncsimStatus([
                "suite", suite, "--out", same, "--baseline", baseline, "--require-identical",
                "--quiet",
            ]) == 0)
        #expect(
            csvColumn("verdict", in: same + "/suite_compare.csv") == ["identical", "identical"])
        #expect(csvColumn("run_pairs", in: same + "/suite_compare.csv") == ["4", "2"])
        #expect(
            csvColumn("trace_digest", in: same + "/runs.csv")
                == csvColumn("trace_digest", in: baseline + "/runs.csv"))
        let ratios = try #require(csvColumn("run_seconds_ratio", in: same + "/suite_timings.csv"))
        #expect(ratios.count == 2 && ratios.allSatisfy { Double($0)! > 0 })
        #expect(
            csvColumn("identical", in: same + "/sweeps/modes/compare_runs.csv")
                == ["1", "1", "1", "1"])

        // The suite changed: "lossy" loses more, "modes" is gone, "extra" is new.
        let changed = try directories.make()
        let extra = #", { "name": "extra", "scenario": "../scenarios/tiny.json", "seeds": 1 }"#
        _ = try smallSuite(in: changed, lossy: "100000", extra: extra)
        let edited = try write(
            String(decoding: try #require(fileBytes(changed + "/suites/small.json")), as: UTF8.self)
                .replacingOccurrences(of: #""name": "modes""#, with: #""name": "modes-renamed""#),
            "suites/small.json", in: changed)
        #expect(
            syncsimStatus([
                "suite", edited, "--out", out, "--baseline", baseline + "/results.sqlite",
                "--require-identical", "--quiet",
            ]) == 1)
        #expect(
            csvColumn("sweep", in: out + "/suite_compare.csv")
                == ["modes-renamed", "lossy", "extra", "modes"])
        #expect(
            csvColumn("verdict", in: out + "/suite_compare.csv")
                == ["new", "changed", "new", "missing"])
        #expect(csvColumn("runs_differing", in: out + "/suite_compare.csv") == ["", "2", "", ""])
        let metrics = try #require(csvColumn("metric", in: out + "/sweeps/lossy/compare.csv"))
        #expect(metrics.contains("messages_lost"))
        // Everything was written before the gate failed; without the gate a change is a result.
        #expect(csvColumn("sweep", in: out + "/suite.csv") == ["modes-renamed", "lossy", "extra"])
        let rerun = directory + "/rerun"
        #expect(
            syncsimStatus(["suite", edited, "--out", rerun, "--baseline", baseline, "--quiet"]) == 0
        )

        // A --set for the whole suite comes before each sweep's own: "lossy" keeps its loss
        // rate (identical), "modes" takes the new one (changed).
        let setAll = directory + "/set"
        #expect(
            syncsimStatus([
                "suite", suite, "--set", "network.lossPerMillion=100000", "--out", setAll,
                "--baseline", baseline, "--quiet",
            ]) == 0)
        #expect(
            csvColumn("verdict", in: setAll + "/suite_compare.csv") == ["changed", "identical"])
        #expect(syncsimStatus(["suite", suite, "--set", "nothing", "--out", setAll]) == 64)

        // --only: a sweep of the file that was not selected is left out, not missing.
        let onlyLossy = directory + "/only"
        #expect(
            syncsimStatus([
                "suite", suite, "--only", "lossy", "--out", onlyLossy, "--baseline", baseline,
                "--require-identical", "--quiet",
            ]) == 0)
        #expect(csvColumn("sweep", in: onlyLossy + "/suite_compare.csv") == ["lossy"])
    }

    @Test func badSuitesAreRefusedNamingTheFieldAndWriteNothing() throws {
        let directory = try directories.make()
        let out = directory + "/out"
        let decode = { (text: String) -> ScenarioError? in
            do throws(ScenarioError) {
                _ = try SuiteSpec.decode(bytes: Array(text.utf8), file: "s.json", directory: "")
                return nil
            } catch {
                return error
            }
        }
        let sweep = #"{ "name": "a", "seeds": 2 }"#
        let cases: [(String, UInt16, String)] = [
            ("{", 102, ""),
            (#"{ "sweeps": [\#(sweep)] }"#, 104, "name"),
            (#"{ "name": "x y", "sweeps": [\#(sweep)] }"#, 105, "name"),
            (#"{ "name": "n", "sweeps": [] }"#, 104, "sweeps"),
            (#"{ "name": "n", "sweeps": [\#(sweep)], "sweep": 1 }"#, 103, "sweep"),
            (#"{ "name": "n", "sweeps": [{ "name": "a", "seed": 2 }] }"#, 103, "sweeps[0].seed"),
            (#"{ "name": "n", "sweeps": [\#(sweep), \#(sweep)] }"#, 106, "sweeps[1].name"),
            (
                #"{ "name": "n", "sweeps": [{ "name": "a", "vary": ["x=1", 2] }] }"#, 104,
                "sweeps[0].vary[1]"
            ),
            (
                #"{ "name": "n", "sweeps": [{ "name": "a", "clients": 0 }] }"#, 105,
                "sweeps[0].clients"
            ),
            (
                #"{ "name": "n", "sweeps": [{ "name": "a", "seeds": true }] }"#, 104,
                "sweeps[0].seeds"
            ),
        ]
        for (text, code, field) in cases {
            let error = decode(text)
            #expect(error?.code.rawValue == code, "\(text)")
            #expect(error?.field == field, "\(text)")
        }

        // The options `sweep` refuses, named by the suite's field.
        let command = try SuiteCommand.parse([directory + "/none.json", "--out", out])
        let refused = { (spec: SuiteSpec.Sweep) -> ScenarioError? in
            do {
                _ = try command.prepare(spec)
                return nil
            } catch let error as ScenarioError {
                return error
            } catch {
                return nil
            }
        }
        var spec = SuiteSpec.Sweep(name: "a", field: "sweeps[3]")
        spec.seeds = "9-1"
        #expect(refused(spec)?.field == "sweeps[3].seeds")
        spec.seeds = "2"
        spec.resetModes = "sometimes"
        #expect(refused(spec)?.field == "sweeps[3].resetModes")
        spec.resetModes = nil
        spec.vary = ["workload.listPercent"]
        #expect(refused(spec)?.field == "sweeps[3].vary")
        spec.vary = []
        spec.duration = "forever"
        let duration = refused(spec)
        #expect(duration?.field == "sweeps[3].duration")
        #expect(duration?.description.contains("`syncsim sweep --duration`") == true)

        // End to end: status 2 for the file, 64 for the command line, 65/66 for the baseline;
        // nothing written in any case.
        let good = try smallSuite(in: directory)
        let unknownField = try write(
            #"{ "name": "n", "sweeps": [{ "name": "a", "jobs": 2 }] }"#, "bad.json", in: directory)
        let missingScenario = try write(
            #"{ "name": "n", "sweeps": [{ "name": "a", "scenario": "nowhere.json" }] }"#,
            "missing.json", in: directory)
        let badSet = try write(
            #"{ "name": "n", "sweeps": [{ "name": "a", "set": ["workload.nothing=1"] }] }"#,
            "badset.json", in: directory)
        #expect(syncsimStatus(["suite", directory + "/absent.json", "--out", out]) == 2)
        #expect(syncsimStatus(["suite", unknownField, "--out", out]) == 2)
        #expect(syncsimStatus(["suite", missingScenario, "--out", out]) == 2)
        #expect(syncsimStatus(["suite", badSet, "--out", out]) == 2)
        #expect(syncsimStatus(["suite", good, "--only", "modes,nope", "--out", out]) == 64)
        #expect(syncsimStatus(["suite", good, "--require-identical", "--out", out]) == 64)
        #expect(
            syncsimStatus(["suite", good, "--baseline", directory + "/no", "--out", out]) == 66)
        let otherSuite = directory + "/other"
        let other = try smallSuite(in: directory, name: "other")
        #expect(
            syncsimStatus([
                "suite", other, "--only", "lossy", "--out", otherSuite, "--quiet",
            ]) == 0)
        // The baseline holds a suite, but not one named "small": 320.
        #expect(syncsimStatus(["suite", good, "--baseline", otherSuite, "--out", out]) == 65)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
