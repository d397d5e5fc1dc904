//! The pairwise merge rules (REALM-SEMANTICS §2.3). See `Transform.swift` for the list.
//!
//! `mergePair(a, b)` is called with a local slot `a` and an incoming slot `b`, both alive. The
//! rules are symmetric, so the dispatcher orders the pair by kind code and each rule names its
//! two roles. Every rule works on the arena's integers; only schema, set and AddInteger/Update
//! rules read the `Instruction` itself.

/// Kind codes: the reference's wire codes (`InstructionCode`, shared with the codec), plus
/// ArrayUpdate as 14 (on the wire it is an Update with an index).
typealias Kind = InstructionCode

extension InstructionCode {
    static let arrayUpdate: UInt8 = 14

    @inline(__always)
    static func isSchema(_ kind: UInt8) -> Bool {
        kind == addTable || kind == addColumn || kind == eraseColumn
    }

    @inline(__always)
    static func isList(_ kind: UInt8) -> Bool {
        kind == arrayInsert || kind == arrayMove || kind == arrayErase || kind == arrayUpdate
    }

    @inline(__always)
    static func isSet(_ kind: UInt8) -> Bool { kind == setInsert || kind == setErase }
}

extension Transformer {
    /// Merges local slot `major` with incoming slot `minor` (both alive).
    @inline(__always)
    mutating func mergePair(_ major: Int, _ minor: Int) throws(MergeError) {
        precondition(major < arena.localCount, "major slot must be local")
        precondition(minor >= arena.localCount, "minor slot must be incoming")
        let kindMajor = arena.kind[major]
        let kindMinor = arena.kind[minor]
        let nodeMajor = arena.node[major]
        let nodeMinor = arena.node[minor]
        if nodeMajor >= 0 && nodeMinor >= 0 {
            // Object and field instructions interact only on the same object.
            if nodeMajor != nodeMinor { return }
            try mergeObjectPair(major, kindMajor, minor, kindMinor)
        } else {
            try mergeSchemaPair(major, kindMajor, minor, kindMinor)
        }
    }

    // MARK: - Schema

    private mutating func mergeSchemaPair(
        _ a: Int, _ kindA: UInt8, _ b: Int, _ kindB: UInt8
    ) throws(MergeError) {
        let (x, kindX, y, kindY) = kindA <= kindB ? (a, kindA, b, kindB) : (b, kindB, a, kindA)
        switch (kindX, kindY) {
        case (Kind.addTable, Kind.addTable):
            guard case let .addTable(tableX, fieldX, typeX, nullableX) = instruction(x),
                  case let .addTable(tableY, fieldY, typeY, nullableY) = instruction(y),
                  tableX == tableY
            else { return }
            guard fieldX == fieldY, typeX == typeY, nullableX == nullableY else {
                throw .schemaMismatch(table: tableX, field: nil)
            }
            arena.discard(x)
            arena.discard(y)
        case (Kind.addColumn, Kind.addColumn):
            let columnX = instruction(x)
            let columnY = instruction(y)
            guard columnX.table == columnY.table, columnX.field == columnY.field else { return }
            guard columnX == columnY else {
                throw .schemaMismatch(table: columnX.table, field: columnX.field)
            }
            arena.discard(x)
            arena.discard(y)
        case (Kind.addColumn, Kind.eraseColumn):
            if sameColumn(x, y) { arena.discard(x) }
        case (Kind.eraseColumn, Kind.eraseColumn):
            if sameColumn(x, y) {
                arena.discard(x)
                arena.discard(y)
            }
        default:
            // EraseColumn vs a field instruction on that column: the field instruction goes.
            // Everything else (AddTable or AddColumn vs objects) commutes.
            let eraseColumn = kindX == Kind.eraseColumn ? x : (kindY == Kind.eraseColumn ? y : -1)
            if eraseColumn < 0 { return }
            let other = eraseColumn == x ? y : x
            if arena.node[other] < 0 || arena.field[other] == UInt32.max { return }
            if sameColumn(eraseColumn, other) { arena.discard(other) }
        }
    }

