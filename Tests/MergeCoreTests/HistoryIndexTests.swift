//! `HistoryIndex`: the index itself (dedup, chains, truncation, reset, copies) and the claim
//! it rests on, checked over seeded random histories: merging an upload against only the
//! entries the index selects gives the same transformed upload and the same reciprocal forms
//! as merging it against the whole window, with schema instructions and EraseColumn.

import MergeCore
import Randomness
import Testing

/// A server that integrates every upload twice: with the full window (the reference
/// `ModelServer`) and with only the entries the index selects (its own reciprocal copies), and
/// compares the two after each upload.
struct FilteringServer {
    var reference: ModelServer
    var index = HistoryIndex()
    /// `reciprocal[client][position]`: the filtered server's reciprocal forms.
    var reciprocal: [[Changeset]]
    var transformer = Transformer()
    var selectedTotal = 0
    var windowTotal = 0
    var everythingCount = 0

    init(clientCount: Int) {
        reference = ModelServer(clientCount: clientCount)
        reciprocal = Array(repeating: [], count: clientCount)
    }

    /// Integrates `upload` from `client` both ways; returns a mismatch description or nil.
    mutating func integrate(_ upload: Changeset, from client: Int) throws -> String? {
        let ident = UInt64(client + 2)
        let base = Int(upload.lastIntegratedRemoteVersion)
        var changeset = upload
        changeset.originFileIdent = ident
        var incoming: ContiguousArray<Changeset> = [changeset]
        var positions = ContiguousArray<Int32>()
        var scratch = ContiguousArray<Int32>()
        let selection = index.relevantEntries(touchedBy: incoming, from: base,
                                              excludingOrigin: ident, into: &positions,
                                              nodeScratch: &scratch)
        if selection == .everything {
            everythingCount += 1
            positions = ContiguousArray((base..<index.count).filter {
                index.origin(at: $0) != ident
            }.map { Int32($0) })
        }
        selectedTotal += positions.count
        windowTotal += (base..<index.count).filter { index.origin(at: $0) != ident }.count
        var local = ContiguousArray<Changeset>()
        for position in positions { local.append(reciprocal[client][Int(position)]) }
        var filteredError: MergeError?
        do {
            try transformer.merge(incoming: &incoming, local: &local,
                                  localFileIdent: ModelServer.fileIdent)
        } catch {
            filteredError = error
        }
        let before = reference.reciprocal[client]
        var referenceError: Error?
        do {
            try reference.integrate(upload, from: client)
        } catch {
            referenceError = error
        }
        if (filteredError == nil) != (referenceError == nil) {
            return "error mismatch: filtered \(String(describing: filteredError)), "
                + "full \(String(describing: referenceError))"
        }
        if filteredError != nil { return "both merges failed: \(filteredError!)" }
        for (offset, position) in positions.enumerated() {
            reciprocal[client][Int(position)] = local[offset]
        }
        // Every reciprocal form of the window: selected ones were merged, the others must be
        // untouched by the full merge.
        for position in base..<index.count {
            let full = reference.reciprocal[client][position]
            if reciprocal[client][position] != full {
                let wasSelected = positions.contains(Int32(position))
                return "reciprocal of entry \(position) for client \(client) differs "
                    + "(selected: \(wasSelected), unchanged by the full merge: \(before[position] == full))"
            }
        }
        var integrated = incoming[0]
        integrated.version = UInt64(index.count + 1)
        let referenceEntry = reference.history[reference.history.count - 1].changeset
        if integrated != referenceEntry {
            return "transformed upload differs at server version \(integrated.version)\n"
                + "filtered: \(integrated.instructions)\nfull: \(referenceEntry.instructions)"
        }
        index.append(integrated, at: index.count)
        for other in reciprocal.indices { reciprocal[other].append(integrated) }
        return nil
    }
}

