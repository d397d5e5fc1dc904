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

/// The cells of column `name` in the CSV file at `path` (RFC 4180: quoted fields may hold
/// commas and doubled quotes), one per data row; nil when the file or the column is missing.
func csvColumn(_ name: String, in path: String) -> [String]? {
    guard let data = fileBytes(path) else { return nil }
    let characters = Array(String(decoding: data, as: UTF8.self))
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var index = 0
    while index < characters.count {
        let character = characters[index]
        index += 1
        if character == "\"" {  // a quoted field: up to the lone closing quote
            while index < characters.count {
                let inner = characters[index]
                index += 1
                if inner != "\"" {
                    field.append(inner)
                } else if index < characters.count, characters[index] == "\"" {
                    field.append("\"")
                    index += 1
                } else {
                    break
                }
            }
        } else if character == "," {
            row.append(field)
            field = ""
        } else if character == "\r\n" || character == "\n" {
            row.append(field)
            rows.append(row)
            (row, field) = ([], "")
        } else {
            field.append(character)
        }
    }
    guard let header = rows.first, let column = header.firstIndex(of: name) else { return nil }
    return rows.dropFirst().map { $0[column] }
}
