import ArgumentParser
import Foundation
import Testing

@testable import SyncSimCLI

/// Every command's `--help`, asserted verbatim against Tests/CLITests/Help/*.txt (80 columns).
/// After a deliberate change of help text, regenerate them with
/// `SYNCSIM_UPDATE_HELP=1 swift test --filter HelpTests` and review the diff.
@Suite struct HelpTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Help")

    static let commands: [(file: String, command: any ParsableCommand.Type)] = [
        ("syncsim.txt", SyncSimCommand.self),
        ("run.txt", RunCommand.self),
        ("sweep.txt", SweepCommand.self),
        ("compare.txt", CompareCommand.self),
        ("export.txt", ExportCommand.self),
        ("bench-merge.txt", BenchMergeCommand.self),
    ]

    @Test(arguments: commands.map(\.file))
    func helpIsVerbatim(file: String) throws {
        let command = Self.commands.first { $0.file == file }!.command
        let help = SyncSimCommand.helpMessage(for: command, columns: 80) + "\n"
        let url = Self.directory.appendingPathComponent(file)
        if ProcessInfo.processInfo.environment["SYNCSIM_UPDATE_HELP"] != nil {
            try Data(help.utf8).write(to: url)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(help == expected, "help of \(file) changed; see the file's header comment")
    }
}
