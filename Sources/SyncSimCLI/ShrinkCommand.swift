import ArgumentParser
import Foundation
import Measurement
import Simulation

/// `syncsim shrink`: from a failed run's capsule, the smallest run of the same seed this search
/// finds that still fails the same way (`Shrinker`).
public struct ShrinkCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "shrink",
        abstract: "Shrink a failed run to a smaller one that fails the same way.",
        discussion: """
            Reads the capsule a failed run or sweep wrote (capsule-seed-N.json), runs it again, \
            then tries smaller runs of the same seed: half the clients, half the duration, the \
            swarm's drawn faults written out, faults removed one by one or moved earlier, \
            features switched off \
            (crashes, loss, clock skew, list edits, ...), fewer writes and objects. It keeps \
            each run that still fails the same way (the first failure, numbers aside; any \
            failure with --any-failure). Writes DIR/shrink.csv (every run tried) and \
            DIR/capsule-shrunk-seed-N.json, and prints the `syncsim run` line of the smallest \
            failing run. Run it from the directory the failed run ran in (the capsule's \
            scenario path is relative to it). Exit status: 0 when it wrote a failing run \
            (shrunk or not); 1 when the capsule's run passes at this commit (nothing to \
            shrink); 2 for a capsule or scenario that cannot be read; 3 when DIR cannot be \
            written.
            """
    )

    @Argument(help: "The capsule of a failed run (JSON, as `run` and `sweep` write it).")
    public var capsule: String

    @Option(
        name: .customLong("max-runs"),
        help: "The most runs the search makes, the capsule's own included (1 ... 100000).")
    public var maxRuns: Int = 200

    @Flag(
        name: .customLong("any-failure"),
        help: "Keep a smaller run that fails any check, not only the capsule's first failure.")
    public var anyFailure = false

    @Option(name: .customLong("out"), help: "The results directory (created if missing).")
    public var outputDirectory: String = "out"

    @Flag(help: "Print only the final reproduce line.")
    public var quiet = false

    public init() {}

    public func validate() throws {
        if maxRuns < 1 || maxRuns > 100_000 {
            throw ValidationError(
                "--max-runs \(maxRuns) is outside 1...100000; give the most runs the search may make."
            )
        }
    }

    public func run() throws {
        let capsule = try Self.readCapsule(self.capsule)
        let settings = capsule.settings ?? []
        for text in settings where ScenarioSetting(text) == nil {
            throw Self.capsuleError(
                self.capsule, field: "settings",
                problem: "'\(text)' is not PATH=VALUE", fix: "write each setting as --set takes it")
        }
        // The scenario's bytes, as `run` reads them.
        let scenarioPath = capsule.scenario == "default" ? nil : capsule.scenario
        let (base, bytes) = try CommandSupport.loadScenario(
            scenarioPath, settings: settings.compactMap(ScenarioSetting.init))
        let file =
            scenarioPath ?? (Scenario.defaultScenarioPath + " (embedded)")
        let shrinker = Shrinker(
            baseBytes: bytes, file: file, resetMode: capsule.resetMode,
            backupIntervalSeconds: capsule.backupIntervalSeconds, runsMax: maxRuns,
            anyFailure: anyFailure, run: Shrinker.worldRun(seed: capsule.seed))
        var sized = base
        sized.applyOverrides(
            clientsCount: capsule.clients, durationSeconds: capsule.durationSeconds)
        let start = ShrinkInput(
            clients: sized.clientsCount, durationSeconds: sized.durationSeconds,
            settings: settings)
        if !quiet {
            print(
                "shrink: \(self.capsule): seed \(capsule.seed), \(start.clients) clients, \(start.durationSeconds) s, commit=\(BuildInfo.gitCommit)"
            )
        }
        // Fail before simulating if the results cannot be written.
        do {
            try OutputDirectory.prepare(outputDirectory)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(3)
        }

        let started = ContinuousClock.now
        let report = shrinker.shrink(start)
        let wall = ContinuousClock.now - started
        let first = report.trials[0]
        guard first.verdict == .kept else {
            let reason =
                first.verdict == .invalid
                ? "its scenario is not valid: \(first.failure)"
                : "it passes every check at this commit (digest=\(first.digest)\(capsule.digest.map { "; the capsule's: \($0)" } ?? ""))"
            FileHandle.standardError.write(
                Data("shrink: nothing to shrink: \(self.capsule): \(reason)\n".utf8))
            throw ExitCode(1)
        }
        if let recorded = capsule.digest, recorded != first.digest, !quiet {
            print(
                "note: the run's digest is \(first.digest), the capsule's \(recorded) (another commit?); it still fails, so the search goes on"
            )
        }

        let result = report.result
        let overrides = RunOverrides(
            seed: capsule.seed, clients: result.input.clients,
            duration: String(result.input.durationSeconds), resetMode: capsule.resetMode,
            backupInterval: capsule.backupIntervalSeconds.map(String.init),
            set: result.input.settings.isEmpty ? nil : result.input.settings)
        let reproduce = overrides.reproduceLine(scenario: scenarioPath, seed: capsule.seed)
        let shrunk = FailureCapsule(
            scenario: capsule.scenario, seed: capsule.seed, clients: result.input.clients,
            durationSeconds: result.input.durationSeconds, resetMode: capsule.resetMode,
            backupIntervalSeconds: capsule.backupIntervalSeconds,
            settings: overrides.set, failure: result.failure, fixedIn: "",
            commit: BuildInfo.gitCommit, digest: result.digest, reproduce: reproduce)
        let capsulePath = "\(outputDirectory)/capsule-shrunk-seed-\(capsule.seed).json"
        do {
            try AtomicFile.write(all: [
                (Self.trialsText(report.trials), "\(outputDirectory)/shrink.csv"),
                (try RunRecord.canonicalJSON(shrunk) + "\n", capsulePath),
            ])
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(3)
        }

        if !quiet {
            print("failure: \(first.failure)")
            if let signature = report.signature { print("kept when a failure reads: \(signature)") }
            print("")
            for trial in report.trials.dropFirst() where trial.verdict == .kept {
                print("  kept: \(trial.step) (\(trial.events) events)")
            }
            let kept = report.trials.filter { $0.verdict == .kept }.count - 1
            print("")
            print(
                "\(report.trials.count) runs (\(kept) kept) in \(Self.seconds(wall)) s\(report.budgetSpent ? "; the run budget (--max-runs \(maxRuns)) ran out before the search was done" : "")"
            )
            func size(_ trial: ShrinkTrial) -> String {
                "\(trial.input.clients) client\(trial.input.clients == 1 ? "" : "s"), \(trial.input.durationSeconds) s, \(trial.faults) fault\(trial.faults == 1 ? "" : "s"), \(trial.events) events"
            }
            print("from \(size(first))")
            print("to   \(size(result))")
            print("failure: \(result.failure)")
            print("Runs tried: \(outputDirectory)/shrink.csv")
            print("capsule: \(capsulePath)")
        }
        print("reproduce: \(reproduce)")
    }

    static func seconds(_ duration: Duration) -> String {
        let parts = duration.components
        return String(format: "%.1f", Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    /// `shrink.csv`: a header and one record per run tried, in order: `run`, `step`, `verdict`
    /// (`kept`, `other-failure`, `passed`, `invalid`), `clients`, `duration_s`, `faults`,
    /// `events`, `digest`, `failure`, `settings` (the `--set` texts, joined by spaces).
    static func trialsText(_ trials: [ShrinkTrial]) -> String {
        CSV.line([
            "run", "step", "verdict", "clients", "duration_s", "faults", "events", "digest",
            "failure", "settings",
        ])
            + trials.enumerated().map { index, trial in
                CSV.line([
                    String(index), trial.step, trial.verdict.rawValue,
                    String(trial.input.clients), String(trial.input.durationSeconds),
                    String(trial.faults), String(trial.events), trial.digest, trial.failure,
                    trial.input.settings.joined(separator: " "),
                ])
            }.joined()
    }

    /// The capsule at `path`; exits 2 with error 107 when it cannot be read or is not one.
    static func readCapsule(_ path: String) throws -> FailureCapsule {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw capsuleError(
                path, field: "", problem: "the file does not exist or cannot be read",
                fix: "pass the capsule-seed-N.json a failed run or sweep wrote")
        }
        do {
            return try JSONDecoder().decode(FailureCapsule.self, from: data)
        } catch DecodingError.keyNotFound(let key, let context) {
            let field = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            throw capsuleError(
                path, field: field, problem: "the field is missing",
                fix: "pass a capsule a failed run or sweep wrote (it has scenario, seed, failure)")
        } catch DecodingError.typeMismatch(_, let context) {
            throw capsuleError(
                path, field: context.codingPath.map(\.stringValue).joined(separator: "."),
                problem: "wrong type: \(context.debugDescription)",
                fix: "give the field the type a capsule has (see README, \"syncsim shrink\")")
        } catch DecodingError.dataCorrupted(let context) {
            throw capsuleError(
                path, field: context.codingPath.map(\.stringValue).joined(separator: "."),
                problem: "not valid: \(context.debugDescription)",
                fix: "pass a capsule a failed run or sweep wrote, as JSON")
        } catch {
            throw capsuleError(
                path, field: "", problem: "not a capsule (\(error))",
                fix: "pass a capsule a failed run or sweep wrote")
        }
    }

    /// Prints `error 107: …` and returns the exit status 2 to throw.
    static func capsuleError(_ path: String, field: String, problem: String, fix: String)
        -> ExitCode
    {
        let location = field.isEmpty ? path : "\(path): field '\(field)'"
        FileHandle.standardError.write(
            Data("error 107: \(location): \(problem). Fix: \(fix)\n".utf8))
        return ExitCode(2)
    }
}
