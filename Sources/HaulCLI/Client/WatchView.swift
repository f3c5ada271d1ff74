import Haul

/// The state of `haul watch` between refreshes, without I/O: which downloads it follows, so
/// that it can tell when one finished (it leaves the active and waiting lists) and print a
/// line that stays, and the text of the live block.
///
/// The block: a progress bar per active download (then paused ones, while there is room; at
/// most `maxDownloadLines`), and a `daemon` line with the counts, the bytes of the active
/// downloads, the daemon's speed and the ETA.
struct WatchView: Sendable {
    static let maxDownloadLines = TerminalProgressReporter.maxDownloadLines

    /// Downloads last seen active or waiting, by GID.
    private(set) var followed: [String: Aria2Entry] = [:]

    /// GIDs to ask the daemon about: followed, but in neither list of `waiting` and `active`.
    func departures(waiting: [Aria2Entry], active: [Aria2Entry]) -> [String] {
        let present = Set(waiting.map(\.gid)).union(active.map(\.gid))
        return followed.keys.filter { !present.contains($0) }.sorted()
    }

    /// Takes in one refresh and returns what to print.
    mutating func update(_ snapshot: WatchSnapshot, columns: Int) -> WatchFrame {
        var permanent: [String] = []
        for entry in snapshot.departed {
            if entry.status.isStopped {
                permanent.append(Self.finishedLine(entry, previous: followed[entry.gid]))
                followed[entry.gid] = nil
            } else {
                // Moved between the two reads (paused, say); still followed.
                followed[entry.gid] = entry
            }
        }
        for gid in snapshot.forgotten {
            if let previous = followed.removeValue(forKey: gid) { permanent.append("removed \(previous.name)") }
        }
        for entry in snapshot.waiting + snapshot.active { followed[entry.gid] = entry }
        return WatchFrame(permanent: permanent, block: Self.block(snapshot, columns: columns), isIdle: snapshot.isIdle)
    }

    /// `done PATH (N bytes)`, `failed NAME: reason`, `removed NAME`.
    static func finishedLine(_ entry: Aria2Entry, previous: Aria2Entry?) -> String {
        let name = entry.path ?? previous?.path ?? entry.name
        switch entry.status {
        case .complete: return "done \(name) (\(entry.completedLength) bytes)"
        case .error: return "failed \(name): \(entry.failureMessage ?? "unknown error")"
        default: return "removed \(name)"
        }
    }

    static func block(_ snapshot: WatchSnapshot, columns: Int) -> [String] {
        let formatter = ProgressLineFormatter(columns: columns)
        let paused = snapshot.waiting.filter { $0.status == .paused }
        var lines = snapshot.active.prefix(maxDownloadLines).map { entry in
            formatter.downloadLine(name: entry.name, progress: entry.progress)
        }
        if snapshot.active.count > maxDownloadLines {
            lines.append(formatter.moreLine(snapshot.active.count - maxDownloadLines))
        } else {
            lines += paused.prefix(maxDownloadLines - lines.count).map { entry in
                formatter.downloadLine(name: "(paused) " + entry.name, progress: entry.progress)
            }
        }
        lines.append(summaryLine(snapshot, paused: paused.count, formatter: formatter))
        return lines
    }

    /// `daemon  2 active, 3 waiting, 1 paused, 5 stopped  12.0 MiB/40.0 MiB  3.1 MiB/s  ETA 9s`
    ///
    /// The bytes and the ETA are those of the active downloads (the length is shown once each
    /// of them knows its own). Queued and paused downloads are counted apart when the page of
    /// the waiting list read held all of them; otherwise the daemon's count of both is shown.
    static func summaryLine(_ snapshot: WatchSnapshot, paused: Int, formatter: ProgressLineFormatter) -> String {
        let stat = snapshot.stat
        var counts = "\(snapshot.active.count) active"
        if snapshot.waitingIsComplete {
            counts += ", \(snapshot.waiting.count - paused) waiting, \(paused) paused"
        } else {
            counts += ", \(max(stat.numWaiting, snapshot.waiting.count)) waiting or paused"
        }
        counts += ", \(stat.numStopped) stopped"
        let lengths = snapshot.active.map(\.expectedBytes)
        let progress = TransferProgress(
            completedBytes: snapshot.active.reduce(0) { $0 + $1.completedLength },
            expectedBytes: lengths.contains(nil) ? nil : lengths.reduce(0) { $0 + ($1 ?? 0) },
            bytesPerSecond: Double(stat.downloadSpeed))
        var text = "daemon  " + counts
        if !snapshot.active.isEmpty {
            text += "  " + ProgressLineFormatter.amount(progress) + "  " + HumanReadable.speed(progress.bytesPerSecond)
                + "  ETA " + HumanReadable.duration(progress.estimatedTimeRemaining)
        }
        return formatter.fit(text)
    }
}
