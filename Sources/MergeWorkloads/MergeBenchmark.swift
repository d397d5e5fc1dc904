//! The merge benchmark runner: integrates prepared inputs, timing the merge alone.

import MergeCore

/// Why a benchmark run failed: the merge or the replica rejected the changesets.
public enum MergeBenchmarkError: Error, Sendable, CustomStringConvertible {
    case merge(MergeError, client: Int)
    case apply(ApplyError, stage: String)

    public var description: String {
        switch self {
        case .merge(let error, let client):
            "merge failed while integrating client \(client): \(error) (code \(error.code)); "
                + "the workload's changesets are inconsistent, so report the seed"
        case .apply(let error, let stage):
            "applying the \(stage) failed: \(error) (code \(error.code)); "
                + "the merged changesets are invalid for the replica, so report the seed"
        }
    }
}

/// Counts heap allocations (per thread) for a benchmark. The merge modules do not interpose
/// `malloc` themselves (the package-benchmark harness, which links them, brings its own
/// interposer); `syncsim` passes one backed by its `CAllocationCount` target on glibc.
public struct AllocationCounter: Sendable {
    /// Turns counting on for the calling thread (nestable).
    public var start: @Sendable () -> Void
    /// Ends one `start`.
    public var stop: @Sendable () -> Void
    /// The allocations the calling thread made so far while counting.
    public var read: @Sendable () -> UInt64

    public init(start: @escaping @Sendable () -> Void, stop: @escaping @Sendable () -> Void,
                read: @escaping @Sendable () -> UInt64) {
        self.start = start
        self.stop = stop
        self.read = read
    }
}

/// The figures of one merge run.
public struct MergeMeasurement: Sendable, Hashable {
    public var name: String
    public var role: MergeRole
    public var clients: Int
    /// Instructions integrated: all uploads (server) or the download (client).
    public var instructionsMerged: Int
    /// Instructions on the other side (server: the history at each merge, summed; client: L).
    public var instructionsAgainst: Int
    /// Process CPU time of the `Transformer.merge` calls alone, in nanoseconds.
    public var mergeCpuNs: UInt64
    /// The same CPU time split by merge phase (`Transformer.phaseTimes`).
    public var phases = MergePhaseTimes()
    /// Encoded bytes of the integrated changesets (before the merge) per instruction.
    public var encodedBytesPerInstruction: Double
    /// Growth of the peak RSS during the merge, per merged instruction (nil if unknown).
    public var peakMemoryBytesPerInstruction: Double?
    /// The process's peak RSS at the end of the run (`ru_maxrss`), in bytes.
    public var peakResidentBytes: UInt64
    /// Heap allocations made during the `Transformer.merge` calls (nil without a counter).
    public var allocations: UInt64? = nil
    /// `Replica.contentDigest()` of the merged state.
    public var replicaDigest: UInt64
    /// FNV-1a of the encodings of the transformed changesets, in order.
    public var changesetDigest: UInt64

    /// Instructions merged per CPU second.
    public var instructionsPerSecond: Double {
        mergeCpuNs == 0 ? 0 : Double(instructionsMerged) / (Double(mergeCpuNs) / 1e9)
    }

    /// Heap allocations of the merge per merged instruction (nil without a counter).
    public var allocationsPerInstruction: Double? {
        allocations.map { Double($0) / Double(max(instructionsMerged, 1)) }
    }
}

/// Runs merges of prepared inputs and measures them.
public enum MergeBenchmark {
    /// Integrates `inputs` and measures it. Inputs are built and copied before the timed
    /// region; only the `Transformer.merge` calls are timed, and with `allocations` only their
    /// allocations are counted.
    ///
    /// - Throws: `MergeBenchmarkError` if a merge or an apply fails.
    /// - Complexity: that of the merges, plus O(n) preparation and digests.
    public static func run(
        _ inputs: MergeInputs, allocations counter: AllocationCounter? = nil
    ) throws(MergeBenchmarkError) -> MergeMeasurement {
        let encodedBytes: Int
        var measurement: MergeMeasurement
        counter?.start()
        defer { counter?.stop() }
        switch inputs.role {
        case .server:
            encodedBytes = inputs.uploads.reduce(0) { $0 + encodedSize($1) }
            measurement = try runServer(inputs, counter: counter)
        case .client:
            encodedBytes = encodedSize(inputs.download)
            measurement = try runClient(inputs, counter: counter)
        }
        let merged = max(measurement.instructionsMerged, 1)
        measurement.encodedBytesPerInstruction = Double(encodedBytes) / Double(merged)
        measurement.peakResidentBytes = ProcessMetrics.peakResidentBytes()
        return measurement
    }

    // MARK: Server role

