import ArgumentParser
import Foundation
import Measurement

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

/// The cells of column `name` in the CSV file at `path` (RFC 4180, read by `CSV.records`),
/// one per data row; nil when the file or the column is missing, or the file is not CSV.
func csvColumn(_ name: String, in path: String) -> [String]? {
    guard let data = fileBytes(path),
        let rows = CSV.records(String(decoding: data, as: UTF8.self)),
        let header = rows.first, let column = header.firstIndex(of: name)
    else { return nil }
    return rows.dropFirst().map { $0[column] }
}
