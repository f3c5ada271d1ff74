import Foundation

/// Byte counts, speeds and durations as people read them in a progress line.
///
/// Binary units (KiB, MiB) like curl and aria2, with one decimal below 100 so that the
/// numbers do not jump in width on every redraw.
enum HumanReadable {
    private static let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]

    /// `512 B`, `1.5 KiB`, `120 MiB`.
    static func bytes(_ count: Int64) -> String {
        var value = Double(max(0, count))
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(Int64(value)) B" }
        return value < 100
            ? String(format: "%.1f %@", value, units[unit])
            : String(format: "%.0f %@", value, units[unit])
    }

    /// `1.5 MiB/s`.
    static func speed(_ bytesPerSecond: Double) -> String {
        bytes(Int64(bytesPerSecond.rounded())) + "/s"
    }

    /// `45s`, `3m05s`, `2h07m`; `--` when unknown. Rounded up: 0.4 s left is `1s`, not `0s`.
    static func duration(_ duration: Duration?) -> String {
        guard let duration else { return "--" }
        let parts = duration.components
        let seconds = max(0, parts.seconds + (parts.attoseconds > 0 ? 1 : 0))
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return String(format: "%dm%02ds", seconds / 60, seconds % 60) }
        if seconds < 100 * 3600 { return String(format: "%dh%02dm", seconds / 3600, (seconds % 3600) / 60) }
        return ">99h"
    }

    /// Seconds with two decimals, for summaries: `1.25 s`.
    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f s", duration.inSeconds)
    }
}

extension Duration {
    /// The duration as fractional seconds.
    var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
