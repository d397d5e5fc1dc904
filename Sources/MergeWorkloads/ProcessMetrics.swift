//! CPU time and memory of the benchmark process.
//!
//! This is benchmark-harness code, not simulated code: it is the one place in the merge
//! modules that reads a clock (`CLOCK_PROCESS_CPUTIME_ID`) and the kernel's memory counters.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Readings of the process's CPU clock and memory.
public enum ProcessMetrics {
    /// CPU time consumed by the process so far, in nanoseconds.
    @inline(__always)
    public static func cpuTimeNs() -> UInt64 {
        var time = timespec()
        let status = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        precondition(status == 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed")
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The peak resident set size of the process so far (`getrusage` `ru_maxrss`), in bytes.
    public static func peakResidentBytes() -> UInt64 {
        var usage = rusage()
        #if canImport(Glibc)
        let status = getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        let status = getrusage(RUSAGE_SELF, &usage)
        #endif
        precondition(status == 0, "getrusage failed")
        #if canImport(Darwin)
        return UInt64(usage.ru_maxrss)  // bytes on Darwin
        #else
        return UInt64(usage.ru_maxrss) * 1_024  // kilobytes on Linux
        #endif
    }

    /// Resets the kernel's peak-RSS mark to the current RSS (Linux `/proc/self/clear_refs`, 5).
    /// Returns false where that is not possible; peak deltas are then not reported.
    @discardableResult
    public static func resetPeakResident() -> Bool {
        #if os(Linux)
        let file = open("/proc/self/clear_refs", O_WRONLY)
        guard file >= 0 else { return false }
        defer { close(file) }
        let written = write(file, "5", 1)
        return written == 1
        #else
        return false
        #endif
    }

    /// The current and peak RSS from `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
    public static func residentBytes() -> (current: UInt64, peak: UInt64)? {
        #if os(Linux)
        let file = open("/proc/self/status", O_RDONLY)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 8_192)
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        var current: UInt64?
        var peak: UInt64?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { current = kilobytes(line) }
            if line.hasPrefix("VmHWM:") { peak = kilobytes(line) }
        }
        guard let current, let peak else { return nil }
        return (current * 1_024, peak * 1_024)
        #else
        return nil
        #endif
    }

    private static func kilobytes(_ line: Substring) -> UInt64? {
        let digits = line.split(separator: " ", omittingEmptySubsequences: true)
            .first { $0.allSatisfy(\.isNumber) }
        return digits.flatMap { UInt64($0) }
    }
}