    /// Whether two slots name the same (table, field).
    private func sameColumn(_ a: Int, _ b: Int) -> Bool {
        if arena.field[a] != arena.field[b] { return false }
        return instruction(a).table == instruction(b).table
    }

    // MARK: - Objects and fields

    @inline(__always)
    private mutating func mergeObjectPair(
        _ a: Int, _ kindA: UInt8, _ b: Int, _ kindB: UInt8
    ) throws(MergeError) {
        let (x, kindX, y, kindY) = kindA <= kindB ? (a, kindA, b, kindB) : (b, kindB, a, kindA)
        if kindX == Kind.createObject {
            // Create vs Create commutes (get-or-create); Create vs a field edit commutes.
            if kindY == Kind.eraseObject { arena.discard(x) }
            return
        }
        if kindX == Kind.eraseObject {
            if kindY == Kind.eraseObject {
                arena.discard(wins(x, y) ? y : x)
            } else {
                arena.discard(y)  // Erase always wins against edits of the object.
            }
            return
        }
        // Both are field instructions: they interact only on the same field.
        if arena.field[x] != arena.field[y] { return }
        if kindX == Kind.update {
            if kindY == Kind.update { mergeUpdates(x, y) }
            if kindY == Kind.addInteger { mergeUpdateAddInteger(update: x, add: y) }
            return
        }
        if kindX == Kind.addInteger { return }  // AddInteger vs AddInteger commutes.
        if kindY == Kind.clear || kindX == Kind.clear {
            let clear = kindY == Kind.clear ? y : x
            let other = clear == y ? x : y
            if arena.kind[other] == Kind.clear {
                arena.discard(wins(x, y) ? y : x)
            } else {
                arena.discard(other)
            }
            return
        }
        if Kind.isSet(kindX) {
            if Kind.isSet(kindY) { mergeSetPair(x, y) }
            return
        }
        // Both list instructions (ArrayInsert 8, Move 9, Erase 10, ArrayUpdate 14); any other
        // combination names one column with two collection kinds and cannot apply anyway.
        guard Kind.isList(kindX) && Kind.isList(kindY) else { return }
        guard arena.priorSize[x] == arena.priorSize[y] else {
            let localSize = x < arena.localCount ? arena.priorSize[x] : arena.priorSize[y]
            let incomingSize = x < arena.localCount ? arena.priorSize[y] : arena.priorSize[x]
            throw .priorSizeMismatch(priorSizeIncoming: incomingSize, priorSizeLocal: localSize)
        }
        mergeListPair(x, kindX, y, kindY)
    }

    private mutating func mergeUpdates(_ x: Int, _ y: Int) {
        let defaultX = arena.flags[x] & TransformArena.isDefault != 0
        let defaultY = arena.flags[y] & TransformArena.isDefault != 0
        if defaultX == defaultY {
            arena.discard(wins(x, y) ? y : x)
        } else {
            arena.discard(defaultX ? x : y)
        }
    }

    private mutating func mergeUpdateAddInteger(update: Int, add: Int) {
        let updateIsDefault = arena.flags[update] & TransformArena.isDefault != 0
        if wins(update, add) && !updateIsDefault {
            arena.discard(add)  // A later non-default write overwrites the increment.
            return
        }
        guard case let .update(object, field, value, isDefault) = instruction(update),
              case let .addInteger(_, _, increment) = instruction(add)
        else { preconditionFailure("arena kinds disagree with instructions") }
        switch value {
        case .null:
            break  // Both kept; the add is a no-op on null.
        case .int(let base):
            replaceInstruction(update, .update(object: object, field: field,
                                               value: .int(base &+ increment),
                                               isDefault: isDefault))
        default:
            arena.discard(add)
        }
    }

