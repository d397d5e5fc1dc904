import Testing

@testable import Measurement

/// Two sweeps matched by variant and seed: which runs are the same, by how much the others'
/// metrics moved, and what only one sweep ran.
@Suite struct SweepComparisonTests {
    private func run(_ seed: UInt64, _ writes: Int64, digest: String) -> RunRecord {
        var record = sampleRun(seed: seed)
        record.traceDigest = digest
        record.clients = []
        record.metrics = [.integer("writesMade", writes), .real("resetsPerClientPerDay", 0.25)]
        return record
    }

    private func labels(_ mode: String) -> [SweepLabel] {
        [SweepLabel(column: "reset_mode", value: mode)]
    }

    /// A sweep as `ResultStore.sweep(_:)` gives it: `variants` of (mode, runs), run IDs from
    /// `firstRunId` in order.
    private func stored(
        _ variants: [(String, [RunRecord])], firstRunId: Int64 = 1
    ) -> (sweep: StoredSweep, variants: [SweepVariant]) {
        let seeds = variants[0].1.map(\.seed)
        let record = SweepRecord(
            scenarioName: "s", scenarioHash: "ab12", optionsJSON: "{}", gitCommit: "c1",
            digest: "d", seeds: seeds, variantLabels: variants.map { labels($0.0) })
        let count = Int64(variants.count * seeds.count)
        return (
            StoredSweep(
                sweepId: 1, record: record, runIds: Array(firstRunId..<firstRunId + count)),
            variants.map { SweepVariant(labels: labels($0.0), runs: $0.1) }
        )
    }

