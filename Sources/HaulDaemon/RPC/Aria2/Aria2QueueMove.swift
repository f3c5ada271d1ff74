/// Where `changePosition(gid, pos, how)` puts a download in a queue of `count`, by aria2's
/// rules: `POS_SET` counts from the front, `POS_CUR` from where it is, `POS_END` from the last
/// place; a destination before the front or past the end is the front or the end.
enum Aria2QueueMove {
    static func target(current: Int, count: Int, pos: Int, how: String) throws(JSONRPCError) -> Int {
        let base: Int
        switch how {
        case "POS_SET": base = 0
        case "POS_CUR": base = current
        case "POS_END": base = count - 1
        default: throw JSONRPCError.failed("Illegal argument: how must be POS_SET, POS_CUR or POS_END, got '\(how)'")
        }
        let (sum, overflow) = base.addingReportingOverflow(pos)
        let destination = overflow ? (pos < 0 ? 0 : count - 1) : sum
        return min(max(0, destination), max(0, count - 1))
    }
}