    private mutating func mergeSetPair(_ x: Int, _ y: Int) {
        let valueX: Value
        let valueY: Value
        switch instruction(x) {
        case .setInsert(_, _, let value), .setErase(_, _, let value): valueX = value
        default: preconditionFailure("arena kinds disagree with instructions")
        }
        switch instruction(y) {
        case .setInsert(_, _, let value), .setErase(_, _, let value): valueY = value
        default: preconditionFailure("arena kinds disagree with instructions")
        }
        if valueX == valueY { arena.discard(wins(x, y) ? y : x) }
    }

    // MARK: - Lists

    @inline(__always)
    private mutating func mergeListPair(_ x: Int, _ kindX: UInt8, _ y: Int, _ kindY: UInt8) {
        switch (kindX, kindY) {
        case (Kind.arrayInsert, Kind.arrayInsert): insertVersusInsert(x, y)
        case (Kind.arrayInsert, Kind.arrayMove): insertVersusMove(insert: x, move: y)
        case (Kind.arrayInsert, Kind.arrayErase): insertVersusErase(insert: x, erase: y)
        case (Kind.arrayInsert, Kind.arrayUpdate): insertVersusUpdate(insert: x, update: y)
        case (Kind.arrayMove, Kind.arrayMove): moveVersusMove(x, y)
        case (Kind.arrayMove, Kind.arrayErase): moveVersusErase(move: x, erase: y)
        case (Kind.arrayMove, Kind.arrayUpdate): moveVersusUpdate(move: x, update: y)
        case (Kind.arrayErase, Kind.arrayErase): eraseVersusErase(x, y)
        case (Kind.arrayErase, Kind.arrayUpdate): eraseVersusUpdate(erase: x, update: y)
        case (Kind.arrayUpdate, Kind.arrayUpdate):
            if arena.index[x] == arena.index[y] { arena.discard(wins(x, y) ? y : x) }
        default:
            break  // Unreachable for list kinds ordered by code.
        }
    }

    @inline(__always)
    private mutating func setIndex(_ slot: Int, _ value: UInt32) {
        arena.index[slot] = value
        arena.markDirty(slot)
    }

    @inline(__always)
    private mutating func setPriorSize(_ slot: Int, _ value: UInt32) {
        arena.priorSize[slot] = value
        arena.markDirty(slot)
    }

    private mutating func insertVersusInsert(_ x: Int, _ y: Int) {
        let indexX = arena.index[x]
        let indexY = arena.index[y]
        // At equal indices the lower discriminant ends up first.
        if indexX < indexY || (indexX == indexY && wins(y, x)) {
            setIndex(y, indexY + 1)
        } else {
            setIndex(x, indexX + 1)
        }
        setPriorSize(x, arena.priorSize[x] + 1)
        setPriorSize(y, arena.priorSize[y] + 1)
    }

    private mutating func insertVersusErase(insert: Int, erase: Int) {
        let insertIndex = arena.index[insert]
        let eraseIndex = arena.index[erase]
        if insertIndex <= eraseIndex {
            setIndex(erase, eraseIndex + 1)
        } else {
            setIndex(insert, insertIndex - 1)
        }
        setPriorSize(insert, arena.priorSize[insert] - 1)
        setPriorSize(erase, arena.priorSize[erase] + 1)
    }

    private mutating func insertVersusUpdate(insert: Int, update: Int) {
        if arena.index[update] >= arena.index[insert] {
            setIndex(update, arena.index[update] + 1)
        }
        setPriorSize(update, arena.priorSize[update] + 1)
    }

    private mutating func eraseVersusErase(_ x: Int, _ y: Int) {
        let indexX = arena.index[x]
        let indexY = arena.index[y]
        if indexX == indexY {
            arena.discard(x)  // Removing one element twice: both sides already did it.
            arena.discard(y)
            return
        }
        if indexX < indexY { setIndex(y, indexY - 1) } else { setIndex(x, indexX - 1) }
        setPriorSize(x, arena.priorSize[x] - 1)
        setPriorSize(y, arena.priorSize[y] - 1)
    }

    private mutating func eraseVersusUpdate(erase: Int, update: Int) {
        let eraseIndex = arena.index[erase]
        let updateIndex = arena.index[update]
        if updateIndex == eraseIndex {
            arena.discard(update)
            return
        }
        if updateIndex > eraseIndex { setIndex(update, updateIndex - 1) }
        setPriorSize(update, arena.priorSize[update] - 1)
    }

