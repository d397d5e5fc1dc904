//! Shrinking a failing run, as property-based testing tools shrink a failing input: from a run
//! that fails a check, try smaller runs of the same seed (fewer clients, a shorter day, fewer
//! faults, fewer features switched on) and keep each one that still fails the same way, until
//! nothing more can be taken away or the run budget is spent. What is left is the failure with
//! as little around it as this search finds: quicker to replay, to log at `trace` and to read.
//!
//! Every candidate is the original scenario file with `--set` overrides and the `--clients` and
//! `--duration` overrides, so the result is one `syncsim run` line. The search is sequential
//! and its order fixed, so the same capsule shrinks the same way every time.

import SyncEngine

/// One run the shrinker tries: the scenario file with `settings`, for the capsule's seed, with
/// these size overrides.
public struct ShrinkInput: Sendable, Hashable {
    public var clients: UInt32
    public var durationSeconds: UInt64
    /// `--set PATH=VALUE` texts, in order, at most one per path.
    public var settings: [String]

    public init(clients: UInt32, durationSeconds: UInt64, settings: [String]) {
        self.clients = clients
        self.durationSeconds = durationSeconds
        self.settings = settings
    }

    /// These settings with `faults` as the scenario's whole fault list (and the file's
    /// duration set to this run's, so that the decoder accepts every fault inside it).
    func withFaults(_ faults: [FaultSpec]) -> ShrinkInput {
        setting("durationSeconds=\(durationSeconds)").setting("faults=" + FaultSpec.json(faults))
    }

    /// These settings with `text` (`PATH=VALUE`) in place of any earlier one for its path.
    func setting(_ text: String) -> ShrinkInput {
        guard let new = ScenarioSetting(text) else { return self }
        var copy = self
        copy.settings.removeAll { ScenarioSetting($0)?.path == new.path }
        copy.settings.append(text)
        return copy
    }
}

/// What a run gave the shrinker.
public struct ShrinkOutcome: Sendable, Equatable {
    public var failures: [String]
    public var digest: String
    /// Every fault the run scheduled: the scenario's, then those its swarm drew.
    public var faults: [FaultSpec]
    public var events: UInt64

    public init(failures: [String], digest: String, faults: [FaultSpec], events: UInt64) {
        self.failures = failures
        self.digest = digest
        self.faults = faults
        self.events = events
    }
}

/// One run of the search.
public struct ShrinkTrial: Sendable, Equatable {
    public enum Verdict: String, Sendable {
        /// The run failed the same way: the search goes on from it.
        case kept
        /// The run failed, but not the same way.
        case otherFailure = "other-failure"
        case passed
        /// The overrides make no valid scenario (the failure column says why).
        case invalid
    }

    public var step: String
    public var input: ShrinkInput
    public var verdict: Verdict
    /// The first failure, or the scenario error of an invalid candidate; empty when it passed.
    public var failure: String
    public var digest: String
    public var events: UInt64
    /// Faults in the run (scheduled and drawn).
    public var faults: Int
}

/// The search and its result.
public struct ShrinkReport: Sendable {
    /// Every run, in order; the first is the run as given.
    public var trials: [ShrinkTrial]
    /// The smallest run that still fails the same way (the first trial when nothing could be
    /// taken away).
    public var result: ShrinkTrial
    /// The first failure of the run as given, its numbers replaced by `#`: what "fails the
    /// same way" means (nil with `anyFailure`).
    public var signature: String?
    /// The run budget ran out before the search had tried everything.
    public var budgetSpent: Bool
}

public struct Shrinker {
    public let baseBytes: [UInt8]
    public let file: String
    public let resetMode: ClientResetMode?
    public let backupIntervalSeconds: UInt64?
    /// The most runs the search makes, the run as given included.
    public var runsMax: Int
    /// Keep a candidate that fails any check, not only the original's first one.
    public var anyFailure: Bool
    let run: (Scenario) -> ShrinkOutcome

    /// A shrinker for the scenario `baseBytes` (read from `file`), with the capsule's fixed
    /// overrides; `run` runs one scenario (tests pass their own).
    public init(
        baseBytes: [UInt8], file: String, resetMode: ClientResetMode?,
        backupIntervalSeconds: UInt64?, runsMax: Int, anyFailure: Bool,
        run: @escaping (Scenario) -> ShrinkOutcome
    ) {
        self.baseBytes = baseBytes
        self.file = file
        self.resetMode = resetMode
        self.backupIntervalSeconds = backupIntervalSeconds
        self.runsMax = runsMax
        self.anyFailure = anyFailure
        self.run = run
    }

