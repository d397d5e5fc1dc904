// swift-tools-version: 6.1
//
// SyncSim benchmarks: a nested package, so `swift build` and `swift test` at the root never
// build package-benchmark. Run with `cd Benchmarks && swift package benchmark` (the first run
// builds the harness and takes about 5-6 minutes on a 2-core machine).
//
// package-benchmark must be declared with `traits: ["MallocInterposer"]`: its default traits
// pull in a runtime interposer that is not available here (TOOLCHAIN-NOTES item 4).

import PackageDescription

let package = Package(
    name: "SyncSimBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SyncSim", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "MergeCoreBenchmarks",
            dependencies: [
                .product(name: "MergeCore", package: "SyncSim"),
                .product(name: "MergeWorkloads", package: "SyncSim"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "MergeCoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
