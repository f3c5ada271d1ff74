import Foundation

/// Recording a live media playlist until it ends (`haul get --hls-record`), as a value: each
/// reload of the playlist is an event that records the segments not seen before (by media
/// sequence number) and answers what to do next, reload after a delay or stop. No I/O here:
/// `LiveRecorder` names and fetches, `DownloadManager.recordResource` waits and reloads.
///
/// The reload interval is RFC 8216 §6.3.4's: the target duration after a reload that brought
/// new segments (and after the first load), half of it after one that did not. Recording stops
/// when `EXT-X-ENDLIST` (or `PLAYLIST-TYPE:VOD`) appears, or at the limit: `maxSegments`
/// segments, or `maxSeconds` of play time when given.
package struct LiveRecording: Sendable, Hashable, Codable {
    /// One recorded segment, in local terms: the names its files have in the directory.
    package struct Segment: Sendable, Hashable, Codable {
        package var sequence: Int64
        package var duration: Double
        /// The local name of the segment's file (for a gap, the name written, not fetched).
        package var file: String
        package var byteRange: ByteRange?
        /// The initialization section in force (fMP4): local name and range.
        package var map: Section?
        /// The AES-128 key in force: local name and the explicit IV, if any.
        package var key: Key?
        package var discontinuity = false
        package var isGap = false

        package init(sequence: Int64, duration: Double, file: String) {
            self.sequence = sequence
            self.duration = duration
            self.file = file
        }
    }

    /// An `EXT-X-MAP` section, named locally.
    package struct Section: Sendable, Hashable, Codable {
        package var file: String
        package var range: ByteRange?
    }

    /// An `EXT-X-KEY`, named locally; `iv` nil means the media sequence number.
    package struct Key: Sendable, Hashable, Codable {
        package var file: String
        package var iv: [UInt8]?
    }

    /// What to do after an event.
    package enum Next: Sendable, Hashable, Codable {
        /// Load the playlist again after this delay.
        case reload(after: Duration)
        /// Recording is over: write the local playlist.
        case stop(StopReason)
    }

    package enum StopReason: Sendable, Hashable, Codable {
        /// The playlist ended (`EXT-X-ENDLIST`).
        case ended
        /// The segment or play-time limit was reached first.
        case limit
    }

    package let maxSegments: Int
    package let maxSeconds: Double?
    package private(set) var version: Int?
    package private(set) var targetDuration: Int64 = 1
    package private(set) var segments: [Segment] = []
    package private(set) var stopped: StopReason?
    /// One past the last sequence number recorded.
    private var nextSequence: Int64?

    package init(maxSegments: Int, maxSeconds: Double? = nil) {
        self.maxSegments = maxSegments
        self.maxSeconds = maxSeconds
    }

    /// Play time recorded so far.
    package var duration: Double { segments.reduce(0) { $0 + $1.duration } }

    /// The segments of a (re)load that were not recorded yet, as many as the limits leave room
    /// for, in order; the caller names them and passes them to `recorded(_:from:)`.
    package func unseen(in playlist: MediaPlaylist) -> [MediaSegment] {
        var room = maxSegments - segments.count
        var seconds = duration
        var result: [MediaSegment] = []
        for segment in playlist.segments where nextSequence.map({ segment.sequence >= $0 }) ?? true {
            guard room > 0, maxSeconds.map({ seconds < $0 }) ?? true else { break }
            result.append(segment)
            room -= 1
            seconds += segment.duration
        }
        return result
    }

    /// A (re)load of the playlist, with its unseen segments named: records them and says what
    /// next.
    package mutating func recorded(_ new: [Segment], from playlist: MediaPlaylist) -> Next {
        if let version = playlist.version { self.version = max(self.version ?? 0, version) }
        if let target = playlist.targetDuration { targetDuration = max(targetDuration, target) }
        segments += new
        if let last = new.last { nextSequence = last.sequence + 1 }
        let allRecorded = playlist.segments.last.map { last in nextSequence.map { last.sequence < $0 } ?? false } ?? true
        if playlist.isComplete, allRecorded {
            stopped = .ended
        } else if segments.count >= maxSegments || maxSeconds.map({ duration >= $0 }) == true {
            stopped = .limit
        }
        if let stopped { return .stop(stopped) }
        let target = Duration.seconds(max(playlist.targetDuration ?? targetDuration, 1))
        return .reload(after: new.isEmpty ? target / 2 : target)
    }

    /// The local media playlist of what was recorded: VOD, ended, every URI a local name. The
    /// media sequence numbers are the original ones; where segments were missed (the server's
    /// window moved past them between reloads) a discontinuity is marked and keys without an
    /// IV get their segment's explicit one, since the local numbering no longer matches.
    package func playlistText() -> String {
        let first = segments.first?.sequence ?? 0
        var lines = ["#EXTM3U"]
        if let version { lines.append("#EXT-X-VERSION:\(version)") }
        let longest = segments.map { Int64($0.duration.rounded()) }.max() ?? 0
        lines.append("#EXT-X-TARGETDURATION:\(max(targetDuration, longest))")
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(first)")
        lines.append("#EXT-X-PLAYLIST-TYPE:VOD")
        var lastKeyLine = "#EXT-X-KEY:METHOD=NONE"
        var lastMap: Section?
        for (index, segment) in segments.enumerated() {
            let local = first + Int64(index)
            if segment.discontinuity || (index > 0 && segment.sequence != segments[index - 1].sequence + 1) {
                lines.append("#EXT-X-DISCONTINUITY")
            }
            var keyLine = "#EXT-X-KEY:METHOD=NONE"
            if let key = segment.key {
                keyLine = "#EXT-X-KEY:METHOD=AES-128,URI=\"\(key.file)\""
                let iv = key.iv ?? (local == segment.sequence ? nil : HLSPlanner.sequenceIV(segment.sequence))
                if let iv { keyLine += ",IV=0x" + iv.map { String(format: "%02x", $0) }.joined() }
            }
            if keyLine != lastKeyLine {
                lines.append(keyLine)
                lastKeyLine = keyLine
            }
            if let map = segment.map, map != lastMap {
                var line = "#EXT-X-MAP:URI=\"\(map.file)\""
                if let range = map.range { line += ",BYTERANGE=\"\(range.length)@\(range.offset)\"" }
                lines.append(line)
                lastMap = map
            }
            lines.append("#EXTINF:\(segment.duration),")
            if let range = segment.byteRange { lines.append("#EXT-X-BYTERANGE:\(range.length)@\(range.offset)") }
            if segment.isGap { lines.append("#EXT-X-GAP") }
            lines.append(segment.file)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The parts of the joined file: each initialization section where it changes, then each
    /// segment (gaps have no bytes), decrypted with its key.
    package func joinParts() -> [JoinPart] {
        var parts: [JoinPart] = []
        var lastMap: Section?
        for segment in segments where !segment.isGap {
            if let map = segment.map, map != lastMap {
                parts.append(JoinPart(file: map.file, range: map.range))
                lastMap = map
            }
            parts.append(JoinPart(
                file: segment.file, range: segment.byteRange, keyFile: segment.key?.file,
                iv: segment.key.map { $0.iv ?? HLSPlanner.sequenceIV(segment.sequence) }))
        }
        return parts
    }
}