    /// Runs `scenario` for `seed` in a world of its own.
    public static func worldRun(seed: UInt64) -> (Scenario) -> ShrinkOutcome {
        { scenario in
            let result = World(scenario: scenario, seed: seed).run()
            return ShrinkOutcome(
                failures: result.failures, digest: result.traceDigest.hex,
                faults: scenario.faults + result.swarmFaults, events: result.eventsProcessed)
        }
    }

    /// The scenario of `input`: the file with its settings, then the size overrides.
    public func scenario(for input: ShrinkInput) throws(ScenarioError) -> Scenario {
        var scenario = try Scenario.decode(
            bytes: baseBytes, file: file, settings: input.settings.compactMap(ScenarioSetting.init))
        scenario.applyOverrides(
            clientsCount: input.clients, durationSeconds: input.durationSeconds,
            resetMode: resetMode, backupIntervalSeconds: backupIntervalSeconds)
        return scenario
    }

    /// What "fails the same way" compares: a failure with its numbers replaced by `#` (so
    /// "client 17" and "client 3" match), without the count of a repeated one, cut before a
    /// second ": " (the details after a check's name, such as which promise recovery broke on
    /// which object).
    public static func signature(_ failure: String) -> String {
        var text = ""
        var inNumber = false
        for character in failure {
            if character.isASCII, character.isNumber {
                if !inNumber { text.append("#") }
                inNumber = true
            } else {
                text.append(character)
                inNumber = false
            }
        }
        if text.hasSuffix(" (# times)") { text.removeLast(" (# times)".count) }
        if let first = text.range(of: ": "),
            let second = text.range(of: ": ", range: first.upperBound..<text.endIndex)
        {
            text = String(text[..<second.lowerBound])
        }
        return text
    }

    /// Settings the search tries to switch off, one at a time, each kept only if the run still
    /// fails the same way: the features a failure most often does not need.
    static let simplifications = [
        "crashes.appCrashesPerDay=0", "network.lossPerMillion=0", "clock.skewMillisecondsMax=0",
        "workload.listPercent=0", "workload.addIntegerPercent=0", "workload.erasePercent=0",
        "network.latencySigma=0", "server.clientMaxOfflineSeconds=0",
        "workload.keyDistribution=\"uniform\"", "network.bandwidthBytesPerSecond=0",
        "server.egressBytesPerSecond=0", "server.backupRetentionSeconds=0", "cohorts=[]",
    ]

    /// Shrinks the failing run `start`. When it does not fail, the report holds that one trial
    /// (verdict `passed`) and nothing else.
    public func shrink(_ start: ShrinkInput) -> ShrinkReport {
        var search = Search(shrinker: self)
        guard let first = search.evaluate("the run as given", start),
            first.trial.verdict == .kept
        else {
            return ShrinkReport(
                trials: search.trials, result: search.trials[0], signature: nil,
                budgetSpent: false)
        }
        let signature = anyFailure ? nil : Self.signature(first.outcome.failures[0])
        search.signature = signature
        search.best = first
        var progressed = true
        while progressed, !search.spent {
            progressed = false
            progressed = search.shrinkSizes() || progressed
            progressed = search.writeOutSwarm() || progressed
            progressed = search.removeFaults() || progressed
            progressed = search.moveFaultsEarlier() || progressed
            progressed = search.simplify() || progressed
            progressed = search.thinWrites() || progressed
        }
        return ShrinkReport(
            trials: search.trials, result: search.best!.trial, signature: signature,
            budgetSpent: search.spent)
    }
}

/// The state of one search: its trials, the best run so far, what has been tried.
private struct Search {
    struct Point {
        var trial: ShrinkTrial
        var scenario: Scenario
        var outcome: ShrinkOutcome
    }

    let shrinker: Shrinker
    var trials: [ShrinkTrial] = []
    var best: Point?
    var signature: String?
    /// Inputs already run (looked up, never iterated).
    var tried: Set<ShrinkInput> = []
    var spent = false

    init(shrinker: Shrinker) { self.shrinker = shrinker }

