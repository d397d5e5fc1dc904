//! Read-only views of an instruction used by the replica and the transform.

extension Instruction {
    /// A small dense code per instruction type: the reference's wire code (`InstructionCode`), and
    /// 14 for ArrayUpdate.
    @inline(__always)
    public var kindCode: UInt8 {
        switch self {
        case .addTable: InstructionCode.addTable
        case .createObject: InstructionCode.createObject
        case .eraseObject: InstructionCode.eraseObject
        case .update: InstructionCode.update
        case .addInteger: InstructionCode.addInteger
        case .addColumn: InstructionCode.addColumn
        case .eraseColumn: InstructionCode.eraseColumn
        case .arrayInsert: InstructionCode.arrayInsert
        case .arrayMove: InstructionCode.arrayMove
        case .arrayErase: InstructionCode.arrayErase
        case .clear: InstructionCode.clear
        case .setInsert: InstructionCode.setInsert
        case .setErase: InstructionCode.setErase
        case .arrayUpdate: InstructionCode.arrayUpdate
        }
    }

    /// The object the instruction acts on, or nil for schema instructions.
    @inline(__always)
    public var object: ObjectRef? {
        switch self {
        case .addTable, .addColumn, .eraseColumn: nil
        case .createObject(let object), .eraseObject(let object): object
        case .update(let object, _, _, _), .arrayUpdate(let object, _, _, _, _),
            .addInteger(let object, _, _), .arrayInsert(let object, _, _, _, _),
            .arrayMove(let object, _, _, _, _), .arrayErase(let object, _, _, _),
            .clear(let object, _), .setInsert(let object, _, _), .setErase(let object, _, _):
            object
        }
    }

    /// The table the instruction acts on.
    @inline(__always)
    public var table: TableID {
        switch self {
        case .addTable(let table, _, _, _): table
        case .addColumn(let table, _, _, _, _, _): table
        case .eraseColumn(let table, _): table
        default: object!.table
        }
    }

    /// The field a path or column instruction acts on (nil for tables and whole objects).
    @inline(__always)
    public var field: FieldID? {
        switch self {
        case .addTable, .createObject, .eraseObject: nil
        case .addColumn(_, let field, _, _, _, _), .eraseColumn(_, let field): field
        case .update(_, let field, _, _), .arrayUpdate(_, let field, _, _, _),
            .addInteger(_, let field, _), .arrayInsert(_, let field, _, _, _),
            .arrayMove(_, let field, _, _, _), .arrayErase(_, let field, _, _),
            .clear(_, let field), .setInsert(_, let field, _), .setErase(_, let field, _):
            field
        }
    }

    /// True for `AddTable`, `AddColumn` and `EraseColumn`.
    @inline(__always)
    public var isSchema: Bool {
        switch self {
        case .addTable, .addColumn, .eraseColumn: true
        default: false
        }
    }

    /// The link target carried by the payload, if any (what joins conflict groups, §2.4).
    @inline(__always)
    public var linkTarget: ObjectRef? {
        switch self {
        case .update(_, _, .link(let target), _), .arrayInsert(_, _, _, .link(let target), _),
            .arrayUpdate(_, _, _, .link(let target), _), .setInsert(_, _, .link(let target)):
            target
        default: nil
        }
    }
}
