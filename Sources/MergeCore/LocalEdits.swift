//! The local side of a merge as sparse edits, for peers that keep a long history shared with
//! others (a server's per-client reciprocal history).

/// How a merge changed the local side: which instructions it discarded and which it rewrote,
/// by (changeset index, position) in the local changesets as they were passed to
/// `Transformer.merge(incoming:local:localEdits:localFileIdent:)`.
///
/// A server merging an upload against its history must keep the history's reciprocal form
/// for the uploading client. Rewriting every history changeset that lost an instruction
/// copies the whole changeset (every map upload touches nearly every history changeset); the
/// edits cost one entry per changed instruction instead, and `apply(to:from:)` turns them into
/// changesets only when the reciprocal form is read (the client uploads again before it has
/// downloaded). Applying the edits gives exactly the changesets `merge(incoming:local:…)`
/// would have returned.
public struct LocalEdits: Sendable, Hashable {
    /// `changeset << 32 | position`, ascending.
    public private(set) var keys: ContiguousArray<UInt64> = []
    /// Per key: the index of its instruction in `replacements`, or -1 when it is discarded.
    public private(set) var replacementIndex: ContiguousArray<Int32> = []
    /// The rewritten instructions (shifted list indices, folded increments).
    public private(set) var replacements: ContiguousArray<Instruction> = []

    public init() {}

    /// Edited instructions.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    mutating func removeAll() {
        keys.removeAll(keepingCapacity: true)
        replacementIndex.removeAll(keepingCapacity: true)
        replacements.removeAll(keepingCapacity: true)
    }

    mutating func reserveCapacity(edits: Int, replacements replacementCount: Int) {
        keys.reserveCapacity(edits)
        replacementIndex.reserveCapacity(edits)
        replacements.reserveCapacity(replacementCount)
    }

    /// Records an edit; keys must be appended in ascending order (precondition).
    mutating func append(changeset: Int, position: Int, replacement: Instruction?) {
        let key = UInt64(changeset) << 32 | UInt64(position)
        precondition(keys.last.map { $0 < key } ?? true, "local edits out of order")
        keys.append(key)
        if let replacement {
            replacementIndex.append(Int32(replacements.count))
            replacements.append(replacement)
        } else {
            replacementIndex.append(-1)
        }
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
                let replacement = Int(replacementIndex[edit])
                if replacement >= 0 { rewritten.append(replacements[replacement]) }
                position = editPosition + 1
                edit += 1
            }
            rewritten.append(contentsOf: original[position...])
            changesets[changesetIndex].instructions = rewritten
        }
    }
}