    private mutating func moveVersusUpdate(move: Int, update: Int) {
        let from = arena.index[move]
        let to = arena.moveTarget(move)
        setIndex(update, movedPosition(arena.index[update], from: from, to: to))
    }

    private mutating func insertVersusMove(insert: Int, move: Int) {
        let insertIndex = arena.index[insert]
        let from = arena.index[move]
        let to = arena.moveTarget(move)
        // The insert's position among the elements other than the moved one.
        let gap = insertIndex <= from ? insertIndex : insertIndex - 1
        let insertFinal: UInt32
        if gap < to {
            insertFinal = gap
        } else if gap > to {
            insertFinal = gap + 1
        } else {
            // Same spot as the moved element: the lower discriminant ends up first.
            insertFinal = wins(move, insert) ? to : to + 1
        }
        let fromFinal = from >= insertIndex ? from + 1 : from
        let toFinal = insertFinal <= to ? to + 1 : to
        setIndex(insert, insertFinal)
        setMove(move, from: fromFinal, to: toFinal)
        setPriorSize(move, arena.priorSize[move] + 1)
    }

    private mutating func moveVersusErase(move: Int, erase: Int) {
        let eraseIndex = arena.index[erase]
        let from = arena.index[move]
        let to = arena.moveTarget(move)
        if eraseIndex == from {
            // The erase follows the element to where the move put it; the move goes.
            arena.discard(move)
            setIndex(erase, to)
            return
        }
        let eraseFinal = movedPosition(eraseIndex, from: from, to: to)
        setIndex(erase, eraseFinal)
        setMove(move, from: from > eraseIndex ? from - 1 : from,
                to: eraseFinal < to ? to - 1 : to)
        setPriorSize(move, arena.priorSize[move] - 1)
    }

    private mutating func moveVersusMove(_ x: Int, _ y: Int) {
        let fromX = arena.index[x]
        let toX = arena.moveTarget(x)
        let fromY = arena.index[y]
        let toY = arena.moveTarget(y)
        if fromX == fromY {
            // Same element: the higher wins and starts from where the lower put it.
            let (winner, loser) = wins(x, y) ? (x, y) : (y, x)
            setMove(winner, from: arena.moveTarget(loser), to: arena.moveTarget(winner))
            arena.discard(loser)
            return
        }
        // Each moved element's destination as a gap among the elements neither move touches.
        let otherX = fromY < fromX ? fromY : fromY - 1  // y's element in the list without x's
        let otherY = fromX < fromY ? fromX : fromX - 1
        let gapX = toX - (otherX < toX ? 1 : 0)
        let gapY = toY - (otherY < toY ? 1 : 0)
        let finalX: UInt32
        let finalY: UInt32
        if gapX < gapY || (gapX == gapY && wins(y, x)) {
            finalX = gapX
            finalY = gapY + 1
        } else {
            finalX = gapX + 1
            finalY = gapY
        }
        // Where each element stands after the other move.
        let currentX = movedPosition(fromX, from: fromY, to: toY)
        let currentY = movedPosition(fromY, from: fromX, to: toX)
        setMove(x, from: currentX, to: finalX)
        setMove(y, from: currentY, to: finalY)
    }

    /// Sets a move's source and destination; a move that became from == to is discarded.
    @inline(__always)
    private mutating func setMove(_ slot: Int, from: UInt32, to: UInt32) {
        arena.index[slot] = from
        arena.setMoveTarget(slot, to)
        arena.markDirty(slot)
        if from == to { arena.discard(slot) }
    }
}

/// Where the element at `position` (not the moved one) stands after moving `from` to `to`.
@inline(__always)
func movedPosition(_ position: UInt32, from: UInt32, to: UInt32) -> UInt32 {
    if position == from { return to }
    let withoutMoved = position < from ? position : position - 1
    return withoutMoved < to ? withoutMoved : withoutMoved + 1
}