    /// Runs `input` once (nil when it was run before or the budget is spent) and records it.
    /// Before the first run `signature` is nil: any failure keeps it.
    mutating func evaluate(_ step: String, _ input: ShrinkInput) -> Point? {
        guard !tried.contains(input) else { return nil }
        guard trials.count < shrinker.runsMax else {
            spent = true
            return nil
        }
        tried.insert(input)
        let scenario: Scenario
        do {
            scenario = try shrinker.scenario(for: input)
        } catch {
            trials.append(
                ShrinkTrial(
                    step: step, input: input, verdict: .invalid, failure: error.description,
                    digest: "", events: 0, faults: 0))
            return nil
        }
        let outcome = shrinker.run(scenario)
        let verdict: ShrinkTrial.Verdict
        if outcome.failures.isEmpty {
            verdict = .passed
        } else if let signature {
            verdict =
                outcome.failures.contains { Shrinker.signature($0) == signature }
                ? .kept : .otherFailure
        } else {
            verdict = .kept
        }
        let trial = ShrinkTrial(
            step: step, input: input, verdict: verdict,
            failure: outcome.failures.first ?? "", digest: outcome.digest,
            events: outcome.events, faults: outcome.faults.count)
        trials.append(trial)
        return Point(trial: trial, scenario: scenario, outcome: outcome)
    }

    /// Tries `input`; keeps it as the best run when it fails the same way.
    mutating func attempt(_ step: String, _ input: ShrinkInput) -> Bool {
        guard let point = evaluate(step, input),
            point.trial.verdict == .kept
        else { return false }
        best = point
        return true
    }

    var input: ShrinkInput { best!.trial.input }

    /// Halves the clients, then the duration, while the run still fails; near the end one
    /// client at a time and three quarters of the duration.
    mutating func shrinkSizes() -> Bool {
        var progressed = false
        var changed = true
        while changed, !spent {
            changed = false
            let clients = input.clients
            if clients > 1 {
                var smaller = input
                smaller.clients = clients / 2
                if attempt("clients \(clients) → \(clients / 2)", smaller) {
                    changed = true
                } else if clients <= 16 {
                    smaller.clients = clients - 1
                    changed = attempt("clients \(clients) → \(clients - 1)", smaller)
                }
            }
            let duration = input.durationSeconds
            for shorter in [duration / 2, duration - duration / 4] where shorter >= 60 {
                var candidate = input
                candidate.durationSeconds = shorter
                if attempt("duration \(duration) s → \(shorter) s", candidate) {
                    changed = true
                    break
                }
            }
            progressed = progressed || changed
        }
        return progressed
    }

    /// Turns a swarm's drawn faults into scheduled ones (the same schedule), so that they can
    /// be removed one by one.
    mutating func writeOutSwarm() -> Bool {
        guard let point = best, point.scenario.swarm.faultsPerDay > 0, !spent else { return false }
        let drawn = point.outcome.faults.count - point.scenario.faults.count
        let candidate = input.setting("swarm.faultsPerDay=0").withFaults(point.outcome.faults)
        return attempt(
            "the swarm's \(drawn) drawn faults written out as scheduled faults", candidate)
    }

    /// Removes scheduled faults: halves of the list first, then smaller runs of it, then each
    /// fault alone (the "ddmin" order).
    mutating func removeFaults() -> Bool {
        guard let point = best, !point.scenario.faults.isEmpty else { return false }
        var faults = point.scenario.faults
        var progressed = false
        var size = max(1, faults.count / 2)
        while !spent {
            var start = 0
            while start < faults.count, !spent {
                let end = min(faults.count, start + size)
                let kept = Array(faults[..<start] + faults[end...])
                let removed = faults[start..<end].map { "\($0.kind.rawValue) at \($0.atSeconds) s" }
                let candidate = input.withFaults(kept)
                if attempt("remove \(removed.joined(separator: ", "))", candidate) {
                    faults = kept
                    progressed = true
                } else {
                    start = end
                }
            }
            if size == 1 { break }
            size = max(1, size / 2)
        }
        return progressed
    }

