/// The page `tellWaiting` and `tellStopped` return, by aria2's rules for `offset` and `num`.
///
/// A non-negative `offset` counts from the front and the page is in queue order:
/// `[offset, offset + num)`. A negative one counts from the back (-1 is the last) and the page
/// runs backwards from there: with A, B, C waiting, `(-1, 2)` is C, B. A `num` of 0 or less, or
/// an offset beyond either end, gives an empty page.
enum Aria2Pagination {
    /// Indexes into a list of `count` elements, in the order the page lists them.
    static func page(count: Int, offset: Int, num: Int) -> [Int] {
        guard num > 0, count > 0 else { return [] }
        if offset >= 0 {
            guard offset < count else { return [] }
            let end = offset + min(num, count - offset)
            return Array(offset..<end)
        }
        // `offset == -1` is the last element; guard the addition against Int.min.
        guard offset >= -count else { return [] }
        let start = count + offset
        let end = max(-1, start - num)
        return Array(stride(from: start, to: end, by: -1))
    }
}
