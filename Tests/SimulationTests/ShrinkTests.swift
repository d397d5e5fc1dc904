import Testing

@testable import Simulation

/// Sabotage (bugs planted on purpose) and the shrinker (`syncsim shrink`).
@Suite struct ShrinkTests {
    static let defaultBytes = Array(Scenario.defaultScenarioJSON.utf8)

    func shrinker(
        bytes: [UInt8] = ShrinkTests.defaultBytes, runsMax: Int = 500, anyFailure: Bool = false,
        run: @escaping (Scenario) -> ShrinkOutcome
    ) -> Shrinker {
        Shrinker(
            baseBytes: bytes, file: "test.json", resetMode: nil, backupIntervalSeconds: nil,
            runsMax: runsMax, anyFailure: anyFailure, run: run)
    }

    /// A stand-in for a run: "fails" when the scenario has at least 3 clients, a restore in
    /// its faults and list edits; its failure names a client that changes with the size, as a
    /// real failure's would.
    static func planted(_ scenario: Scenario) -> ShrinkOutcome {
        let fails =
            scenario.clientsCount >= 3 && scenario.workload.listPercent > 0
            && scenario.faults.contains { $0.kind == .restoreFromBackup }
        let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
        return ShrinkOutcome(
            failures: fails
                ? [
                    "\(scenario.clientsCount) clients did not converge to the server (first: client \(scenario.clientsCount - 1))"
                ]
                : [],
            digest: String(size, radix: 16), faults: scenario.faults, events: size)
    }

