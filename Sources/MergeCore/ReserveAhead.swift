//! One growth policy for the buffers a server's merges grow run after run (the arena's
//! columns, `TransformArena.growColumns`; the reciprocal streams, `LocalEdits`).

extension ContiguousArray {
    /// Makes room for `needed` elements in all. An array large enough keeps its memory; one
    /// that must grow takes `factor` times `needed`, giving its old memory back first when it
    /// is empty (the two then never coexist).
    ///
    /// Why not the array's own growth: a server's window grows from one merge to the next,
    /// so these buffers grow all through a run, and each growth copies into fresh pages,
    /// which the kernel faults in and zeroes. Doubling faults in about twice a buffer's final
    /// size, and growing to about the size asked faults it in again every few merges.
    /// Capacity never written costs neither memory nor faults (a page is resident only once
    /// touched), so reserving far ahead only saves copies. See the performance log, "Columns
    /// reserved ahead".
    @inline(__always)
    mutating func reserveAhead(_ needed: Int, factor: Int) {
        if needed > capacity { growAhead(needed, factor: factor) }
    }

    @inline(never)
    private mutating func growAhead(_ needed: Int, factor: Int) {
        if isEmpty { self = ContiguousArray() }
        reserveCapacity(needed * factor)
    }
}
