//! Reusable convergence helpers: a two-sided merge check, and a small server/client model of
//! the reference's history protocol (server history plus per-client reciprocal history,
//! REALM-SEMANTICS §2.1 and §3) that the permutation and fuzz tests drive.

import MergeCore

/// Applies a sequence of changesets, returning the error of the first that fails.
func applying(_ changesets: some Sequence<Changeset>, to base: Replica) -> Result<Replica, ApplyError> {
    var replica = base
    for changeset in changesets {
        do throws(ApplyError) {
            try replica.apply(changeset)
        } catch {
            return .failure(error)
        }
    }
    return .success(replica)
}

/// The outcome of merging `a` (local) with `b` (incoming), both made on `base`.
enum TwoWayOutcome {
    case converged(Replica)
    case diverged(viaLocalFirst: Replica, viaIncomingFirst: Replica)
    case applyFailed(String)
    case mergeFailed(MergeError)
}

/// Merges `local` with `incoming` (both made on `base`) and applies both orders:
/// base · local · incoming′ and base · incoming · local′.
func mergeTwoWays(
    base: Replica, local: [Changeset], incoming: [Changeset], localFileIdent: UInt64 = 1
) -> TwoWayOutcome {
    var transformer = Transformer()
    var transformedIncoming = ContiguousArray(incoming)
    var transformedLocal = ContiguousArray(local)
    do throws(MergeError) {
        try transformer.merge(incoming: &transformedIncoming, local: &transformedLocal,
                              localFileIdent: localFileIdent)
    } catch {
        return .mergeFailed(error)
    }
    let first: Replica
    switch applying(local + Array(transformedIncoming), to: base) {
    case .success(let replica): first = replica
    case .failure(let error):
        return .applyFailed("local then incoming′: \(error) incoming′=\(Array(transformedIncoming))")
    }
    let second: Replica
    switch applying(incoming + Array(transformedLocal), to: base) {
    case .success(let replica): second = replica
    case .failure(let error):
        return .applyFailed("incoming then local′: \(error) local′=\(Array(transformedLocal))")
    }
    if first == second && first.contentDigest() == second.contentDigest() {
        return .converged(first)
    }
    return .diverged(viaLocalFirst: first, viaIncomingFirst: second)
}

// MARK: - A server and clients speaking the history protocol

/// One entry of the server's history.
struct ServerEntry {
    var changeset: Changeset
    /// The client that made it.
    var origin: Int
    /// For each client, the last client version the server had integrated when this entry
    /// was added (what a download carries as `last_integrated_client_version`).
    var integratedClientVersions: [UInt64]
}

/// A server: state, history, and per-client reciprocal forms of the history.
struct ModelServer {
    var state = Replica()
    var history: [ServerEntry] = []
    /// `reciprocal[client][v - 1]`: entry v as seen by `client` after its own later uploads.
    var reciprocal: [[Changeset]]
    var integratedClientVersions: [UInt64]
    var transformer = Transformer()
    static let fileIdent: UInt64 = 1

    init(clientCount: Int) {
        reciprocal = Array(repeating: [], count: clientCount)
        integratedClientVersions = Array(repeating: 0, count: clientCount)
    }

    var version: UInt64 { UInt64(history.count) }

    /// Integrates one upload from `client` (file ident `client + 2`).
    mutating func integrate(_ upload: Changeset, from client: Int) throws -> Void {
        var changeset = upload
        changeset.originFileIdent = UInt64(client + 2)
        let base = Int(changeset.lastIntegratedRemoteVersion)
        precondition(base <= history.count, "upload based on a future server version")
        var positions: [Int] = []
        var local = ContiguousArray<Changeset>()
        for index in base..<history.count where history[index].origin != client {
            positions.append(index)
            local.append(reciprocal[client][index])
        }
        var incoming: ContiguousArray<Changeset> = [changeset]
        try transformer.merge(incoming: &incoming, local: &local, localFileIdent: Self.fileIdent)
        for (offset, index) in positions.enumerated() { reciprocal[client][index] = local[offset] }
        var integrated = incoming[0]
        try state.apply(integrated)
        integratedClientVersions[client] = upload.version
        integrated.version = version + 1
        history.append(ServerEntry(changeset: integrated, origin: client,
                                   integratedClientVersions: integratedClientVersions))
        for other in reciprocal.indices { reciprocal[other].append(integrated) }
    }
}

/// One local changeset of a client: the form to upload and the reciprocal form.
struct LocalEntry {
    var original: Changeset
    var reciprocal: Changeset
}

/// A client: state, local history, sync progress.
struct ModelClient {
    let id: Int
    var state = Replica()
    var local: [LocalEntry] = []
    var serverVersion: UInt64 = 0
    var uploadedCount = 0
    var transformer = Transformer()

    init(id: Int) { self.id = id }

    var fileIdent: UInt64 { UInt64(id + 2) }

    /// Commits a local changeset (already applied to `state` by the caller, or applied here).
    mutating func commit(_ instructions: ContiguousArray<Instruction>, timestamp: UInt64) throws {
        let changeset = Changeset(version: UInt64(local.count + 1),
                                  lastIntegratedRemoteVersion: serverVersion,
                                  originTimestamp: timestamp, originFileIdent: 0,
                                  instructions: instructions)
        try state.apply(changeset)
        local.append(LocalEntry(original: changeset, reciprocal: changeset))
    }

    /// Uploads every local changeset not uploaded yet.
    mutating func upload(to server: inout ModelServer) throws {
        while uploadedCount < local.count {
            try server.integrate(local[uploadedCount].original, from: id)
            uploadedCount += 1
        }
    }

    /// Downloads and integrates every server entry not integrated yet.
    mutating func download(from server: ModelServer) throws {
        while serverVersion < server.version {
            let entry = server.history[Int(serverVersion)]
            serverVersion += 1
            if entry.origin == id { continue }
            let integrated = Int(entry.integratedClientVersions[id])
            var local = ContiguousArray<Changeset>()
            for index in integrated..<self.local.count { local.append(self.local[index].reciprocal) }
            var incoming: ContiguousArray<Changeset> = [entry.changeset]
            try transformer.merge(incoming: &incoming, local: &local, localFileIdent: fileIdent)
            for (offset, index) in (integrated..<self.local.count).enumerated() {
                self.local[index].reciprocal = local[offset]
            }
            try state.apply(incoming[0])
        }
    }
}
