// swift-tools-version: 6.1
//
// SyncSim: a deterministic workbench for offline-first sync, client resets and OT merge throughput.
//
// Dependencies (each one earns its place; see README "Dependencies"):
// - swift-argument-parser: the `syncsim` command line (subcommands, validation, help text).
// - GRDB.swift: the results database (named migrations, transactions) over the system libsqlite3.
// - swift-collections (HeapModule, DequeModule): the simulator's event queue, and the
//   server egress's queue of messages.
// GSL is not a Swift package: it is linked as a system library through `CGSL` (apt: libgsl-dev).
// package-benchmark lives in the nested package `Benchmarks/` so that `swift test` never builds it.

import PackageDescription

// Invariant walks (O(n) checks) are compiled into debug builds and into any build that sets
// SYNCSIM_INTERNAL_CHECKS=1 in the environment; release builds keep only the cheap preconditions.
let internalChecks: [SwiftSetting] = [
    .define("SYNCSIM_INTERNAL_CHECKS", .when(configuration: .debug)),
]

// The world is a single-threaded class whose stored properties are mutated on every event; Swift
// checks exclusive access to class properties at run time (about 5 % of a run, measured with
// perf). Release builds of `Simulation` drop the run-time checks; the compile-time checks stay,
// and debug builds (and so `swift test`) keep the run-time checks too.
let worldSettings: [SwiftSetting] = internalChecks + [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "SyncSim",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "syncsim", targets: ["syncsim"]),
        .library(name: "MergeCore", targets: ["MergeCore"]),
        .library(name: "MergeWorkloads", targets: ["MergeWorkloads"]),
        .library(name: "Randomness", targets: ["Randomness"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "Measurement", targets: ["Measurement"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CGSL",
            pkgConfig: "gsl",
            providers: [.apt(["libgsl-dev"]), .brew(["gsl"])]
        ),
        // syncsim's malloc counter (glibc); only the CLI links it, never a library the
        // package-benchmark harness links (that brings its own malloc interposer).
        .target(name: "CAllocationCount"),
        // Prefetch hints for the merge's walk and scan (Swift has none).
        .target(name: "CPrefetch"),
        .target(name: "MergeCore", dependencies: ["CPrefetch"], swiftSettings: internalChecks),
        .target(name: "Randomness", dependencies: ["CGSL"], swiftSettings: internalChecks),
        .target(
            name: "MergeWorkloads",
            dependencies: ["MergeCore", "Randomness"],
            swiftSettings: internalChecks
        ),
        .target(name: "SyncEngine", dependencies: ["MergeCore"], swiftSettings: internalChecks),
        .target(
            name: "Simulation",
            dependencies: [
                "SyncEngine", "MergeCore", "Randomness",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: worldSettings
        ),
        .target(
            name: "Measurement",
            dependencies: ["CGSL", "Randomness", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: internalChecks
        ),
        .target(
            name: "SyncSimCLI",
            dependencies: [
                "Simulation", "Measurement", "MergeCore", "MergeWorkloads", "Randomness",
                "CAllocationCount",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            plugins: ["BuildCommit"]
        ),
        // Writes the git commit of the checkout into SyncSimCLI at build time (BuildInfo).
        .plugin(name: "BuildCommit", capability: .buildTool()),
        .executableTarget(name: "syncsim", dependencies: ["SyncSimCLI"]),
        .testTarget(name: "MergeCoreTests", dependencies: ["MergeCore", "Randomness"]),
        .testTarget(name: "SyncEngineTests", dependencies: ["SyncEngine", "MergeCore"]),
        .testTarget(
            name: "SimulationTests",
            dependencies: ["Simulation", "SyncEngine", "MergeCore", "Randomness"]),
        .testTarget(
            name: "MeasurementTests",
            dependencies: ["Measurement", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "SyncSimCLI", "Simulation", "Measurement", "MergeCore", "MergeWorkloads",
                "CAllocationCount",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Help"]
        ),
    ]
)