    /// Moves each scheduled fault to half its time, again and again while the run still
    /// fails, so that a shorter run can hold it (the next size step tries one); then halves
    /// each network outage's length, and each slow restore's or termination's, the same way.
    mutating func moveFaultsEarlier() -> Bool {
        guard let point = best, !point.scenario.faults.isEmpty else { return false }
        var faults = point.scenario.faults
        var progressed = false
        for index in faults.indices where !spent {
            while faults[index].atSeconds >= 120, !spent {
                var moved = faults
                let from = moved[index].atSeconds
                moved[index].atSeconds = from / 2
                // A restore point stays inside the run: at most the run's start, whose backup
                // it then restores as before.
                moved[index].restorePointSecondsAgo = min(
                    moved[index].restorePointSecondsAgo, from / 2)
                let candidate = input.withFaults(moved)
                let step = "move \(moved[index].kind.rawValue) from \(from) s to \(from / 2) s"
                guard attempt(step, candidate) else { break }
                faults = moved
                progressed = true
            }
            // A network outage, or a restore or termination that takes its time, gets shorter
            // the same way.
            while faults[index].durationSeconds >= 120, !spent {
                var shortened = faults
                let from = shortened[index].durationSeconds
                shortened[index].durationSeconds = from / 2
                let step =
                    "shorten \(faults[index].kind.rawValue) at \(faults[index].atSeconds) s from \(from) s to \(from / 2) s"
                guard attempt(step, input.withFaults(shortened)) else { break }
                faults = shortened
                progressed = true
            }
        }
        return progressed
    }

    /// Switches features off, one at a time (`Shrinker.simplifications`).
    mutating func simplify() -> Bool {
        var progressed = false
        for text in Shrinker.simplifications where !spent {
            let candidate = input.setting(text)
            // Only settings that change the scenario are worth a run.
            guard let scenario = try? shrinker.scenario(for: candidate),
                scenario != best!.scenario
            else { continue }
            progressed = attempt("set \(text)", candidate) || progressed
        }
        // Restores to older backups become restores to the latest one.
        let faults = best!.scenario.faults
        if !spent, faults.contains(where: { $0.restorePointSecondsAgo > 0 }) {
            let latest = faults.map { fault in
                var fault = fault
                fault.restorePointSecondsAgo = 0
                return fault
            }
            progressed =
                attempt("restore the latest backup at every restore", input.withFaults(latest))
                || progressed
        }
        // Restores and terminations that take their time become instant (an outage keeps
        // its length: without one it is no outage).
        let slow = best!.scenario.faults
        if !spent, slow.contains(where: { $0.kind != .networkOutage && $0.durationSeconds > 0 }) {
            let instant = slow.map { fault in
                var fault = fault
                if fault.kind != .networkOutage { fault.durationSeconds = 0 }
                return fault
            }
            progressed =
                attempt("make every restore and termination instant", input.withFaults(instant))
                || progressed
        }
        return progressed
    }

    /// Halves the write rates and the objects per partition while the run still fails.
    mutating func thinWrites() -> Bool {
        var progressed = false
        var changed = true
        while changed, !spent {
            changed = false
            let workload = best!.scenario.workload
            let candidates = [
                ("workload.writesPerMinuteOnline", workload.writesPerMinuteOnline / 2, 0.01),
                ("workload.writesPerMinuteOffline", workload.writesPerMinuteOffline / 2, 0.01),
                ("workload.objectsPerPartition", Double(workload.objectsPerPartition / 2), 1),
            ]
            for (path, value, floor) in candidates where value >= floor && !spent {
                let text =
                    value.rounded() == value ? "\(path)=\(UInt64(value))" : "\(path)=\(value)"
                if attempt("set \(text)", input.setting(text)) { changed = true }
            }
            progressed = progressed || changed
        }
        return progressed
    }
}

extension FaultSpec {
    /// Faults as the scenario file's `faults` array writes them (one JSON line).
    public static func json(_ faults: [FaultSpec]) -> String {
        "["
            + faults.map { fault in
                var text = "{\"kind\":\"\(fault.kind.rawValue)\",\"atSeconds\":\(fault.atSeconds)"
                if fault.kind.takesPartitionsPercent, fault.partitionsPercent != 100 {
                    text += ",\"partitionsPercent\":\(fault.partitionsPercent)"
                }
                if fault.kind == .appCrash || fault.kind == .networkOutage,
                    fault.clientsPercent != 100
                {
                    text += ",\"clientsPercent\":\(fault.clientsPercent)"
                }
                if fault.durationSeconds != defaultDurationSeconds(fault.kind) {
                    text += ",\"durationSeconds\":\(fault.durationSeconds)"
                }
                if fault.kind == .restoreFromBackup, fault.restorePointSecondsAgo != 0 {
                    text += ",\"restorePointSecondsAgo\":\(fault.restorePointSecondsAgo)"
                }
                return text + "}"
            }.joined(separator: ",") + "]"
    }
}
