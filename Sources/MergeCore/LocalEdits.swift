//! The local side of a merge as sparse edits, for peers that keep a long history shared with
//! others (a server's per-client reciprocal history).

/// How a merge changed the local side: which instructions it discarded and which it rewrote,
/// by (changeset index, position) in the local changesets as they were passed to
/// `Transformer.merge(incoming:local:localEdits:localFileIdent:)`.
///
/// A server merging an upload against its history must keep the history's reciprocal form
/// for the uploading client. Rewriting every history changeset that lost an instruction
/// copies the whole changeset (every map upload touches nearly every history changeset); the
/// edits cost one entry per changed instruction instead (12 bytes for a discard, 24 for a
/// shifted list instruction, which keeps only its new indices), and `apply(to:from:)` turns
/// them into changesets only when the reciprocal form is read (the client uploads again
/// before it has downloaded). Applying the edits gives exactly the changesets
/// `merge(incoming:local:…)` would have returned.
public struct LocalEdits: Sendable, Hashable {
    /// `changeset << 32 | position`, ascending.
    public private(set) var keys: ContiguousArray<UInt64> = []
    /// Per key: -1 when the instruction is discarded; `2 k` when it is a list instruction whose
    /// indices are now `reindexed[k]`; `2 k + 1` when it is replaced by `replacements[k]`.
    var actions: ContiguousArray<Int32> = []
    /// New indices of re-indexed list instructions: 12 bytes where a whole instruction is 72,
    /// and most edits of a contested list are shifts (a server's reciprocal history of a
    /// text document shifts nearly every instruction).
    var reindexed: ContiguousArray<ListIndices> = []
    /// Instructions replaced whole (folded increments).
    var replacements: ContiguousArray<Instruction> = []

    public init() {}

    /// Edited instructions.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        actions.removeAll(keepingCapacity: true)
        reindexed.removeAll(keepingCapacity: true)
        replacements.removeAll(keepingCapacity: true)
    }

    mutating func reserveCapacity(edits: Int) {
        keys.reserveCapacity(edits)
        actions.reserveCapacity(edits)
    }

    /// Records that instruction `position` of changeset `changeset` is discarded. Keys must be
    /// appended in ascending order (precondition), by this and the two methods below.
    @inline(__always)
    mutating func appendDiscard(changeset: Int, position: Int) {
        appendKey(changeset: changeset, position: position, action: -1)
    }

    /// Records that a list instruction keeps everything but its indices, now `indices`.
    @inline(__always)
    mutating func appendReindex(changeset: Int, position: Int, _ indices: ListIndices) {
        appendKey(changeset: changeset, position: position, action: Int32(2 * reindexed.count))
        reindexed.append(indices)
    }

    /// Records that an instruction is replaced whole (a folded increment). Rare: kept out of
    /// line, so that the loop recording a merge's edits stays small.
    @inline(never)
    mutating func appendReplacement(changeset: Int, position: Int, _ instruction: Instruction) {
        appendKey(changeset: changeset, position: position,
                  action: Int32(2 * replacements.count + 1))
        replacements.append(instruction)
    }

    @inline(__always)
    private mutating func appendKey(changeset: Int, position: Int, action: Int32) {
        let key = UInt64(changeset) << 32 | UInt64(position)
        precondition(keys.last.map { $0 < key } ?? true, "local edits out of order")
        keys.append(key)
        actions.append(action)
    }

    /// Rewrites `changesets` (the local side as passed to the merge) into the merge's output:
    /// discarded instructions removed, rewritten ones replaced. Changesets before `first` are
    /// left as they are (a caller about to drop them); edits of changesets beyond the array are
    /// a precondition failure.
    /// - Complexity: O(edits + instructions of the edited changesets at or after `first`).
    public func apply(to changesets: inout ContiguousArray<Changeset>, from first: Int = 0) {
        var edit = 0
        while edit < keys.count, Int(keys[edit] >> 32) < first { edit += 1 }
        while edit < keys.count {
            let changesetIndex = Int(keys[edit] >> 32)
            precondition(changesetIndex < changesets.count, "local edits beyond the changesets")
            let original = changesets[changesetIndex].instructions
            var rewritten = ContiguousArray<Instruction>()
            rewritten.reserveCapacity(original.count)
            var position = 0
            while edit < keys.count, Int(keys[edit] >> 32) == changesetIndex {
                let editPosition = Int(truncatingIfNeeded: keys[edit] & 0xFFFF_FFFF)
                precondition(editPosition < original.count, "local edit beyond its changeset")
                rewritten.append(contentsOf: original[position..<editPosition])
                let action = Int(actions[edit])
                if action >= 0 {
                    rewritten.append(action & 1 == 0
                        ? original[editPosition].withListIndices(reindexed[action >> 1])
                        : replacements[action >> 1])
                }
                position = editPosition + 1
                edit += 1
            }
            rewritten.append(contentsOf: original[position...])
            changesets[changesetIndex].instructions = rewritten
        }
    }
}

/// A list instruction's indices: `index` (ArrayMove: from), `index2` (ArrayMove: to, else
/// unused) and `priorSize`.
struct ListIndices: Sendable, Hashable {
    var index: UInt32
    var index2: UInt32
    var priorSize: UInt32
}

extension Instruction {
    /// This list instruction with its indices replaced by `indices`; the object, field and
    /// value stay. Precondition: a list instruction (ArrayUpdate, ArrayInsert, ArrayMove,
    /// ArrayErase).
    func withListIndices(_ indices: ListIndices) -> Instruction {
        switch self {
        case let .arrayUpdate(object, field, _, value, _):
            .arrayUpdate(object: object, field: field, index: indices.index, value: value,
                         priorSize: indices.priorSize)
        case let .arrayInsert(object, field, _, value, _):
            .arrayInsert(object: object, field: field, index: indices.index, value: value,
                         priorSize: indices.priorSize)
        case let .arrayMove(object, field, _, _, _):
            .arrayMove(object: object, field: field, from: indices.index, to: indices.index2,
                       priorSize: indices.priorSize)
        case let .arrayErase(object, field, _, _):
            .arrayErase(object: object, field: field, index: indices.index,
                        priorSize: indices.priorSize)
        default:
            preconditionFailure("only list instructions have list indices")
        }
    }
}
