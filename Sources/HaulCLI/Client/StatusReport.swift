import Haul

/// `haul status GID`'s text: one `label  value` line per fact about the download, the labels
/// aligned, facts that are not known yet left out.
enum StatusReport {
    static func lines(_ entry: Aria2Entry) -> [String] {
        let progress = entry.progress
        var facts: [(String, String)] = [
            ("gid", entry.gid),
            ("state", entry.status.rawValue),
            ("name", entry.name),
        ]
        if let path = entry.path { facts.append(("path", path)) }
        if !entry.dir.isEmpty { facts.append(("directory", entry.dir)) }
        if let url = entry.url { facts.append(("url", url)) }
        facts.append(("progress", ProgressLineFormatter.percent(progress.fractionCompleted).trimmingLeadingSpaces
            + "  " + ProgressLineFormatter.amount(progress)
            + (progress.expectedBytes == nil && !entry.status.isStopped ? " (length not known yet)" : "")))
        if entry.status == .active {
            facts.append(("speed", HumanReadable.speed(progress.bytesPerSecond)))
            facts.append(("eta", HumanReadable.duration(progress.estimatedTimeRemaining)))
        }
        if let failure = entry.failureMessage {
            facts.append(("error", failure + (entry.errorCode.map { " (aria2 error code \($0))" } ?? "")))
        }
        let width = facts.map(\.0.count).max() ?? 0
        return facts.map { label, value in
            label + String(repeating: " ", count: width - label.count) + "  " + value
        }
    }
}