    private static func runServer(
        _ inputs: MergeInputs, counter: AllocationCounter?
    ) throws(MergeBenchmarkError) -> MergeMeasurement {
        // The server decodes each upload into buffers it owns, which the merge replaces (and
        // so releases) when it rewrites a changeset; `inputs` keeps the originals.
        var uploads = inputs.uploads.map(ownedCopy)
        let merged = inputs.instructionsMerged
        var against = 0
        var cpuNs: UInt64 = 0
        var allocations: UInt64 = 0
        let memory = MemoryWatch()
        var phases = MergePhaseTimes()
        let history = try integrate(uploads: &uploads, cpuNs: &cpuNs, against: &against,
                                    phases: &phases, allocations: counter,
                                    allocationCount: &allocations)
        let peak = memory.peakGrowthBytes()
        var replica = try replicaFromBase(inputs.base)
        for changeset in history {
            do throws(ApplyError) { try replica.apply(changeset) } catch {
                throw .apply(error, stage: "server history")
            }
        }
        return MergeMeasurement(
            name: inputs.name, role: .server, clients: inputs.clients, instructionsMerged: merged,
            instructionsAgainst: against, mergeCpuNs: cpuNs, phases: phases,
            encodedBytesPerInstruction: 0,
            peakMemoryBytesPerInstruction: peak.map { Double($0) / Double(max(merged, 1)) },
            peakResidentBytes: 0, allocations: counter.map { _ in allocations },
            replicaDigest: replica.contentDigest(), changesetDigest: changesetDigest(history))
    }

    /// Integrates the uploads one client after another, the way a server does: each upload is
    /// merged against the history entries it has not seen (all of them, since every client
    /// made its changesets on the base), then appended to the history. The history's
    /// reciprocal form for the uploading client comes out as `LocalEdits`, as in
    /// `SyncEngine.ServerFile`; it is dropped before the next client's merge, as when the
    /// client downloads before it uploads again (a server keeps it until then). Only the
    /// `merge` calls add to `cpuNs` (and, with `counter`, to `allocationCount`).
    ///
    /// - Returns: the server history after the base, in server-version order.
    public static func integrate(
        uploads: inout [ContiguousArray<Changeset>], cpuNs: inout UInt64, against: inout Int,
        phases: inout MergePhaseTimes, allocations counter: AllocationCounter? = nil,
        allocationCount: inout UInt64
    ) throws(MergeBenchmarkError) -> ContiguousArray<Changeset> {
        var history = ContiguousArray<Changeset>()
        history.reserveCapacity(uploads.reduce(0) { $0 + $1.count })
        var transformer = Transformer()
        transformer.phaseClock = { ProcessMetrics.cpuTimeNs() }
        defer { phases = transformer.phaseTimes }
        var reciprocal = LocalEdits()
        for client in uploads.indices {
            var incoming = ContiguousArray<Changeset>()
            swap(&incoming, &uploads[client])  // unique: the merge mutates it without copying
            against += history.instructionCount
            let allocationsBefore = counter?.read() ?? 0
            let start = ProcessMetrics.cpuTimeNs()
            do throws(MergeError) {
                try transformer.merge(incoming: &incoming, local: history,
                                      localEdits: &reciprocal, localFileIdent: 1)
            } catch {
                throw .merge(error, client: client)
            }
            cpuNs += ProcessMetrics.cpuTimeNs() - start
            if let counter { allocationCount &+= counter.read() &- allocationsBefore }
            for var changeset in incoming {
                changeset.version = 2 + UInt64(history.count)
                history.append(changeset)
            }
        }
        return history
    }

    /// A copy of `changesets` whose instruction buffers are its own (untimed preparation), as
    /// a peer's freshly decoded changesets are. Drops scan columns: a server's cache, never on
    /// the wire.
    static func ownedCopy(_ changesets: ContiguousArray<Changeset>) -> ContiguousArray<Changeset> {
        var copy = changesets
        for index in copy.indices {
            var instructions = ContiguousArray<Instruction>()
            instructions.reserveCapacity(copy[index].instructions.count)
            instructions.append(contentsOf: copy[index].instructions)
            copy[index].instructions = instructions
        }
        return copy
    }

    // MARK: Client role

