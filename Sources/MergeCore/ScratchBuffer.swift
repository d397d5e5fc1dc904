/// A buffer of plain values that a merge resets and rewrites on every run, written through a
/// raw pointer.
///
/// Why not an array: an array stored in a struct checks that it is uniquely referenced on
/// every write through `self` (a call into the runtime), and the sequence merge's hot loops
/// write one element at a time: about 4.6 million such checks in a list server merge of 10^5
/// instructions, a twentieth of its instructions. Here the check happens once, in `reset` or
/// `reserve`, which every run calls before it reads or writes the buffer; every write after
/// that is a plain store.
///
/// Value semantics hold: a copy shares the storage only until one of the two resets it, which
/// then gets storage of its own. The contents are scratch (a run resets them before reading),
/// so a fresh storage needs no copy of the old one.
struct ScratchBuffer<Element: BitwiseCopyable>: Sendable {
    private final class Storage: @unchecked Sendable {
        // @unchecked: mutable, but only an owner that made it unique (`reset`) writes it.
        var memory = UnsafeMutableBufferPointer<Element>(start: nil, count: 0)
        deinit { memory.deallocate() }
    }

    private var storage = Storage()
    /// The number of elements `buffer` holds.
    private(set) var count = 0

    init() {}

    /// The first `count` elements. Valid until the next `reset` or `reserve`.
    var buffer: UnsafeMutableBufferPointer<Element> {
        @inline(__always) get {
            UnsafeMutableBufferPointer(start: storage.memory.baseAddress, count: count)
        }
    }

    /// Makes the buffer `count` elements long, each `value`, in storage of its own. Keeps the
    /// memory when it is large enough (like `removeAll(keepingCapacity:)`), else replaces it
    /// with exactly `count` elements' worth.
    mutating func reset(count: Int, repeating value: Element) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage() }
        if storage.memory.count < count {
            storage.memory.deallocate()
            storage.memory = UnsafeMutableBufferPointer.allocate(capacity: count)
        }
        self.count = count
        buffer.initialize(repeating: value)
    }

    /// Makes the buffer `count` elements long (at least its count now), in storage of its
    /// own, keeping its first `kept` elements; the others are `value`. For buffers that fill
    /// up as they go and double when full.
    mutating func grow(to count: Int, keeping kept: Int, repeating value: Element) {
        precondition(kept >= 0 && kept <= self.count, "kept elements beyond the buffer")
        let old = storage
        storage = Storage()
        let length = Swift.max(count, self.count)
        storage.memory = UnsafeMutableBufferPointer.allocate(capacity: length)
        if kept > 0 {
            storage.memory.baseAddress!.initialize(from: old.memory.baseAddress!, count: kept)
        }
        self.count = length
        UnsafeMutableBufferPointer(rebasing: buffer[kept...]).initialize(repeating: value)
    }

    /// Makes the buffer at least `count` elements long, in storage of its own; the contents
    /// are unspecified (`value` where it had to be reset).
    mutating func reserve(_ count: Int, repeating value: Element) {
        if self.count < count || !isKnownUniquelyReferenced(&storage) {
            reset(count: Swift.max(count, self.count), repeating: value)
        }
    }
}
