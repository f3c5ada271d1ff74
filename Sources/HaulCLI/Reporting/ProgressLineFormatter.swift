import Haul

/// The text of the live progress display: one line per running download and a total line,
/// each cut to the terminal width so that no line wraps (a wrapped line would break the
/// cursor arithmetic of the in-place redraw).
struct ProgressLineFormatter: Sendable {
    /// Usable columns; one less than the terminal so the cursor never wraps at the edge.
    let width: Int
    static let barWidth = 20

    init(columns: Int) {
        self.width = max(20, columns - 1)
    }

    /// `name  [########------------]  42%  1.2 MiB/3.0 MiB  512.0 KiB/s  ETA 4s`
    func downloadLine(name: String, progress: TransferProgress) -> String {
        let tail = "  " + Self.bar(progress.fractionCompleted) + "  " + Self.percent(progress.fractionCompleted)
            + "  " + Self.amount(progress) + "  " + HumanReadable.speed(progress.bytesPerSecond)
            + "  ETA " + HumanReadable.duration(progress.estimatedTimeRemaining)
        let nameWidth = max(8, min(32, width - tail.count))
        return fit(Self.pad(name, to: nameWidth) + tail)
    }

    /// `… and 12 more running`
    func moreLine(_ hidden: Int) -> String {
        fit("… and \(hidden) more running")
    }

    /// `total  3/10 files, 1 failed  12.0 MiB/40.0 MiB  3.1 MiB/s  ETA 9s`
    func totalLine(tally: RunTally) -> String {
        let progress = tally.progress
        var text = "total  \(tally.completed)/\(tally.total) files"
        if tally.failed > 0 { text += ", \(tally.failed) failed" }
        text += "  " + Self.amount(progress) + "  " + HumanReadable.speed(progress.bytesPerSecond)
        text += "  ETA " + HumanReadable.duration(progress.estimatedTimeRemaining)
        return fit(text)
    }

    /// Cuts `text` to the width, marking the cut with `…`.
    func fit(_ text: String) -> String {
        guard text.count > width else { return text }
        return String(text.prefix(width - 1)) + "…"
    }

    static func bar(_ fraction: Double?) -> String {
        guard let fraction else { return "[" + String(repeating: "?", count: barWidth) + "]" }
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
    }

    static func percent(_ fraction: Double?) -> String {
        guard let fraction else { return " --%" }
        let text = "\(Int((fraction * 100).rounded(.down)))%"
        return String(repeating: " ", count: max(0, 4 - text.count)) + text
    }

    static func amount(_ progress: TransferProgress) -> String {
        let done = HumanReadable.bytes(progress.completedBytes)
        guard let expected = progress.expectedBytes else { return done }
        return done + "/" + HumanReadable.bytes(expected)
    }

    static func pad(_ text: String, to width: Int) -> String {
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return text + String(repeating: " ", count: width - text.count)
    }
}
