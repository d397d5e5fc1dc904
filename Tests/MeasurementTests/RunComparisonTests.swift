import Testing

@testable import Measurement

/// Two runs of one seed: the same run or not, every metric's difference, and where their
/// checkpoints part.
@Suite struct RunComparisonTests {
    private func stored(_ id: Int64, seed: UInt64 = 42, digest: String, metrics: [Metric])
        -> StoredRun
    {
        var record = sampleRun(seed: seed)
        record.traceDigest = digest
        record.metrics = metrics
        return StoredRun(runId: id, record: record)
    }

    @Test func metricsAreListedWithTheirDifferences() {
        let comparison = RunComparison(
            baseline: stored(
                1, digest: "aa",
                metrics: [
                    .integer("resets", 3), .real("rate", 0.5), .integer("gone", 9),
                ]),
            candidate: stored(
                7, digest: "bb",
                metrics: [
                    .integer("resets", 5), .real("rate", 0.25), .integer("added", 1),
                ]))
        #expect(comparison.incomparableReason == nil && !comparison.isIdentical)
        let rows = comparison.metrics
        #expect(rows.map(\.name) == ["resets", "rate", "added", "gone"])
        #expect(rows.map(\.differenceText) == ["2", "-0.250000", "", ""])
        #expect(rows.map(\.moved) == [true, true, true, true])
        #expect(
            comparison.metricsText() == """
                metric,baseline,candidate,difference\r
                resets,3,5,2\r
                rate,0.500000,0.250000,-0.250000\r
                added,,1,\r
                gone,9,,\r

                """)
        let same = RunComparison(
            baseline: stored(1, digest: "aa", metrics: [.integer("resets", 3)]),
            candidate: stored(2, digest: "aa", metrics: [.integer("resets", 3)]))
        #expect(same.isIdentical && same.metrics.allSatisfy { !$0.moved })
        let otherSeed = RunComparison(
            baseline: stored(1, digest: "aa", metrics: []),
            candidate: stored(2, seed: 43, digest: "aa", metrics: []))
        #expect(
            otherSeed.incomparableReason == "the baseline ran seed 42 and the candidate seed 43")
    }

    private func points(_ digests: [String], every interval: UInt64 = 100, end: UInt64? = nil)
        -> [RunComparison.Checkpoint]
    {
        digests.enumerated().map { index, digest in
            let events =
                index == digests.count - 1 && end != nil ? end! : UInt64(index + 1) * interval
            return RunComparison.Checkpoint(
                events: events, simulatedTimeNs: events * 1_000, traceDigest: digest)
        }
    }

    @Test func checkpointsPartWhereTheFirstPairDiffers() {
        let a = points(["1", "2", "3", "4"], end: 350)
        #expect(RunComparison.divergence(a, a) == .allAgree)
        #expect(
            RunComparison.divergence(a, points(["1", "2", "x", "y"], end: 350))
                == .at(lastEqual: a[1], firstDifferent: a[2]))
        #expect(
            RunComparison.divergence(a, points(["x", "2", "3", "4"], end: 350))
                == .at(lastEqual: nil, firstDifferent: a[0]))
        // The candidate went on past the baseline's end, which fell on its checkpoint 300.
        let short = points(["1", "2", "3"])
        let long = points(["1", "2", "3", "9", "10"], end: 420)
        #expect(
            RunComparison.divergence(short, long)
                == .at(lastEqual: short[2], firstDifferent: long[3]))
        #expect(RunComparison.divergence(a, points(["1", "2"], every: 50)) == .intervalsDiffer)
    }

    @Test func checkpointFilesAreRead() {
        let text = "events,simulated_time_ns,trace_digest\r\n100,5,0a\r\n120,9,0b\r\n"
        #expect(
            RunComparison.Checkpoint.parse(text) == [
                .init(events: 100, simulatedTimeNs: 5, traceDigest: "0a"),
                .init(events: 120, simulatedTimeNs: 9, traceDigest: "0b"),
            ])
        #expect(RunComparison.Checkpoint.parse("events,time\r\n1,2\r\n") == nil)
        #expect(
            RunComparison.Checkpoint.parse(
                "events,simulated_time_ns,trace_digest\r\nx,1,0a\r\n") == nil)
    }
}
