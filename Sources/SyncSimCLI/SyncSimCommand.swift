import ArgumentParser

public struct SyncSimCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "syncsim",
        abstract: "Simulate offline-first sync, client resets and merge throughput, deterministically.",
        subcommands: [
            RunCommand.self, SweepCommand.self, SuiteCommand.self, ShrinkCommand.self, CombineCommand.self,
            CompareCommand.self,
            ExportCommand.self,
            BenchCommand.self,
        ]
    )
    public init() {}
}