/// Runs one seed of random edits, uploads and downloads through a `FilteringServer`; returns
/// a failure description or nil.
func runFilteringSeed(_ seed: UInt64, mix: EditMix, clientCount: Int,
                      server: inout FilteringServer) -> String? {
    let random = RandomStream(seed: seed, id: StreamID(domain: 0x4849_5354_4958))
    var clients = (0..<clientCount).map { ModelClient(id: $0) }
    var clocks = (0..<clientCount).map { _ in
        SkewedClock(now: 1_000 + random.uniformInt(below: 20))
    }
    func uploadAll(_ index: Int, _ clients: inout [ModelClient],
                   _ server: inout FilteringServer) throws -> String? {
        while clients[index].uploadedCount < clients[index].local.count {
            let upload = clients[index].local[clients[index].uploadedCount].original
            if let failure = try server.integrate(upload, from: index) { return failure }
            clients[index].uploadedCount += 1
        }
        return nil
    }
    do {
        for index in clients.indices {
            try clients[index].commit(TestSchema.instructions, timestamp: clocks[index].now)
        }
        for _ in 0..<150 {
            let index = Int(random.uniformInt(below: UInt64(clients.count)))
            let action = random.uniformInt(below: 10)
            if action < 5 {
                let count = 1 + Int(random.uniformInt(below: 3))
                try clients[index].commitRandom(count: count, random: random, mix: mix,
                                                timestamp: clocks[index].tick(random))
            } else if action < 8 {
                if let failure = try uploadAll(index, &clients, &server) {
                    return "seed \(seed): \(failure)"
                }
            } else {
                try clients[index].download(from: server.reference)
            }
        }
        for index in clients.indices {
            if let failure = try uploadAll(index, &clients, &server) { return "seed \(seed): \(failure)" }
        }
        for index in clients.indices { try clients[index].download(from: server.reference) }
        for client in clients where client.state != server.reference.state {
            return "seed \(seed): client \(client.id) diverged from the server"
        }
    } catch {
        return "seed \(seed): error \(error)"
    }
    server.index.checkInvariantsFully()
    return nil
}

@Suite("HistoryIndex")
struct HistoryIndexTests {
    static func object(_ key: Int64) -> ObjectRef { TestSchema.object(key) }

    static func entry(_ origin: UInt64, _ instructions: ContiguousArray<Instruction>) -> Changeset {
        Changeset(originFileIdent: origin, instructions: instructions)
    }

    static func query(_ index: HistoryIndex, _ instructions: ContiguousArray<Instruction>,
                      from start: Int = 0, excluding origin: UInt64? = nil)
        -> (HistoryIndex.Selection, [Int32])
    {
        var positions = ContiguousArray<Int32>()
        var scratch = ContiguousArray<Int32>()
        let selection = index.relevantEntries(touchedBy: [entry(9, instructions)], from: start,
                                              excludingOrigin: origin, into: &positions,
                                              nodeScratch: &scratch)
        return (selection, Array(positions))
    }

    static func update(_ key: Int64, _ value: Int64 = 1) -> Instruction {
        .update(object: object(key), field: TestSchema.plainInt, value: .int(value), isDefault: false)
    }

    static func link(_ key: Int64, to target: Int64) -> Instruction {
        .update(object: object(key), field: TestSchema.link, value: .link(object(target)),
                isDefault: false)
    }

    @Test func selectsEntriesTouchingTheObjectsAndSchemaEntries() {
        var index = HistoryIndex()
        index.append(Self.entry(2, [Self.update(1), Self.update(1), Self.update(2)]), at: 0)
        index.append(Self.entry(3, [Self.update(3)]), at: 1)
        index.append(Self.entry(2, [TestSchema.instructions[1]]), at: 2)
        index.append(Self.entry(4, [Self.link(5, to: 1)]), at: 3)
        index.append(Self.entry(3, [Self.update(2), Self.update(1)]), at: 4)
        index.checkInvariantsFully()
        #expect(Self.query(index, [Self.update(1)]) == (.positions, [0, 2, 3, 4]))
        #expect(Self.query(index, [Self.update(3)]) == (.positions, [1, 2]))
        #expect(Self.query(index, [Self.update(1)], from: 3) == (.positions, [3, 4]))
        #expect(Self.query(index, [Self.update(1)], excluding: 3) == (.positions, [0, 2, 3]))
        // A link target of the query selects entries touching the target.
        #expect(Self.query(index, [Self.link(7, to: 3)]) == (.positions, [1, 2]))
        // The entry carrying a link to 1 is selected by a query on its source object too.
        #expect(Self.query(index, [Self.update(5)]) == (.positions, [2, 3]))
        #expect(Self.query(index, [Self.update(99)]) == (.positions, [2]))
        #expect(Self.query(index, [Self.update(99)], from: 3) == (.positions, []))
        #expect(index.instructionCount(from: 0) == 8)
        #expect(index.instructionCount(from: 4) == 2)
    }

