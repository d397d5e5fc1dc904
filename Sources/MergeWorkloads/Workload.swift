//! The merge workloads of the MergeCore issue (item 6), their parameters and roles.
//!
//! A workload is a recipe for concurrent changesets on a common base state. Every draw comes
//! from a `RandomStream` derived from the seed, one stream per client, so a workload is
//! deterministic for a seed and adding a client does not change what the others do.

import MergeCore
import Randomness

/// Which kind of edits the clients make.
public enum WorkloadKind: String, CaseIterable, Sendable, Hashable {
    /// Each instruction sets one of 4 integer fields of one of `objects` objects, chosen
    /// uniformly.
    case mapUniform = "map-uniform"
    /// As `mapUniform`, with objects chosen by Zipf(0.99) rank.
    case mapZipf = "map-zipf"
    /// 15 % create new objects, 10 % erase objects, 75 % set fields; clients erase objects
    /// that other clients edit.
    case churn
    /// 10 lists of 100 integers; 70 % insert at a random position, 30 % erase one.
    case list
    /// One list of characters (Unicode scalars as integers); a typing cursor that jumps to a
    /// random position with probability 1/50 and otherwise stays where the last edit left it;
    /// 70 % insert at the cursor, 30 % delete before it (backspace).
    case textLike = "text-like"

    /// A stable small number per kind, used to derive random streams.
    var streamDomain: UInt64 {
        switch self {
        case .mapUniform: 0x4D57_0001
        case .mapZipf: 0x4D57_0002
        case .churn: 0x4D57_0003
        case .list: 0x4D57_0004
        case .textLike: 0x4D57_0005
        }
    }
}

/// Which peer integrates the changesets.
public enum MergeRole: String, CaseIterable, Sendable, Hashable {
    /// The server integrates the uploads of all K clients one after another, each against the
    /// history entries of the other clients that it had not seen (their reciprocal form).
    case server
    /// A client integrates a download of D instructions against L unsynced local ones.
    case client
}

/// The parameters of one generated workload.
public struct WorkloadParameters: Sendable, Hashable {
    public var kind: WorkloadKind
    /// Clients K. Server role: K clients upload; client role: K − 1 remote clients authored
    /// the download (at least one).
    public var clients: Int
    /// Objects N of the map and churn workloads (the base state).
    public var objects: Int
    /// Instructions merged. Server role: all uploads together; client role: D, the download.
    public var instructions: Int
    /// Client role only: L, the unsynced local instructions (defaults to D).
    public var localInstructions: Int
    /// Instructions per changeset.
    public var instructionsPerChangeset: Int
    public var seed: UInt64

    public init(kind: WorkloadKind, clients: Int = 10, objects: Int = 10_000,
                instructions: Int = 100_000, localInstructions: Int? = nil,
                instructionsPerChangeset: Int = 100, seed: UInt64 = 1)
    {
        precondition(clients >= 1 && clients <= WorkloadLimits.clientsMax, "clients out of range")
        precondition(objects >= 1 && objects <= WorkloadLimits.objectsMax, "objects out of range")
        precondition(instructions >= 0 && instructions <= WorkloadLimits.instructionsMax,
                     "instructions out of range")
        precondition(instructionsPerChangeset >= 1, "changesets need at least one instruction")
        self.kind = kind
        self.clients = clients
        self.objects = objects
        self.instructions = instructions
        self.localInstructions = localInstructions ?? instructions
        precondition(self.localInstructions >= 0 && self.localInstructions <= WorkloadLimits.instructionsMax,
                     "local instructions out of range")
        self.instructionsPerChangeset = instructionsPerChangeset
        self.seed = seed
    }
}

/// Bounds of the workload generators and the trace reader.
public enum WorkloadLimits {
    public static let clientsMax = 10_000
    public static let objectsMax = 10_000_000
    public static let instructionsMax = 100_000_000
    /// Lines of one trace file.
    public static let traceLinesMax = 100_000_000
}

/// Fixed schema of the generated workloads. Table and field identifiers are dense integers.
public enum WorkloadSchema {
    /// Objects of the map and churn workloads: int primary key (field 0), 4 int fields 1...4.
    public static let objectTable: TableID = 1
    public static let objectFields: UInt32 = 4
    /// The 10 lists of the list workload: int primary key, field 1 a list of ints.
    public static let listTable: TableID = 2
    public static let listCount = 10
    public static let listLengthInitial = 100
    /// The one document of the text-like workload: int primary key, field 1 a list of ints.
    public static let documentTable: TableID = 3
    public static let documentLengthInitial = 100
    /// The list field of the list and document tables.
    public static let listField: FieldID = 1

    /// The schema instructions shared by every generated workload.
    static func schemaInstructions() -> ContiguousArray<Instruction> {
        var instructions = ContiguousArray<Instruction>()
        for table in [objectTable, listTable, documentTable] {
            instructions.append(.addTable(table: table, primaryKeyField: 0, primaryKeyType: .int,
                                          primaryKeyNullable: false))
        }
        for field in 1...objectFields {
            instructions.append(.addColumn(table: objectTable, field: field, type: .int,
                                           nullable: true, collection: .single, linkTarget: nil))
        }
        for table in [listTable, documentTable] {
            instructions.append(.addColumn(table: table, field: listField, type: .int,
                                           nullable: false, collection: .list, linkTarget: nil))
        }
        return instructions
    }
}
