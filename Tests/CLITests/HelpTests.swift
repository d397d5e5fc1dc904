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
        ("suite.txt", SuiteCommand.self),
        ("shrink.txt", ShrinkCommand.self),
        ("combine.txt", CombineCommand.self),
        ("compare.txt", CompareCommand.self),
        ("export.txt", ExportCommand.self),
        ("bench-merge.txt", BenchMergeCommand.self),
        ("bench-targets.txt", BenchTargetsCommand.self),
        ("bench-run.txt", BenchRunCommand.self),
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

/// The commit a run reports is the one this build was made from, recorded at build time (not
/// asked of whatever directory the binary is started in).
@Suite struct BuildCommitTests {
    @Test func theCommitIsTheCheckoutsHead() throws {
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", checkout, "rev-parse", "--short=12", "HEAD"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let head = String(
            decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        if process.terminationStatus == 0 {
            #expect(head.count == 12)
            #expect(
                BuildInfo.gitCommit == head || BuildInfo.gitCommit == head + "+dirty",
                "built from \(BuildInfo.gitCommit), the checkout is at \(head)")
        } else {
            #expect(BuildInfo.gitCommit == "unknown")
        }
    }
}