    @Test func eraseColumnSelectsEverything() {
        var index = HistoryIndex()
        index.append(Self.entry(2, [Self.update(1)]), at: 0)
        index.append(Self.entry(3, [.eraseColumn(table: TestSchema.table, field: 1)]), at: 1)
        index.append(Self.entry(2, [Self.update(2)]), at: 2)
        #expect(Self.query(index, [Self.update(7)]).0 == .everything)
        #expect(Self.query(index, [Self.update(7)], from: 2) == (.positions, []))
        let erase = Instruction.eraseColumn(table: TestSchema.table, field: 2)
        #expect(Self.query(index, [erase], from: 2).0 == .everything)
    }

    @Test func truncateRollsBackAndCopiesAreIndependent() {
        var index = HistoryIndex()
        for position in 0..<200 {
            let key = Int64(position % 13)
            let instructions: ContiguousArray<Instruction> = position % 50 == 7
                ? [.eraseColumn(table: TestSchema.table, field: 1)]
                : [Self.update(key), Self.link(key, to: (key * 7) % 13)]
            index.append(Self.entry(UInt64(2 + position % 3), instructions), at: position)
        }
        let backup = index
        var rebuilt = HistoryIndex()
        for position in 0..<100 {
            let key = Int64(position % 13)
            let instructions: ContiguousArray<Instruction> = position % 50 == 7
                ? [.eraseColumn(table: TestSchema.table, field: 1)]
                : [Self.update(key), Self.link(key, to: (key * 7) % 13)]
            rebuilt.append(Self.entry(UInt64(2 + position % 3), instructions), at: position)
        }
        index.truncate(toCount: 100)
        index.checkInvariantsFully()
        #expect(index.count == 100)
        #expect(backup.count == 200)
        for key in Int64(0)..<15 {
            for start in [0, 8, 60, 99, 100] {
                #expect(Self.query(index, [Self.update(key)], from: start)
                        == Self.query(rebuilt, [Self.update(key)], from: start))
            }
        }
        #expect(index.instructionCount(from: 0) == rebuilt.instructionCount(from: 0))
        index.reset()
        #expect(index.count == 0)
        #expect(Self.query(index, [Self.update(1)]) == (.positions, []))
        // The backup still answers for all 200 entries (brute force: key 1 is touched by
        // positions ≡ 1 (mod 13) and by links to 1, i.e. from key 2 (2·7 = 14 ≡ 1)).
        let expected = (190..<200).filter { position in
            let key = position % 13
            return key == 1 || key == 2
        }.map { Int32($0) }
        #expect(Self.query(backup, [Self.update(1)], from: 190) == (.positions, expected))
    }

    /// The equivalence claim, over hundreds of seeded random histories: a larger key space
    /// (so that filtering drops entries), links, lists, sets, counters, erases and default
    /// writes; a third of the seeds mix in EraseColumn/AddColumn races.
    @Test func filteredMergesEqualFullMerges() {
        var selected = 0
        var window = 0
        var everything = 0
        for seed in UInt64(1)...300 {
            var mix = EditMix.everything
            mix.keySpace = seed % 2 == 0 ? 6 : 40
            mix.schemaChanges = seed % 3 == 0
            var server = FilteringServer(clientCount: 4)
            let failure = runFilteringSeed(seed, mix: mix, clientCount: 4, server: &server)
            #expect(failure == nil, "\(failure ?? "")")
            if failure != nil { return }
            selected += server.selectedTotal
            window += server.windowTotal
            everything += server.everythingCount
        }
        // The filter must actually drop entries, and the EraseColumn path must be exercised.
        #expect(selected < window)
        #expect(everything > 0)
    }
}
