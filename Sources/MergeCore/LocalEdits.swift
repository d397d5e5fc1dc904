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
/// downloaded). Applying the edits gives exactly the changesets
/// `merge(incoming:local:…)` would have returned.
///
/// Each kind of edit has its own stream of positions, so an edit costs only what its kind
/// needs: 4 bytes for a discard, 16 for a shifted list instruction (its position and new
/// indices), 4 plus the instruction for a replacement, and 16 for a range of consecutive
/// list instructions that all moved by the same amounts (`ListShift`: a typed run of the
/// history that passed an upload clear of its edits, which is most of a server's reciprocal
/// history of a text document); plus 20 bytes per changeset with edits.
/// `Transformer.recordLocalEdits` counts first, so a stream is sized once per merge, with at
/// most an eighth of slack when it had to grow (`reserve(_:_:)`).
public struct LocalEdits: Sendable, Hashable {
    /// The changesets with edits, ascending.
    var changesetIndices: ContiguousArray<UInt32> = []
    /// Per entry of `changesetIndices`: where that changeset's edits end in `discards`,
    /// `reindexPositions` and `replacementPositions` (they start where the previous entry's
    /// end).
    var discardEnds: ContiguousArray<UInt32> = []
    var reindexEnds: ContiguousArray<UInt32> = []
    var replacementEnds: ContiguousArray<UInt32> = []
    var shiftEnds: ContiguousArray<UInt32> = []
    /// Positions of discarded instructions, ascending within a changeset.
    var discards: ContiguousArray<UInt32> = []
    /// Positions of re-indexed list instructions, ascending within a changeset, and their
    /// new indices (12 bytes where a whole instruction is 72).
    var reindexPositions: ContiguousArray<UInt32> = []
    var reindexed: ContiguousArray<ListIndices> = []
    /// Positions of instructions replaced whole (folded increments), and their replacements.
    var replacementPositions: ContiguousArray<UInt32> = []
    var replacements: ContiguousArray<Instruction> = []
    /// Ranges of shifted list instructions, ascending and apart from every other edit's
    /// position within a changeset.
    var shifts: ContiguousArray<ListShift> = []

    public init() {}

    /// Edited instructions.
    public var count: Int {
        discards.count + reindexPositions.count + replacementPositions.count
            + shifts.reduce(0) { $0 + Int($1.count) }
    }
    public var isEmpty: Bool {
        discards.isEmpty && reindexPositions.isEmpty && replacementPositions.isEmpty
            && shifts.isEmpty
    }

    mutating func removeAll() {
        changesetIndices.removeAll(keepingCapacity: true)
        discardEnds.removeAll(keepingCapacity: true)
        reindexEnds.removeAll(keepingCapacity: true)
        replacementEnds.removeAll(keepingCapacity: true)
        shiftEnds.removeAll(keepingCapacity: true)
        discards.removeAll(keepingCapacity: true)
        reindexPositions.removeAll(keepingCapacity: true)
        reindexed.removeAll(keepingCapacity: true)
        replacementPositions.removeAll(keepingCapacity: true)
        replacements.removeAll(keepingCapacity: true)
        shifts.removeAll(keepingCapacity: true)
    }

    /// Makes room for this many edits of each kind, in this many changesets (see
    /// `reserve(_:_:)`).
    mutating func reserveCapacity(changesets: Int, discards discardCount: Int, reindexes: Int,
                                  replacements replacementCount: Int, shifts shiftCount: Int) {
        Self.reserve(&changesetIndices, changesets)
        Self.reserve(&discardEnds, changesets)
        Self.reserve(&reindexEnds, changesets)
        Self.reserve(&replacementEnds, changesets)
        Self.reserve(&shiftEnds, changesets)
        Self.reserve(&shifts, shiftCount)
        Self.reserve(&discards, discardCount)
        Self.reserve(&reindexPositions, reindexes)
        Self.reserve(&reindexed, reindexes)
        Self.reserve(&replacementPositions, replacementCount)
        Self.reserve(&replacements, replacementCount)
    }

    /// How many times what it needs a stream takes when it must grow
    /// (`ContiguousArray.reserveAhead`). A server's window grows a little from one merge of a
    /// client to the next: growing to the exact size took fresh pages on every merge (at
    /// K = 100, text-like, the page faults and zeroing of the re-indexed stream were 11 % of
    /// the server's merge), and an eighth more than asked (until 2026-11-24) every few
    /// merges. With this and the arena's columns reserved ahead, a list server at K = 10 and
    /// 10^6 took 17 % fewer page faults, counted over the whole process.
    static let growthFactor = 4

    /// Makes room in `stream` for `count` more elements (`reserveAhead`).
    private static func reserve<Element>(_ stream: inout ContiguousArray<Element>, _ count: Int) {
        stream.reserveAhead(stream.count + count, factor: growthFactor)
    }