    @Test func signaturesIgnoreNumbersAndDetails() {
        #expect(
            Shrinker.signature("9 clients did not converge to the server (first: client 0)")
                == "# clients did not converge to the server (first: client #)")
        #expect(
            Shrinker.signature(
                "client 17: recovery broke a documented promise: ObjectRef(3) field 1: set int(5)")
                == "client #: recovery broke a documented promise")
        #expect(
            Shrinker.signature("server refused an upload from client 3 with 212 x (40 times)")
                == "server refused an upload from client # with # x")
        #expect(
            Shrinker.signature("12 writes still pending after healing")
                == "# writes still pending after healing")
    }

    /// A stand-in that "fails" while a network outage lasts at least 10 minutes: the search
    /// shortens the outage (and keeps its share of clients) down to the edge.
    @Test func anOutageIsShortenedToTheEdge() throws {
        let shrinker = self.shrinker(run: { scenario in
            let fails = scenario.faults.contains {
                $0.kind == .networkOutage && $0.durationSeconds >= 600
            }
            let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
            return ShrinkOutcome(
                failures: fails
                    ? ["2 clients did not converge to the server (first: client 1)"] : [],
                digest: String(size, radix: 16), faults: scenario.faults, events: size)
        })
        let outage =
            #"faults=[{"kind":"networkOutage","atSeconds":3600,"clientsPercent":30,"durationSeconds":20000}]"#
        let start = ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [outage])
        let report = shrinker.shrink(start)
        let scenario = try shrinker.scenario(for: report.result.input)
        let kept = try #require(scenario.faults.first { $0.kind == .networkOutage })
        // 20,000 s halved while it still fails: 10,000, 5,000, 2,500, 1,250, then 625.
        #expect(kept.durationSeconds == 625)
        #expect(kept.clientsPercent == 30)
        #expect(
            report.trials.contains {
                $0.verdict == .kept && $0.step.hasPrefix("shorten networkOutage")
            })
        #expect(
            report.trials.contains {
                $0.verdict == .passed && $0.step.hasPrefix("shorten networkOutage")
            })
    }

    /// A restore that takes its time is shortened while the failure needs it, and made
    /// instant when the failure does not.
    @Test func aSlowRestoreIsShortenedOrMadeInstant() throws {
        for needed: UInt64 in [0, 1_000] {
            let shrinker = self.shrinker(run: { scenario in
                let fails = scenario.faults.contains {
                    $0.kind == .restoreFromBackup && $0.durationSeconds >= needed
                }
                let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
                return ShrinkOutcome(
                    failures: fails ? ["a check failed"] : [],
                    digest: String(size, radix: 16), faults: scenario.faults, events: size)
            })
            let restore =
                #"faults=[{"kind":"restoreFromBackup","atSeconds":3600,"durationSeconds":16000}]"#
            let start = ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [restore])
            let report = shrinker.shrink(start)
            let scenario = try shrinker.scenario(for: report.result.input)
            let kept = try #require(scenario.faults.first { $0.kind == .restoreFromBackup })
            // Needed: 16,000 s halved while it still fails, down to 1,000 (then 500 passes).
            // Not needed: halved to 62 s, then made instant.
            #expect(kept.durationSeconds == (needed == 0 ? 0 : 1_000), "needed \(needed)")
            #expect(
                report.trials.contains {
                    $0.verdict == .kept && $0.step.hasPrefix("shorten restoreFromBackup")
                })
            #expect(
                report.trials.contains {
                    $0.step == "make every restore and termination instant"
                        && $0.verdict == (needed == 0 ? .kept : .passed)
                }, "needed \(needed)")
        }
    }

    /// Cohorts the failure does not need are dropped (`cohorts=[]`); those it needs are kept.
    @Test func cohortsAreDroppedWhenTheFailureDoesNotNeedThem() throws {
        let cohorts =
            #"cohorts=[{"name":"old","clientsPercent":40,"clientReset":{"mode":"manual"}}]"#
        for needed in [false, true] {
            let shrinker = self.shrinker(run: { scenario in
                let fails = !needed || scenario.cohorts.contains { $0.resetMode == .manual }
                let size = UInt64(scenario.clientsCount) * scenario.durationSeconds
                return ShrinkOutcome(
                    failures: fails ? ["a check failed"] : [],
                    digest: String(size, radix: 16), faults: scenario.faults, events: size)
            })
            let start = ShrinkInput(clients: 10, durationSeconds: 86_400, settings: [cohorts])
            let report = shrinker.shrink(start)
            let scenario = try shrinker.scenario(for: report.result.input)
            #expect(scenario.cohorts.isEmpty == !needed, "needed: \(needed)")
            let step = report.trials.first { $0.step == "set cohorts=[]" }
            #expect(step?.verdict == (needed ? .passed : .kept), "needed: \(needed)")
        }
    }

    /// The search finds the planted condition's edge: 3 clients, the restore alone, list edits
    /// kept and every other feature off, and each step it kept fails the same way.
    @Test func theSearchFindsTheSmallestFailingRunOfItsSteps() throws {
        let shrinker = self.shrinker(run: Self.planted)
        let start = ShrinkInput(clients: 40, durationSeconds: 86_400, settings: [])
        let report = shrinker.shrink(start)
        let result = report.result
        #expect(report.trials[0].verdict == .kept)
        #expect(!report.budgetSpent)
        #expect(report.signature == "# clients did not converge to the server (first: client #)")
        #expect(result.input.clients == 3)
        let scenario = try shrinker.scenario(for: result.input)
        #expect(scenario.faults.map(\.kind) == [.restoreFromBackup])
        #expect(scenario.workload.listPercent == 10)
        #expect(scenario.workload.erasePercent == 0 && scenario.workload.addIntegerPercent == 0)
        #expect(scenario.network.lossPerMillion == 0 && scenario.clock.skewMillisecondsMax == 0)
        // The restore, at 50,400 s in the file, moved early, and the run shrank around it.
        let restore = try #require(scenario.faults.first)
        #expect(restore.atSeconds < 120)
        #expect(result.input.durationSeconds > restore.atSeconds)
        #expect(result.input.durationSeconds < 1_000)
        #expect(report.trials.contains { $0.verdict == .kept && $0.step.hasPrefix("move ") })
        for trial in report.trials where trial.verdict == .kept {
            #expect(Shrinker.signature(trial.failure) == report.signature)
            #expect(Self.planted(try shrinker.scenario(for: trial.input)).failures.count == 1)
        }
        // Taking any one more thing away passes: two clients, or the restore removed.
        #expect(
            report.trials.contains {
                $0.verdict == .passed && $0.input.clients == 2
                    && $0.input.durationSeconds == result.input.durationSeconds
            })
        #expect(
            report.trials.contains {
                $0.verdict == .passed && $0.step.hasPrefix("remove restoreFromBackup")
            })
        // Deterministic: the same search twice.
        #expect(shrinker.shrink(start).trials == report.trials)
    }

    @Test func repeatedFailuresAreListedOnceWithTheirCount() {
        #expect(
            World.collapsingRepeats(["b", "a", "b", "c", "b", "a"])
                == ["b (3 times)", "a (2 times)", "c"])
        #expect(World.collapsingRepeats([]) == [])
    }

    @Test func theRunBudgetStopsTheSearchWithTheBestRunSoFar() {
        let report = shrinker(runsMax: 4, run: Self.planted)
            .shrink(ShrinkInput(clients: 40, durationSeconds: 86_400, settings: []))
        #expect(report.trials.count == 4)
        #expect(report.budgetSpent)
        #expect(report.result.verdict == .kept)
        #expect(report.result.input.clients < 40)
    }

    @Test func aRunThatPassesHasNothingToShrink() {
        let report = shrinker(run: Self.planted)
            .shrink(ShrinkInput(clients: 2, durationSeconds: 86_400, settings: []))
        #expect(report.trials.count == 1)
        #expect(report.trials[0].verdict == .passed)
        #expect(report.signature == nil)
    }

    /// A candidate that fails otherwise is not kept, unless any failure will do.
    @Test func otherFailuresAreKeptOnlyWhenAnyFailureWillDo() {
        func run(_ scenario: Scenario) -> ShrinkOutcome {
            let failure =
                scenario.clientsCount >= 10 ? "a: \(scenario.clientsCount)" : "b: 1"
            return ShrinkOutcome(failures: [failure], digest: "", faults: [], events: 0)
        }
        let start = ShrinkInput(clients: 40, durationSeconds: 3_600, settings: [])
        #expect(shrinker(run: run).shrink(start).result.input.clients == 10)
        #expect(shrinker(anyFailure: true, run: run).shrink(start).result.input.clients == 1)
    }

    // MARK: - Real runs

    /// A small world: 6 clients in 2 partitions for 2 hours, writing often offline, with a
    /// termination at 1 h (every client resets, recovering its unsynced writes).
    static let small = """
        { "name": "small", "clientsCount": 6, "partitionsCount": 2, "durationSeconds": 7200,
          "workload": { "writesPerMinuteOnline": 2, "writesPerMinuteOffline": 2,
                        "objectsPerPartition": 50, "listPercent": 10 },
          "connectivity": { "onlineSecondsMean": 600, "offlineSecondsMean": 600 },
          "faults": [ { "kind": "terminateSync", "atSeconds": 3600 } ] }
        """

    func run(_ json: String, settings: [String] = [], seed: UInt64 = 1) throws -> RunResult {
        let scenario = try Scenario.decode(
            bytes: Array(json.utf8), file: "small.json",
            settings: settings.compactMap(ScenarioSetting.init))
        return World(scenario: scenario, seed: seed).run()
    }

    /// Each planted bug fails a check: the checks have teeth.
    @Test func everySabotageIsCaughtByTheChecks() throws {
        let clean = try run(Self.small)
        #expect(clean.passed, "\(clean.failures)")
        #expect(clean.counters.resets > 0 && clean.resetsRecovered > 0)
        let gap = try run(Self.small, settings: ["sabotage.kind=downloadGap", "sabotage.every=10"])
        #expect(!gap.passed)
        #expect(gap.traceDigest != clean.traceDigest)
        let offByOne = try run(Self.small, settings: ["sabotage.kind=recoveryOffByOne"])
        #expect(!offByOne.passed)
        // Recovery left a change out: a promise broken, or a write never synced.
        #expect(
            offByOne.failures.contains {
                $0.contains("recovery broke a documented promise")
                    || $0.contains("still pending after healing")
            })
        // And counted: the broken promises, or the writes left pending.
        #expect(offByOne.counters.recoveryPromiseViolations > 0 || offByOne.writesPending > 0)
        let discard = ["clientReset.mode=discardUnsyncedChanges"]
        let cleanDiscard = try run(Self.small, settings: discard)
        #expect(cleanDiscard.passed, "\(cleanDiscard.failures)")
        #expect(cleanDiscard.resetsDiscarded > 0)
        let kept = try run(Self.small, settings: discard + ["sabotage.kind=discardKeepsUnsynced"])
        #expect(kept.failures.contains { $0.contains("a discarding reset left") })
    }

    @Test func sabotageFieldsAreChecked() {
        func error(_ settings: [String]) -> ScenarioError? {
            do {
                _ = try Scenario.decode(
                    bytes: Array(Self.small.utf8), file: "small.json",
                    settings: settings.compactMap(ScenarioSetting.init))
                return nil
            } catch { return error }
        }
        #expect(error(["sabotage.kind=forgetEverything"])?.field == "sabotage.kind")
        #expect(error(["sabotage.every=1"])?.field == "sabotage.kind")
        #expect(
            error(["sabotage.kind=downloadGap", "sabotage.every=0"])?.field == "sabotage.every")
        #expect(error(["sabotage.kind=downloadGap", "sabotage.often=2"])?.code == .unknownField)
    }

    /// A swarm's drawn faults, written out as scheduled ones, give the very same run: the
    /// default kinds, and network outages with their share of clients and their lengths.
    @Test(arguments: [
        ["swarm.faultsPerDay=96", "faults=[]"],
        [
            "swarm.faultsPerDay=96", "faults=[]",
            #"swarm.kinds=["networkOutage","appCrash","restoreFromBackup"]"#,
        ],
    ])
    func aSwarmWrittenOutAsScheduledFaultsIsTheSameRun(swarm: [String]) throws {
        let scenario = try Scenario.decode(
            bytes: Array(Self.small.utf8), file: "small.json",
            settings: swarm.compactMap(ScenarioSetting.init))
        let drawn = World(scenario: scenario, seed: 3).run()
        #expect(drawn.swarmFaults.count >= 3)
        if scenario.swarm.kinds.contains(.networkOutage) {
            let outages = drawn.swarmFaults.filter { $0.kind == .networkOutage }
            #expect(outages.contains { $0.clientsPercent != 100 })
            #expect(outages.contains { $0.durationSeconds != FaultSpec.outageSecondsDefault })
            #expect(drawn.clientsCutOff > 0)
        }
        let written = try run(
            Self.small,
            settings: swarm + [
                "swarm.faultsPerDay=0", "faults=" + FaultSpec.json(drawn.swarmFaults),
            ], seed: 3)
        #expect(written.swarmFaults.isEmpty)
        #expect(written.traceDigest == drawn.traceDigest)
    }

    /// A planted download gap in the small world shrinks to fewer clients, reproducibly, and
    /// the smallest run replays to its recorded digest.
    @Test func aSabotagedRunShrinks() throws {
        let settings = ["sabotage.kind=downloadGap", "sabotage.every=10"]
        let shrinker = self.shrinker(
            bytes: Array(Self.small.utf8), runsMax: 25, run: Shrinker.worldRun(seed: 1))
        let start = ShrinkInput(clients: 6, durationSeconds: 7_200, settings: settings)
        let report = shrinker.shrink(start)
        #expect(report.trials[0].verdict == .kept)
        let result = report.result
        #expect(result.input.clients < 6)
        #expect(result.events < report.trials[0].events)
        #expect(Shrinker.signature(result.failure) == report.signature)
        let replay = Shrinker.worldRun(seed: 1)(try shrinker.scenario(for: result.input))
        #expect(replay.digest == result.digest)
        #expect(shrinker.shrink(start).trials == report.trials)
    }
}
