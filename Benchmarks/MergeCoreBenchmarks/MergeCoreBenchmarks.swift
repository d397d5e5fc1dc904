// Merge throughput benchmarks: one per workload × clients (10, 100) × role (server, client).
//
// Inputs are generated outside the measured region (`startMeasurement`/`stopMeasurement`);
// the measured region is `MergeBenchmark.mergeOnly`: the server integrating every upload (with
// each client's reciprocal edits), or a client merging its download against its local changesets.
// Map and churn merge 10^5 instructions; list and text-like merge 10^4, because their
// single-list conflict groups make the merge quadratic (see docs/bench-merge.md).
// Per-instruction figures: divide a metric by the instruction count in the benchmark's name.
// The same workloads, with CPU time of the merge alone, are in `syncsim bench merge`.

import Benchmark
import MergeCore
import MergeWorkloads

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .throughput, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 1,
        maxDuration: .seconds(5),
        maxIterations: 10
    )

    for kind in WorkloadKind.allCases {
        let instructions = kind == .list || kind == .textLike ? 10_000 : 100_000
        for clients in [10, 100] {
            for role in MergeRole.allCases {
                let parameters = WorkloadParameters(kind: kind, clients: clients,
                                                    instructions: instructions, seed: 1)
                let name = "\(kind.rawValue)/K\(clients)/\(role.rawValue)/\(instructions)"
                Benchmark(name) { benchmark in
                    for _ in benchmark.scaledIterations {
                        var inputs = MergeInputs.generate(parameters, role: role)
                        benchmark.startMeasurement()
                        let merged = try MergeBenchmark.mergeOnly(&inputs)
                        benchmark.stopMeasurement()
                        blackHole(merged)
                        blackHole(inputs)
                    }
                }
            }
        }
    }
}