    private static func runClient(
        _ inputs: MergeInputs, counter: AllocationCounter?
    ) throws(MergeBenchmarkError) -> MergeMeasurement {
        // Both sides in buffers the client owns, before the timed region: it decoded the
        // download, and its unsynced changesets are its own (their merged forms replace them).
        var download = ownedCopy(inputs.download)
        var local = ownedCopy(inputs.local)
        let merged = download.instructionCount
        let against = local.instructionCount
        var transformer = Transformer()
        transformer.phaseClock = { ProcessMetrics.cpuTimeNs() }
        let memory = MemoryWatch()
        let allocationsBefore = counter?.read() ?? 0
        let start = ProcessMetrics.cpuTimeNs()
        do throws(MergeError) {
            try transformer.merge(incoming: &download, local: &local,
                                  localFileIdent: inputs.localFileIdent)
        } catch {
            throw .merge(error, client: 0)
        }
        let cpuNs = ProcessMetrics.cpuTimeNs() - start
        let allocations = counter.map { $0.read() &- allocationsBefore }
        let peak = memory.peakGrowthBytes()
        var replica = try replicaFromBase(inputs.base)
        for changeset in inputs.local {
            do throws(ApplyError) { try replica.apply(changeset) } catch {
                throw .apply(error, stage: "local changesets")
            }
        }
        for changeset in download {
            do throws(ApplyError) { try replica.apply(changeset) } catch {
                throw .apply(error, stage: "transformed download")
            }
        }
        return MergeMeasurement(
            name: inputs.name, role: .client, clients: inputs.clients, instructionsMerged: merged,
            instructionsAgainst: against, mergeCpuNs: cpuNs, phases: transformer.phaseTimes,
            encodedBytesPerInstruction: 0,
            peakMemoryBytesPerInstruction: peak.map { Double($0) / Double(max(merged, 1)) },
            peakResidentBytes: 0, allocations: allocations, replicaDigest: replica.contentDigest(),
            changesetDigest: changesetDigest(download))
    }

    /// The state the server reaches for the client-role inputs: the download applied as
    /// history, then the client's local changesets integrated against it. Equal to the
    /// client's merged state when the merge converges.
    public static func serverViewOfClientInputs(_ inputs: MergeInputs) throws(MergeBenchmarkError)
        -> UInt64
    {
        precondition(inputs.role == .client, "only client-role inputs have a server view")
        var local = inputs.local
        for index in local.indices { local[index].originFileIdent = inputs.localFileIdent }
        var reciprocal = inputs.download
        var transformer = Transformer()
        do throws(MergeError) {
            try transformer.merge(incoming: &local, local: &reciprocal, localFileIdent: 1)
        } catch {
            throw .merge(error, client: 0)
        }
        var replica = try replicaFromBase(inputs.base)
        for changeset in inputs.download + local {
            do throws(ApplyError) { try replica.apply(changeset) } catch {
                throw .apply(error, stage: "server view")
            }
        }
        return replica.contentDigest()
    }

    // MARK: Helpers

    public static func replicaFromBase(_ base: ContiguousArray<Changeset>) throws(MergeBenchmarkError)
        -> Replica
    {
        var replica = Replica()
        for changeset in base {
            do throws(ApplyError) { try replica.apply(changeset) } catch {
                throw .apply(error, stage: "base")
            }
        }
        return replica
    }

    static func encodedSize(_ changesets: ContiguousArray<Changeset>) -> Int {
        var bytes = [UInt8]()
        var total = 0
        for changeset in changesets {
            bytes.removeAll(keepingCapacity: true)
            changeset.encode(into: &bytes)
            total += bytes.count
        }
        return total
    }

    /// FNV-1a (64-bit) over the encodings of `changesets`, in order.
    public static func changesetDigest(_ changesets: ContiguousArray<Changeset>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var bytes = [UInt8]()
        for changeset in changesets {
            bytes.removeAll(keepingCapacity: true)
            changeset.encode(into: &bytes)
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }
}

/// The growth of peak RSS over a region: reset the kernel's mark, read it afterwards.
struct MemoryWatch {
    private let startBytes: UInt64?

    init() {
        if ProcessMetrics.resetPeakResident(), let resident = ProcessMetrics.residentBytes() {
            startBytes = resident.current
        } else {
            startBytes = nil
        }
    }

    func peakGrowthBytes() -> UInt64? {
        guard let startBytes, let resident = ProcessMetrics.residentBytes() else { return nil }
        return resident.peak > startBytes ? resident.peak - startBytes : 0
    }
}

extension MergeBenchmark {
    /// Performs the merges of `inputs` and nothing else (no digests, no replicas), for
    /// harnesses that time the whole call, such as package-benchmark. Server role: the uploads
    /// are integrated one after another (each client's reciprocal edits included); client role:
    /// one merge of the download against the local changesets.
    ///
    /// - Returns: the number of instructions merged, to keep the work observable.
    /// - Throws: `MergeBenchmarkError` if a merge fails.
    public static func mergeOnly(_ inputs: inout MergeInputs) throws(MergeBenchmarkError) -> Int {
        let merged = inputs.instructionsMerged
        switch inputs.role {
        case .server:
            var cpuNs: UInt64 = 0
            var against = 0
            var phases = MergePhaseTimes()
            var allocations: UInt64 = 0
            let history = try integrate(uploads: &inputs.uploads, cpuNs: &cpuNs, against: &against,
                                        phases: &phases, allocationCount: &allocations)
            _ = history
            return merged
        case .client:
            var transformer = Transformer()
            do throws(MergeError) {
                try transformer.merge(incoming: &inputs.download, local: &inputs.local,
                                      localFileIdent: inputs.localFileIdent)
            } catch {
                throw .merge(error, client: 0)
            }
            return merged
        }
    }
}
