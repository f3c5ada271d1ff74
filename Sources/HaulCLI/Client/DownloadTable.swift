import Haul

/// `haul ls`'s table: one row per download, columns aligned, the name last and never cut (a
/// pipe into grep or awk must see all of it).
///
///     GID               STATE     PROGRESS  SIZE               SPEED        NAME
///     2089b05ecca3d829  active         42%  1.2 MiB/3.0 MiB    512.0 KiB/s  x.bin
enum DownloadTable {
    static let header = ["GID", "STATE", "PROGRESS", "SIZE", "SPEED", "NAME"]
    /// Columns whose values are right-aligned (numbers read better that way).
    static let rightAligned: Set<Int> = [2]

    static func row(_ entry: Aria2Entry) -> [String] {
        let progress = entry.progress
        return [
            entry.gid,
            entry.status.rawValue,
            ProgressLineFormatter.percent(progress.fractionCompleted).trimmingLeadingSpaces,
            ProgressLineFormatter.amount(progress),
            entry.status == .active ? HumanReadable.speed(progress.bytesPerSecond) : "-",
            entry.name,
        ]
    }

    /// The header and the rows, each column as wide as its widest cell.
    static func lines(_ entries: [Aria2Entry]) -> [String] {
        let rows = [header] + entries.map(row)
        var widths = [Int](repeating: 0, count: header.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column == row.count - 1 { return cell }
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
    }
}

extension String {
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
