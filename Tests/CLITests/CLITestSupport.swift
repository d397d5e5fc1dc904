import ArgumentParser
import Foundation

@testable import SyncSimCLI

/// Temporary directories for one test, removed when the owner (a suite instance, made afresh
/// for each test) goes away.
final class TemporaryDirectories {
    private var created: [String] = []

    deinit {
        for path in created { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A new empty directory.
    func make() throws -> String {
        let path = NSTemporaryDirectory() + "syncsim-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        created.append(path)
        return path
    }
}

/// Runs `syncsim <arguments>` in process and returns its exit status (0 on success).
func syncsimStatus(_ arguments: [String]) -> Int32 {
    do {
        var command = try SyncSimCommand.parseAsRoot(arguments)
        try command.run()
        return 0
    } catch {
        return SyncSimCommand.exitCode(for: error).rawValue
    }
}

/// The bytes of the file at `path`, or nil.
func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
