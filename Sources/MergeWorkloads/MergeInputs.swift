//! The inputs of one merge benchmark run, prepared outside the timed region.

import MergeCore
import Randomness

/// Everything one merge run needs: the base state and the changesets to integrate.
///
/// Server role: `uploads[c]` are the changesets of client `c` (file ident `c + 2`), all made
/// concurrently against the base, integrated in index order. Client role: `download` is a
/// linear server history made after the base, and `local` the client's unsynced changesets,
/// also made against the base (origin file ident 0 = local; the client's ident is
/// `localFileIdent`).
public struct MergeInputs: Sendable {
    public var name: String
    public var role: MergeRole
    public var clients: Int
    public var base: ContiguousArray<Changeset>
    public var uploads: [ContiguousArray<Changeset>]
    public var download: ContiguousArray<Changeset>
    public var local: ContiguousArray<Changeset>
    public var localFileIdent: UInt64

    public init(name: String, role: MergeRole, clients: Int, base: ContiguousArray<Changeset>,
                uploads: [ContiguousArray<Changeset>] = [], download: ContiguousArray<Changeset> = [],
                local: ContiguousArray<Changeset> = [], localFileIdent: UInt64 = 2)
    {
        self.name = name
        self.role = role
        self.clients = clients
        self.base = base
        self.uploads = uploads
        self.download = download
        self.local = local
        self.localFileIdent = localFileIdent
    }

    /// The instructions the run integrates: every upload (server) or the download (client).
    public var instructionsMerged: Int {
        switch role {
        case .server: uploads.reduce(0) { $0 + $1.instructionCount }
        case .client: download.instructionCount
        }
    }

    /// Generates the inputs of a workload for a role. Deterministic for the parameters.
    ///
    /// - Complexity: O(instructions + objects).
    public static func generate(_ parameters: WorkloadParameters, role: MergeRole) -> MergeInputs {
        let generator = WorkloadGenerator(parameters)
        let base: ContiguousArray<Changeset> = [generator.baseChangeset()]
        switch role {
        case .server:
            var uploads = [ContiguousArray<Changeset>]()
            uploads.reserveCapacity(parameters.clients)
            for client in 0..<parameters.clients {
                let share = parameters.instructions / parameters.clients
                    + (client < parameters.instructions % parameters.clients ? 1 : 0)
                let random = generator.stream(author: client)
                var view = generator.initialView(author: client, random: random)
                uploads.append(makeChangesets(
                    generator, count: share, view: &view, random: random,
                    fileIdent: UInt64(client) + 2, firstVersion: 1, lastIntegrated: 1))
            }
            return MergeInputs(name: parameters.kind.rawValue, role: .server,
                               clients: parameters.clients, base: base, uploads: uploads)
        case .client:
            // The local client is author 0; the download's authors take turns on one shared
            // view, so the download is a valid linear history.
            let localRandom = generator.stream(author: 0)
            var localView = generator.initialView(author: 0, random: localRandom)
            let local = makeChangesets(
                generator, count: parameters.localInstructions, view: &localView,
                random: localRandom, fileIdent: 0, firstVersion: 1, lastIntegrated: 1)
            let download = makeLinearHistory(generator, parameters: parameters)
            return MergeInputs(name: parameters.kind.rawValue, role: .client,
                               clients: parameters.clients, base: base, download: download,
                               local: local, localFileIdent: 2)
        }
    }

    private static func makeChangesets(
        _ generator: WorkloadGenerator, count: Int, view: inout EditorView, random: RandomStream,
        fileIdent: UInt64, firstVersion: UInt64, lastIntegrated: UInt64
    ) -> ContiguousArray<Changeset> {
        let perChangeset = generator.parameters.instructionsPerChangeset
        var changesets = ContiguousArray<Changeset>()
        changesets.reserveCapacity((count + perChangeset - 1) / perChangeset)
        var made = 0
        while made < count {
            let size = min(perChangeset, count - made)
            var changeset = Changeset(
                version: firstVersion + UInt64(changesets.count),
                lastIntegratedRemoteVersion: lastIntegrated,
                originTimestamp: generator.timestamp(sequence: changesets.count, random: random),
                originFileIdent: fileIdent)
            generator.makeInstructions(count: size, view: &view, random: random,
                                       into: &changeset.instructions)
            changesets.append(changeset)
            made += size
        }
        return changesets
    }

    private static func makeLinearHistory(_ generator: WorkloadGenerator,
                                          parameters: WorkloadParameters) -> ContiguousArray<Changeset>
    {
        let authors = max(parameters.clients - 1, 1)
        let streams = (0..<authors).map { generator.stream(author: 1 + $0) }
        var view = generator.initialView(author: 1, random: streams[0])
        let perChangeset = parameters.instructionsPerChangeset
        var changesets = ContiguousArray<Changeset>()
        var made = 0
        while made < parameters.instructions {
            let author = changesets.count % authors
            let random = streams[author]
            let size = min(perChangeset, parameters.instructions - made)
            var changeset = Changeset(
                version: 2 + UInt64(changesets.count), lastIntegratedRemoteVersion: 0,
                originTimestamp: generator.timestamp(sequence: changesets.count, random: random),
                originFileIdent: UInt64(author) + 3)
            generator.makeInstructions(count: size, view: &view, random: random,
                                       into: &changeset.instructions)
            changesets.append(changeset)
            made += size
        }
        return changesets
    }
}

extension ContiguousArray where Element == Changeset {
    /// The number of instructions of all changesets.
    var instructionCount: Int { reduce(0) { $0 + $1.instructions.count } }
}