    @Test func theSameRunsAreIdenticalWithZeroDifferences() {
        let runs = [run(1, 10, digest: "a1"), run(2, 20, digest: "a2")]
        let baseline = stored([("recover", runs), ("discard", runs)])
        let candidate = stored([("recover", runs), ("discard", runs)], firstRunId: 11)
        let comparison = SweepComparison(baseline: baseline, candidate: candidate)
        #expect(comparison.incomparableReason == nil)
        #expect(comparison.isIdentical)
        #expect(comparison.comparedRuns == 4)
        #expect(comparison.differingRuns.isEmpty)
        #expect(
            comparison.runsText() == """
                variant,reset_mode,seed,baseline_run_id,candidate_run_id,baseline_trace_digest,candidate_trace_digest,identical\r
                0,recover,1,1,11,a1,a1,1\r
                0,recover,2,2,12,a2,a2,1\r
                1,discard,1,3,13,a1,a1,1\r
                1,discard,2,4,14,a2,a2,1\r

                """)
        let rows = comparison.differencesText().components(separatedBy: "\r\n").dropLast()
        #expect(rows.count == 1 + 2 * 2)
        #expect(
            rows[1]
                == "0,recover,writes_made,2,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0,0"
        )
    }

    @Test func aChangedRunIsNamedAndItsDifferencesSummarised() {
        let before = [run(1, 10, digest: "a1"), run(2, 20, digest: "a2"), run(3, 30, digest: "a3")]
        var after = before
        after[0] = run(1, 13, digest: "b1")  // +3
        after[2] = run(3, 29, digest: "b3")  // -1
        let comparison = SweepComparison(
            baseline: stored([("recover", before)]), candidate: stored([("recover", after)]))
        #expect(!comparison.isIdentical)
        #expect(
            comparison.differingRuns == [
                SweepComparison.RunPair(matched: 0, seedOrdinal: 0),
                SweepComparison.RunPair(matched: 0, seedOrdinal: 2),
            ])
        // Differences 3, 0, -1: mean 2/3, sample sd √(13/3), median 0; t(0.975, 2) = 4.302653.
        let rows = comparison.differencesText().components(separatedBy: "\r\n")
        #expect(
            rows[0] == "variant,reset_mode,metric,"
                + SweepComparison.differenceColumns.joined(separator: ","))
        let cells = rows[1].components(separatedBy: ",")
        #expect(Array(cells.prefix(5)) == ["0", "recover", "writes_made", "3", "0.666667"])
        #expect(cells[5] == "2.081666")  // √(13/3)
        #expect(Array(cells[6...8]) == ["-1.000000", "0.000000", "3.000000"])
        #expect(cells[9] == "-4.504478" && cells[10] == "5.837812")  // 2/3 ∓ 4.302653 · 2.081666 / √3
        #expect(Array(cells[11...12]) == ["1", "1"])
        #expect(rows[2].hasPrefix("0,recover,resets_per_client_per_day,3,0.000000,"))
    }

    @Test func variantsAndSeedsOfOneSweepAloneAreListedAndMatchedOnesCompared() {
        let baseline = stored([
            ("recover", [run(1, 10, digest: "a1"), run(2, 20, digest: "a2")]),
            ("manual", [run(1, 11, digest: "m1"), run(2, 21, digest: "m2")]),
        ])
        let candidate = stored([
            ("discard", [run(2, 5, digest: "x2"), run(3, 6, digest: "x3")]),
            ("recover", [run(2, 20, digest: "a2"), run(3, 30, digest: "a3")]),
        ])
        let comparison = SweepComparison(baseline: baseline, candidate: candidate)
        #expect(comparison.incomparableReason == nil)
        #expect(comparison.matched.count == 1)
        #expect(comparison.matched[0].labels == labels("recover"))
        #expect(comparison.matched[0].candidateVariant == 1)
        #expect(comparison.matched[0].baselineVariant == 0)
        #expect(comparison.matched[0].seeds == [2])
        #expect(comparison.matched[0].baselineRunIds == [2])
        #expect(comparison.matched[0].candidateRunIds == [3])  // the candidate: 1 2 discard, 3 4 recover
        #expect(comparison.baselineOnly == [labels("manual")])
        #expect(comparison.candidateOnly == [labels("discard")])
        #expect(comparison.baselineOnlySeeds == [1])
        #expect(comparison.candidateOnlySeeds == [3])
        // The one pair matched is the same run, but the sweeps are not the same runs.
        #expect(comparison.differingRuns.isEmpty)
        #expect(!comparison.isIdentical)
    }

    /// `--vary workload.listPercent=10` and `=10.0` vary the same value: labels match as
    /// values, not as text; the matched variant keeps the candidate's text.
    @Test func labelsMatchAsValues() {
        let same: [(String, String)] = [
            ("10", "10.0"), ("10", "1e1"), ("-0.50", "-0.5"), ("[1,2]", "[1, 2]"),
            (#"[{"b":1,"a":[]}]"#, #"[ {"a": [], "b": 1.0} ]"#),
            ("recoverUnsyncedChanges", "recoverUnsyncedChanges"),
        ]
        for (text, other) in same {
            #expect(SweepLabel(column: "c", value: text).canonical
                        == SweepLabel(column: "c", value: other).canonical, "\(text) \(other)")
        }
        let different: [(String, String)] = [
            ("10", "11"), ("10", "10h"), ("[1,2]", "[2,1]"), ("manual", "Manual"),
            ("1", "true"),
        ]
        for (text, other) in different {
            #expect(SweepLabel(column: "c", value: text).canonical
                        != SweepLabel(column: "c", value: other).canonical, "\(text) \(other)")
        }
        #expect(SweepLabel(column: "c", value: "10h").canonical.value == "10h")
        let baseline = stored([("10", [run(1, 10, digest: "a")])])
        let candidate = stored([("10.0", [run(1, 10, digest: "a")])])
        let comparison = SweepComparison(baseline: baseline, candidate: candidate)
        #expect(comparison.matched.count == 1 && comparison.isIdentical)
        #expect(comparison.matched[0].labels == labels("10.0"))
    }

    @Test func sweepsWithNoVariantOrNoSeedInCommonCannotBeCompared() {
        let recover = stored([("recover", [run(1, 10, digest: "a1")])])
        let noVariant = SweepComparison(
            baseline: recover, candidate: stored([("manual", [run(1, 10, digest: "a1")])]))
        #expect(noVariant.incomparableReason?.hasPrefix("they have no variant in common") == true)
        let noSeed = SweepComparison(
            baseline: recover, candidate: stored([("recover", [run(7, 10, digest: "a7")])]))
        #expect(
            noSeed.incomparableReason
                == "they have no seed in common (the baseline ran seed 1, the candidate seed 7)")
        #expect(SweepComparison.range([4, 5, 6]) == "seeds 4-6")
        #expect(SweepComparison.range([4, 6]) == "2 seeds")
    }
}
