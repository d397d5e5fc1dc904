//! One run held against another: the single-run form of `syncsim compare`, for two builds'
//! runs of one seed (`syncsim run`). Equal trace digests mean the same run, event for event;
//! otherwise every metric's difference, and, where both runs took checkpoints
//! (`run --checkpoints N`), the last checkpoint at which the runs still agree.

/// Two runs of one seed, compared.
public struct RunComparison: Sendable {
    public var baseline: StoredRun
    public var candidate: StoredRun

    /// One metric of the runs: its value in each (nil where that run has no such metric).
    public struct MetricRow: Sendable, Equatable {
        public var name: String
        public var baseline: MetricValue?
        public var candidate: MetricValue?

        /// Candidate − baseline, when both have the metric.
        public var difference: Double? {
            guard let baseline, let candidate else { return nil }
            return candidate.asDouble - baseline.asDouble
        }

        public var moved: Bool { baseline != candidate }

        /// The difference as `runs.csv` writes values: an integer for two integers, else a
        /// real with six decimals; empty when one run lacks the metric.
        public var differenceText: String {
            switch (baseline, candidate) {
            case (.integer(let before)?, .integer(let after)?):
                let (difference, overflow) = after.subtractingReportingOverflow(before)
                return overflow ? CSV.real(Double(after) - Double(before)) : String(difference)
            default:
                return difference.map(CSV.real) ?? ""
            }
        }
    }

    public init(baseline: StoredRun, candidate: StoredRun) {
        self.baseline = baseline
        self.candidate = candidate
    }

    /// Why the runs cannot be compared (different seeds), or nil.
    public var incomparableReason: String? {
        let (a, b) = (baseline.record.seed, candidate.record.seed)
        return a == b ? nil : "the baseline ran seed \(a) and the candidate seed \(b)"
    }

    /// Whether the runs are the same run, event for event (equal trace digests).
    public var isIdentical: Bool { baseline.record.traceDigest == candidate.record.traceDigest }

    /// Every metric of either run: the candidate's in its order, then any only the baseline
    /// has, in its order.
    public var metrics: [MetricRow] {
        // Lookups only: the rows follow the runs' metric order.
        var before = [String: MetricValue]()
        for metric in baseline.record.metrics { before[metric.name] = metric.value }
        var rows = candidate.record.metrics.map {
            MetricRow(name: $0.name, baseline: before[$0.name], candidate: $0.value)
        }
        let candidateNames = Set(candidate.record.metrics.map(\.name))
        for metric in baseline.record.metrics where !candidateNames.contains(metric.name) {
            rows.append(MetricRow(name: metric.name, baseline: metric.value, candidate: nil))
        }
        return rows
    }

    /// `compare_run.csv`: a row per metric (snake_case), with both values and the difference.
    public func metricsText() -> String {
        CSV.line(["metric", "baseline", "candidate", "difference"])
            + metrics.map { row in
                CSV.line([
                    MetricName.snakeCase(row.name), row.baseline.map(CSV.value) ?? "",
                    row.candidate.map(CSV.value) ?? "", row.differenceText,
                ])
            }.joined()
    }

    /// A run's checkpoints (`checkpoints.csv` of `run --checkpoints`): events, simulated time
    /// in ns and the trace digest after that event.
    public struct Checkpoint: Sendable, Equatable {
        public var events: UInt64
        public var simulatedTimeNs: UInt64
        public var traceDigest: String

        public init(events: UInt64, simulatedTimeNs: UInt64, traceDigest: String) {
            self.events = events
            self.simulatedTimeNs = simulatedTimeNs
            self.traceDigest = traceDigest
        }

        /// The columns of `checkpoints.csv`.
        public static let columns = ["events", "simulated_time_ns", "trace_digest"]

        /// `checkpoints.csv`: a row per checkpoint, in order.
        public static func text(_ checkpoints: [Checkpoint]) -> String {
            CSV.line(columns)
                + checkpoints.map {
                    CSV.line([String($0.events), String($0.simulatedTimeNs), $0.traceDigest])
                }.joined()
        }

        /// The rows of a `checkpoints.csv` text (as `text` writes it), or nil when it is not
        /// one.
        public static func parse(_ text: String) -> [Checkpoint]? {
            let lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)
            guard lines.first.map(String.init) == columns.joined(separator: ",") else {
                return nil
            }
            var rows = [Checkpoint]()
            for line in lines.dropFirst() {
                let cells = line.split(separator: ",", omittingEmptySubsequences: false)
                guard cells.count == 3, let events = UInt64(cells[0]),
                    let time = UInt64(cells[1])
                else { return nil }
                rows.append(
                    Checkpoint(events: events, simulatedTimeNs: time, traceDigest: String(cells[2]))
                )
            }
            return rows
        }
    }

    /// Where two runs' checkpoints part.
    public enum Divergence: Sendable, Equatable {
        /// Every checkpoint agrees.
        case allAgree
        /// The runs agree at `lastEqual` (nil: not even at the first checkpoint) and differ at
        /// `firstDifferent` (the baseline's checkpoint there, or the candidate's where the
        /// baseline had ended).
        case at(lastEqual: Checkpoint?, firstDifferent: Checkpoint)
        /// The two files were taken at different intervals: their rows do not line up.
        case intervalsDiffer
    }

    /// Walks both runs' checkpoints in order: the first pair that differs (in events, time or
    /// digest) is where the runs part, the pair before it where they last agree.
    public static func divergence(_ baseline: [Checkpoint], _ candidate: [Checkpoint])
        -> Divergence
    {
        // Every row but the last is at a multiple of one interval: the first rows say which.
        if baseline.count > 1 && candidate.count > 1 && baseline[0].events != candidate[0].events {
            return .intervalsDiffer
        }
        var last: Checkpoint?
        for (before, after) in zip(baseline, candidate) {
            if before != after { return .at(lastEqual: last, firstDifferent: before) }
            last = before
        }
        // One run ended at a checkpoint of the other, which went on.
        let common = min(baseline.count, candidate.count)
        if baseline.count != candidate.count {
            let longer = baseline.count > candidate.count ? baseline : candidate
            return .at(lastEqual: last, firstDifferent: longer[common])
        }
        return .allAgree
    }
}
