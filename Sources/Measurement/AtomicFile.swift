//! Whole-file writes that either replace the target completely or leave it as it was.
//!
//! The bytes go to a temporary file in the target's directory (`.<name>.tmp-XXXXXX`), which is
//! flushed with `fsync` and then renamed over the target. `rename(2)` within one directory is
//! atomic, so a reader sees the old file or the new one, never a partial one. On any failure the
//! temporary file is removed and the target is untouched. `AtomicFile.Batch` stages several
//! files first and renames them only when all are staged.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Atomic replacement of a file's contents.
public enum AtomicFile {
    /// Writes `text` as UTF-8 to `path` atomically.
    /// - Throws: `MeasurementError.outputNotWritable` (307) when the directory is missing or
    ///   not writable, `.outputWriteFailed` (308) when a later step fails.
    public static func write(_ text: String, to path: String) throws(MeasurementError) {
        try write(Array(text.utf8), to: path)
    }

    /// Writes `bytes` to `path` atomically: temporary file, `fsync`, `rename`.
    ///
    /// The new file has mode 0644. The directory is synced after the rename (best effort).
    /// - Throws: `MeasurementError.outputNotWritable` (307) when the directory is missing or
    ///   not writable, `.outputWriteFailed` (308) when a later step fails. In both cases no file
    ///   is left behind and a pre-existing target keeps its bytes.
    public static func write(_ bytes: [UInt8], to path: String) throws(MeasurementError) {
        var batch = Batch()
        try batch.stage(bytes, to: path)
        try batch.commit()
    }

    /// Writes every one of `files` (UTF-8 text, path) or none: `Batch`.
    /// - Throws: 307 or 308, as `write`; every target then keeps its bytes.
    public static func write(all files: [(text: String, path: String)]) throws(MeasurementError) {
        var batch = Batch()
        for file in files { try batch.stage(file.text, to: file.path) }
        try batch.commit()
    }

    /// Files written together: each is staged (its bytes in a temporary file beside it,
    /// flushed with `fsync`), and only when every one is staged are they renamed over their
    /// targets, one after the other. The failures a write meets (a missing or read-only
    /// directory, a directory in the way, a full disk) happen while staging, and then no
    /// target has changed. Only a `rename(2)` failing between two others (the directory
    /// changed meanwhile) can leave some targets new and the rest as they were.
    public struct Batch {
        /// The temporary file and the target of each file staged, in order.
        private var staged: [(temporary: String, path: String)] = []

        public init() {}

        /// Stages `text` as UTF-8 for `path` (see `stage(_:to:)` for bytes).
        public mutating func stage(_ text: String, to path: String) throws(MeasurementError) {
            try stage(Array(text.utf8), to: path)
        }

        /// Writes `bytes` to a temporary file beside `path`, `fsync`ed, to be renamed by
        /// `commit`. On a failure every file staged so far is removed too (`discard`).
        /// - Throws: 307 or 308, as `AtomicFile.write`.
        public mutating func stage(_ bytes: [UInt8], to path: String) throws(MeasurementError) {
            do throws(MeasurementError) {
                staged.append((try AtomicFile.temporary(holding: bytes, for: path), path))
            } catch {
                discard()
                throw error
            }
        }

        /// Renames every staged file over its target, in the order staged, and syncs their
        /// directories (best effort). On a failure the files not yet renamed are removed.
        /// - Throws: 308 naming the target whose rename failed.
        public mutating func commit() throws(MeasurementError) {
            var directories: [String] = []
            for (index, (temporary, path)) in staged.enumerated() {
                guard rename(temporary, path) == 0 else {
                    let reason = lastErrorText()
                    for file in staged[index...] { _ = unlink(file.temporary) }
                    staged.removeAll()
                    throw .outputWriteFailed(path: path, reason: reason)
                }
                // A sweep's per-run files share one or two directories: the last is enough.
                let directory = AtomicFile.split(path).directory
                if directories.last != directory && !directories.contains(directory) {
                    directories.append(directory)
                }
            }
            staged.removeAll()
            for directory in directories { AtomicFile.syncDirectory(directory) }
        }

        /// Removes every staged file that was not renamed; the targets keep their bytes.
        public mutating func discard() {
            for file in staged { _ = unlink(file.temporary) }
            staged.removeAll()
        }
    }

    /// A temporary file beside `path` (mode 0644, `fsync`ed) holding `bytes`.
    /// - Throws: 307 or 308, as `write`; no file is left behind then.
    private static func temporary(
        holding bytes: [UInt8], for path: String
    ) throws(MeasurementError) -> String {
        let (directory, name) = split(path)
        guard !name.isEmpty else {
            throw .outputWriteFailed(path: path, reason: "the path names a directory, not a file")
        }
        try checkDirectory(directory, for: path)
        if isDirectory(path) {
            throw .outputWriteFailed(path: path, reason: "a directory already exists at that path")
        }
        let (descriptor, temporaryPath) = try createTemporary(in: directory, name: name, for: path)
        do throws(MeasurementError) {
            try writeAll(bytes, to: descriptor, path: path)
            guard fchmod(descriptor, 0o644) == 0, fsync(descriptor) == 0 else {
                throw .outputWriteFailed(path: path, reason: lastErrorText())
            }
        } catch {
            _ = close(descriptor)
            _ = unlink(temporaryPath)
            throw error
        }
        guard close(descriptor) == 0 else {
            let reason = lastErrorText()
            _ = unlink(temporaryPath)
            throw .outputWriteFailed(path: path, reason: reason)
        }
        return temporaryPath
    }

    /// `("out", "runs.csv")` for `out/runs.csv`; `(".", "x")` for `x`; `("/", "x")` for `/x`.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        return (directory.isEmpty ? "/" : directory, name)
    }

    private static func checkDirectory(
        _ directory: String, for path: String
    ) throws(MeasurementError) {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be read (\(lastErrorText()))"
            throw .outputNotWritable(path: path, directory: directory, reason: reason)
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            throw .outputNotWritable(path: path, directory: directory, reason: "is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            let reason = "is not writable (\(lastErrorText()))"
            throw .outputNotWritable(path: path, directory: directory, reason: reason)
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    private static func createTemporary(
        in directory: String, name: String, for path: String
    ) throws(MeasurementError) -> (Int32, String) {
        var template = Array("\(directory)/.\(name).tmp-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            mkstemp(buffer.baseAddress!)
        }
        guard descriptor >= 0 else {
            let reason = "is not writable (\(lastErrorText()))"
            throw .outputNotWritable(path: path, directory: directory, reason: reason)
        }
        let temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (descriptor, temporaryPath)
    }

    private static func writeAll(
        _ bytes: [UInt8], to descriptor: Int32, path: String
    ) throws(MeasurementError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .outputWriteFailed(path: path, reason: lastErrorText())
            }
            precondition(written > 0, "write(2) returned 0 for a non-empty buffer")
            offset += written
        }
    }

    fileprivate static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}

/// `write(2)`, reachable from inside `AtomicFile` whose own `write` shadows it.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// `strerror(errno)`, e.g. "Permission denied".
func lastErrorText() -> String {
    String(cString: strerror(errno))
}
