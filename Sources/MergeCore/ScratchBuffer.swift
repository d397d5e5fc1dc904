/// A buffer of plain values that a merge resets and rewrites on every run, written through a
/// raw pointer.
///
/// Why not an array: an array stored in a struct checks that it is uniquely referenced on
/// every write through `self` (a call into the runtime), and the sequence merge's hot loops
/// write one element at a time: about 4.6 million such checks in a list server merge of 10^5
/// instructions, a twentieth of its instructions. Here the owner checks once per run instead
/// (`makeUnique`), and every write after that is a plain store.
///
/// The owner keeps value semantics: a copy of the owner shares the buffer only until the next
/// `makeUnique`, which gives the copy that runs a buffer of its own. The contents are scratch
/// (every run resets them before reading), so a fresh buffer needs no copy of the old one.
final class ScratchBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked: the storage is mutable, but only an owner that made it unique writes it.
    private var storage = UnsafeMutableBufferPointer<Element>(start: nil, count: 0)
    private(set) var count = 0

    init() {}

    deinit { storage.deallocate() }

    /// The first `count` elements. Valid until the next `reset` (which may reallocate).
    var buffer: UnsafeMutableBufferPointer<Element> {
        @inline(__always) get {
            UnsafeMutableBufferPointer(start: storage.baseAddress, count: count)
        }
    }

    /// Makes the buffer `count` elements long, each `value`. Keeps the memory when it is
    /// large enough (like `removeAll(keepingCapacity:)`), else replaces it with exactly
    /// `count` elements' worth.
    func reset(count: Int, repeating value: Element) {
        if storage.count < count {
            storage.deallocate()
            storage = UnsafeMutableBufferPointer.allocate(capacity: count)
        }
        self.count = count
        buffer.initialize(repeating: value)
    }

    /// Gives `buffer` a storage of its own if another owner shares it (see the type's
    /// documentation); the new one is empty.
    static func makeUnique(_ buffer: inout ScratchBuffer) {
        if !isKnownUniquelyReferenced(&buffer) { buffer = ScratchBuffer() }
    }
}