    /// Closes changeset `changeset`'s edits: those before `discardEnd` in `discards` and
    /// before `reindexEnd` in `reindexPositions` (which the caller may have sized beforehand
    /// and be filling in place), and the replacements and shifts appended so far. A changeset
    /// without edits is not recorded.
    mutating func endChangeset(_ changeset: Int, discardEnd discardCount: Int,
                               reindexEnd reindexCount: Int) {
        let discardEnd = UInt32(discardCount)
        let reindexEnd = UInt32(reindexCount)
        let replacementEnd = UInt32(replacementPositions.count)
        let shiftEnd = UInt32(shifts.count)
        if discardEnd == (discardEnds.last ?? 0) && reindexEnd == (reindexEnds.last ?? 0)
            && replacementEnd == (replacementEnds.last ?? 0) && shiftEnd == (shiftEnds.last ?? 0)
        {
            return
        }
        precondition(changesetIndices.last.map { Int($0) < changeset } ?? true,
                     "local edits out of order")
        changesetIndices.append(UInt32(changeset))
        discardEnds.append(discardEnd)
        reindexEnds.append(reindexEnd)
        replacementEnds.append(replacementEnd)
        shiftEnds.append(shiftEnd)
    }

    @inline(never)
    mutating func appendReplacement(position: Int, _ instruction: Instruction) {
        replacementPositions.append(UInt32(position))
        replacements.append(instruction)
    }

    /// Rewrites `changesets` (the local side as passed to the merge) into the merge's output:
    /// discarded instructions removed, rewritten ones replaced. Changesets before `first` are
    /// left as they are (a caller about to drop them); edits of changesets beyond the array,
    /// or beyond a changeset's instructions, are a precondition failure.
    /// - Complexity: O(edits + instructions of the edited changesets at or after `first`).
    public func apply(to changesets: inout ContiguousArray<Changeset>, from first: Int = 0) {
        var discard = 0
        var reindex = 0
        var replacement = 0
        var shift = 0
        for entry in changesetIndices.indices {
            let changesetIndex = Int(changesetIndices[entry])
            let discardEnd = Int(discardEnds[entry])
            let reindexEnd = Int(reindexEnds[entry])
            let replacementEnd = Int(replacementEnds[entry])
            let shiftEnd = Int(shiftEnds[entry])
            defer {
                (discard, reindex, replacement, shift) = (discardEnd, reindexEnd, replacementEnd,
                                                          shiftEnd)
            }
            if changesetIndex < first { continue }
            precondition(changesetIndex < changesets.count, "local edits beyond the changesets")
            let original = changesets[changesetIndex].instructions
            var rewritten = ContiguousArray<Instruction>()
            rewritten.reserveCapacity(original.count)
            var position = 0
            while true {
                // The next edit of the four streams (positions are distinct).
                let nextDiscard = discard < discardEnd ? Int(discards[discard]) : Int.max
                let nextReindex = reindex < reindexEnd ? Int(reindexPositions[reindex]) : Int.max
                let nextReplacement = replacement < replacementEnd
                    ? Int(replacementPositions[replacement]) : Int.max
                let nextShift = shift < shiftEnd ? Int(shifts[shift].first) : Int.max
                let next = min(nextDiscard, nextReindex, nextReplacement, nextShift)
                if next == Int.max { break }
                precondition(next >= position && next < original.count,
                             "local edit out of order or beyond its changeset")
                rewritten.append(contentsOf: original[position..<next])
                if next == nextShift {
                    let range = shifts[shift]
                    let end = next + Int(range.count)
                    precondition(end <= original.count, "shifted range beyond its changeset")
                    for shifted in next..<end {
                        rewritten.append(original[shifted].shiftingListIndices(
                            by: range.indexDelta, sizeBy: range.sizeDelta))
                    }
                    shift += 1
                    position = end
                    continue
                }
                if next == nextDiscard {
                    discard += 1
                } else if next == nextReindex {
                    rewritten.append(original[next].withListIndices(reindexed[reindex]))
                    reindex += 1
                } else {
                    rewritten.append(replacements[replacement])
                    replacement += 1
                }
                position = next + 1
            }
            rewritten.append(contentsOf: original[position...])
            changesets[changesetIndex].instructions = rewritten
        }
    }
}

/// Consecutive list instructions of one changeset, `first ..< first + count`, whose index and
/// prior size all moved by `indexDelta` and `sizeDelta` (wrapping, as the merge's shifts do).
struct ListShift: Sendable, Hashable {
    var first: UInt32
    var count: UInt32
    var indexDelta: UInt32
    var sizeDelta: UInt32
}

/// A list instruction's indices: `index` (ArrayMove: from), `index2` (ArrayMove: to, else
/// unused) and `priorSize`.
struct ListIndices: Sendable, Hashable {
    var index: UInt32
    var index2: UInt32
    var priorSize: UInt32
}

extension Instruction {
    /// This ArrayInsert or ArrayErase with its index and prior size moved by `delta` and
    /// `sizeDelta` (wrapping). Precondition: an ArrayInsert or ArrayErase.
    func shiftingListIndices(by delta: UInt32, sizeBy sizeDelta: UInt32) -> Instruction {
        switch self {
        case let .arrayInsert(object, field, index, value, priorSize):
            .arrayInsert(object: object, field: field, index: index &+ delta, value: value,
                         priorSize: priorSize &+ sizeDelta)
        case let .arrayErase(object, field, index, priorSize):
            .arrayErase(object: object, field: field, index: index &+ delta,
                        priorSize: priorSize &+ sizeDelta)
        default:
            preconditionFailure("only ArrayInsert and ArrayErase are shifted in ranges")
        }
    }

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
