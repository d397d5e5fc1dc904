//! The CSV files made from stored runs: `runs`, `clients` and `timings`.
//!
//! Column order is stable: the fixed columns first, in the order listed below, then one column
//! per metric name in first-seen order (runs in insertion order, metrics in ordinal order).
//! When runs of one database have different metric sets, the header is the union and a run
//! without a metric leaves that cell empty. Metric names become snake_case headers
//! (`latencyNsMax` → `latency_ns_max`). `runs` and `clients` hold deterministic figures only;
//! wall-clock figures are in `timings` alone.

/// The tables `syncsim export` can write.
public enum ResultTable: String, CaseIterable, Sendable {
    /// One row per run: the run's fields, then its deterministic metrics.
    case runs
    /// One row per client of each run: its deterministic client metrics.
    case clients
    /// One row per run: its wall-clock figures (not deterministic).
    case timings
}

/// CSV text of stored runs.
public enum ResultCSV {
    /// Fixed columns of `runs`, in order.
    public static let runsFixedColumns = [
        "run_id", "seed", "scenario_name", "scenario_hash", "options_json", "git_commit",
        "toolchain", "trace_digest", "simulated_duration_ns", "clients_count", "events_count",
    ]
    /// Fixed columns of `clients`, in order.
    public static let clientsFixedColumns = ["run_id", "seed", "client_index"]
    /// Fixed columns of `timings`, in order.
    public static let timingsFixedColumns = ["run_id", "seed"]

    /// The CSV text of `table` for `runs` (in the order given): one header row, CRLF line ends.
    /// - Complexity: O(rows × columns).
    public static func text(_ table: ResultTable, runs: [StoredRun]) -> String {
        switch table {
        case .runs: runsText(runs)
        case .clients: clientsText(runs)
        case .timings: timingsText(runs)
        }
    }

    private static func runsText(_ runs: [StoredRun]) -> String {
        let names = unionOfNames(runs.map { $0.record.metrics })
        var text = CSV.line(runsFixedColumns + names.map(MetricName.snakeCase))
        for run in runs {
            let record = run.record
            let fixed = [
                String(run.runId), String(record.seed), record.scenarioName, record.scenarioHash,
                record.optionsJSON, record.gitCommit, record.toolchain, record.traceDigest,
                String(record.simulatedDurationNs), String(record.clientsCount),
                String(record.eventsCount),
            ]
            precondition(fixed.count == runsFixedColumns.count, "runs row out of step with header")
            text += CSV.line(fixed + cells(record.metrics, names: names))
        }
        return text
    }

    private static func clientsText(_ runs: [StoredRun]) -> String {
        let names = unionOfNames(runs.flatMap { run in run.record.clients.map(\.metrics) })
        var text = CSV.line(clientsFixedColumns + names.map(MetricName.snakeCase))
        for run in runs {
            for client in run.record.clients {
                let fixed = [String(run.runId), String(run.record.seed), String(client.clientIndex)]
                text += CSV.line(fixed + cells(client.metrics, names: names))
            }
        }
        return text
    }

    private static func timingsText(_ runs: [StoredRun]) -> String {
        let names = unionOfNames(runs.map { $0.record.timings })
        var text = CSV.line(timingsFixedColumns + names.map(MetricName.snakeCase))
        for run in runs {
            let fixed = [String(run.runId), String(run.record.seed)]
            text += CSV.line(fixed + cells(run.record.timings, names: names))
        }
        return text
    }

    /// Every metric name, in first-seen order. The set is only asked about membership; the
    /// order comes from the array.
    static func unionOfNames(_ metricLists: [[Metric]]) -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for metrics in metricLists {
            for metric in metrics where seen.insert(metric.name).inserted {
                names.append(metric.name)
            }
        }
        return names
    }

    /// The cells of `metrics` under the columns `names`: empty where a metric is missing.
    private static func cells(_ metrics: [Metric], names: [String]) -> [String] {
        // Fast path: the usual case, where the run has exactly the columns in order.
        if metrics.count == names.count,
            zip(metrics, names).allSatisfy({ metric, name in metric.name == name })
        {
            return metrics.map { CSV.value($0.value) }
        }
        var valueByName: [String: MetricValue] = [:]
        for metric in metrics { valueByName[metric.name] = metric.value }
        return names.map { name in valueByName[name].map(CSV.value) ?? "" }
    }
}
