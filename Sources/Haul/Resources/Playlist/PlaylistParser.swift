import Foundation

/// A parsed HLS playlist: a master playlist naming variants, or a media playlist naming segments.
package enum HLSPlaylist: Sendable, Hashable {
    case master(MasterPlaylist)
    case media(MediaPlaylist)
}

/// Reads the text of an `.m3u8` playlist (RFC 8216) into `HLSPlaylist`, strictly: a malformed
/// tag, a URI without its `EXTINF`, an implicit byte-range offset with nothing before it, or a
/// playlist over the limits is an error naming the line. Tags Haul does not need are skipped
/// here (the rewriter keeps them in the local copy where they are safe).
package enum PlaylistParser {
    package static func parse(_ data: Data, limits: ResourceLimits = ResourceLimits()) throws(HaulError) -> HLSPlaylist {
        guard data.count <= limits.maxDocumentBytes else {
            throw HaulError(.invalidResponse, "the playlist is larger than \(limits.maxDocumentBytes) bytes")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw HaulError(.invalidResponse, "the playlist is not UTF-8 text")
        }
        return try parse(text, limits: limits)
    }

    package static func parse(_ text: String, limits: ResourceLimits = ResourceLimits()) throws(HaulError) -> HLSPlaylist {
        var state = ParseState(limits: limits)
        var number = 0
        for rawLine in PlaylistLines(text) {
            number += 1
            guard rawLine.utf8.count <= limits.maxLineBytes else {
                throw PlaylistAttributes.malformed(number, "the line is longer than \(limits.maxLineBytes) bytes")
            }
            let line = rawLine.trimmingBlanks()
            if number == 1 {
                guard line == "#EXTM3U" else {
                    throw HaulError(.invalidResponse, "not an HLS playlist: the first line is not #EXTM3U")
                }
                continue
            }
            try state.read(Substring(line), number: number)
        }
        guard number > 0 else { throw HaulError(.invalidResponse, "not an HLS playlist: it is empty") }
        return try state.finish()
    }
}

/// The lines of a playlist, without their `\n`, `\r\n` or `\r`, a leading byte-order mark
/// dropped. Found one at a time while the parser reads, so that a playlist over a limit stops
/// costing at the line that broke it.
struct PlaylistLines: Sequence {
    let text: Substring

    init(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        self.text = body
    }

    func makeIterator() -> Iterator { Iterator(text: text, position: text.startIndex) }

    struct Iterator: IteratorProtocol {
        let text: Substring
        var position: Substring.Index
        var finished = false

        mutating func next() -> Substring? {
            guard !finished else { return nil }
            let utf8 = text.utf8
            var index = position
            while index < utf8.endIndex, utf8[index] != 10, utf8[index] != 13 { index = utf8.index(after: index) }
            let line = text[position..<index]
            if index == utf8.endIndex {
                finished = true
            } else {
                let isCarriageReturn = utf8[index] == 13
                index = utf8.index(after: index)
                if isCarriageReturn, index < utf8.endIndex, utf8[index] == 10 { index = utf8.index(after: index) }
                position = index
            }
            return line
        }
    }
}

/// What the parser knows between lines.
private struct ParseState {
    let limits: ResourceLimits
    var media = MediaPlaylist()
    var master = MasterPlaylist()
    var sawMasterTag = false
    var sawMediaTag = false
    var version: Int?
    // Media playlist: what applies to the next URI line, and from then on.
    var pendingDuration: Double?
    var pendingRange: (length: Int64, offset: Int64?)?
    var pendingGap = false
    var pendingDiscontinuity = false
    var key: SegmentKey?
    var map: MediaInitialization?
    // Master playlist: the EXT-X-STREAM-INF waiting for its URI line.
    var pendingVariant: (attributes: PlaylistAttributes, line: Int)?

    init(limits: ResourceLimits) { self.limits = limits }

    mutating func read(_ line: Substring, number: Int) throws(HaulError) {
        if line.isEmpty { return }
        guard line.hasPrefix("#") else { return try readURI(String(line), number: number) }
        guard line.hasPrefix("#EXT") else { return }  // a comment
        let colon = line.firstIndex(of: ":")
        let tag = colon.map { line[..<$0] } ?? line
        let value = colon.map { line[line.index(after: $0)...] } ?? ""
        switch tag {
        case "#EXTM3U":
            throw PlaylistAttributes.malformed(number, "#EXTM3U appears again")
        case "#EXT-X-VERSION":
            guard let parsed = Int(value), parsed > 0, parsed < 100 else { throw PlaylistAttributes.malformed(number, "bad #EXT-X-VERSION") }
            version = parsed
        case "#EXTINF":
            sawMediaTag = true
            let durationText = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard let duration = Double(durationText.trimmingBlanks()), duration.isFinite, duration >= 0, duration < 1e7 else {
                throw PlaylistAttributes.malformed(number, "#EXTINF needs a duration in seconds")
            }
            pendingDuration = duration
        case "#EXT-X-BYTERANGE":
            sawMediaTag = true
            pendingRange = try Self.byteRange(value, line: number)
        case "#EXT-X-TARGETDURATION":
            sawMediaTag = true
            guard let parsed = Int64(value), parsed >= 0 else { throw PlaylistAttributes.malformed(number, "bad #EXT-X-TARGETDURATION") }
            media.targetDuration = parsed
        case "#EXT-X-MEDIA-SEQUENCE":
            sawMediaTag = true
            guard let parsed = Int64(value), parsed >= 0, parsed < 1 << 53 else { throw PlaylistAttributes.malformed(number, "bad #EXT-X-MEDIA-SEQUENCE") }
            media.mediaSequence = parsed
        case "#EXT-X-PLAYLIST-TYPE":
            sawMediaTag = true
            guard value == "VOD" || value == "EVENT" else { throw PlaylistAttributes.malformed(number, "#EXT-X-PLAYLIST-TYPE is VOD or EVENT") }
            media.playlistType = String(value)
        case "#EXT-X-ENDLIST":
            sawMediaTag = true
            media.hasEndList = true
        case "#EXT-X-GAP":
            pendingGap = true
        case "#EXT-X-DISCONTINUITY":
            sawMediaTag = true
            pendingDiscontinuity = true
        case "#EXT-X-KEY":
            sawMediaTag = true
            key = try Self.key(PlaylistAttributes(parsing: value, line: number), line: number)
        case "#EXT-X-MAP":
            sawMediaTag = true
            let attributes = try PlaylistAttributes(parsing: value, line: number)
            guard let uri = try attributes.string("URI", line: number), !uri.isEmpty else {
                throw PlaylistAttributes.malformed(number, "#EXT-X-MAP needs a URI")
            }
            var range: ByteRange?
            if let text = try attributes.string("BYTERANGE", line: number) {
                let parsed = try Self.byteRange(Substring(text), line: number)
                range = ByteRange(length: parsed.length, offset: parsed.offset ?? 0)
            }
            map = MediaInitialization(uri: uri, line: number, byteRange: range)
        case "#EXT-X-STREAM-INF":
            sawMasterTag = true
            guard pendingVariant == nil else { throw PlaylistAttributes.malformed(number, "#EXT-X-STREAM-INF without a URI before it") }
            pendingVariant = (try PlaylistAttributes(parsing: value, line: number), number)
        case "#EXT-X-MEDIA":
            sawMasterTag = true
            master.renditions.append(try Self.rendition(PlaylistAttributes(parsing: value, line: number), line: number))
            guard master.renditions.count <= limits.maxFiles else { throw PlaylistAttributes.malformed(number, "too many renditions") }
        case "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-SESSION-DATA", "#EXT-X-SESSION-KEY", "#EXT-X-CONTENT-STEERING":
            sawMasterTag = true
        case "#EXT-X-INDEPENDENT-SEGMENTS":
            master.independentSegments = true
        case "#EXT-X-DEFINE":
            throw PlaylistAttributes.malformed(number, "variable substitution (#EXT-X-DEFINE) is not supported")
        default:
            break  // other tags (discontinuities, dates, low-latency parts) need nothing from the parser
        }
    }

    mutating func readURI(_ uri: String, number: Int) throws(HaulError) {
        if let variant = pendingVariant {
            pendingVariant = nil
            try addVariant(uri: uri, attributes: variant.attributes, line: number)
            return
        }
        guard let duration = pendingDuration else {
            throw PlaylistAttributes.malformed(number, "a URI without #EXTINF or #EXT-X-STREAM-INF before it")
        }
        sawMediaTag = true
        var segment = MediaSegment(uri: uri, line: number, duration: duration, sequence: media.mediaSequence + Int64(media.segments.count))
        if let range = pendingRange {
            var offset = range.offset
            if offset == nil {
                // Implicit offset: right after the previous segment, which must be a range of the same resource.
                guard let previous = media.segments.last, previous.uri == uri, let previousRange = previous.byteRange else {
                    throw PlaylistAttributes.malformed(number, "#EXT-X-BYTERANGE without an offset, but the segment before is not a range of \(uri.prefix(80))")
                }
                offset = previousRange.end
            }
            segment.byteRange = ByteRange(length: range.length, offset: offset!)
        }
        segment.key = key
        segment.map = map
        segment.isGap = pendingGap
        segment.discontinuity = pendingDiscontinuity
        media.segments.append(segment)
        guard media.segments.count <= limits.maxSegments else {
            throw PlaylistAttributes.malformed(number, "more than \(limits.maxSegments) segments (the limit)")
        }
        pendingDuration = nil
        pendingRange = nil
        pendingGap = false
        pendingDiscontinuity = false
    }

    mutating func addVariant(uri: String, attributes: PlaylistAttributes, line: Int) throws(HaulError) {
        guard let bandwidth = try attributes.integer("BANDWIDTH", line: line) else {
            throw PlaylistAttributes.malformed(line, "#EXT-X-STREAM-INF needs BANDWIDTH")
        }
        master.variants.append(Variant(
            uri: uri, line: line, bandwidth: bandwidth,
            averageBandwidth: try attributes.integer("AVERAGE-BANDWIDTH", line: line),
            resolution: try attributes.resolution("RESOLUTION", line: line),
            codecs: try attributes.string("CODECS", line: line),
            attributes: attributes, index: master.variants.count))
        guard master.variants.count <= limits.maxFiles else { throw PlaylistAttributes.malformed(line, "too many variants") }
    }

    func finish() throws(HaulError) -> HLSPlaylist {
        if sawMasterTag && sawMediaTag {
            throw HaulError(.invalidResponse, "the playlist mixes master tags (#EXT-X-STREAM-INF, #EXT-X-MEDIA) with media tags (#EXTINF)")
        }
        if pendingVariant != nil { throw HaulError(.invalidResponse, "the playlist ends with #EXT-X-STREAM-INF and no URI") }
        if sawMasterTag {
            guard !master.variants.isEmpty else { throw HaulError(.invalidResponse, "the master playlist names no variant") }
            var master = self.master
            master.version = version
            return .master(master)
        }
        var media = self.media
        media.version = version
        return .media(media)
    }

    /// `LENGTH[@OFFSET]`.
    static func byteRange(_ text: Substring, line: Int) throws(HaulError) -> (length: Int64, offset: Int64?) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        func number(_ part: Substring) -> Int64? {
            guard !part.isEmpty, part.count <= 15, part.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
            return Int64(part)
        }
        guard parts.count <= 2, let length = number(parts[0]), length > 0 else {
            throw PlaylistAttributes.malformed(line, "'\(text.prefix(40))' is not a byte range LENGTH[@OFFSET]")
        }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = number(parts[1]) else {
            throw PlaylistAttributes.malformed(line, "'\(text.prefix(40))' is not a byte range LENGTH[@OFFSET]")
        }
        return (length, offset)
    }

    static func key(_ attributes: PlaylistAttributes, line: Int) throws(HaulError) -> SegmentKey? {
        guard let method = attributes["METHOD"] else { throw PlaylistAttributes.malformed(line, "#EXT-X-KEY needs METHOD") }
        switch method {
        case "NONE":
            return nil
        case "AES-128":
            if let format = try attributes.string("KEYFORMAT", line: line), format != "identity" {
                throw PlaylistAttributes.malformed(line, "key format '\(format.prefix(60))' (DRM) is not supported")
            }
            guard let uri = try attributes.string("URI", line: line), !uri.isEmpty else {
                throw PlaylistAttributes.malformed(line, "#EXT-X-KEY METHOD=AES-128 needs a URI")
            }
            let iv = try attributes.hexBytes("IV", line: line)
            if let iv, iv.count != 16 { throw PlaylistAttributes.malformed(line, "an AES-128 IV is 16 bytes, got \(iv.count)") }
            return SegmentKey(uri: uri, line: line, iv: iv)
        default:
            throw PlaylistAttributes.malformed(line, "encryption METHOD=\(method.prefix(40)) is not supported (only AES-128 and NONE)")
        }
    }

    static func rendition(_ attributes: PlaylistAttributes, line: Int) throws(HaulError) -> Rendition {
        guard let type = attributes["TYPE"], ["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"].contains(type) else {
            throw PlaylistAttributes.malformed(line, "#EXT-X-MEDIA needs TYPE=AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS")
        }
        guard let group = try attributes.string("GROUP-ID", line: line), let name = try attributes.string("NAME", line: line) else {
            throw PlaylistAttributes.malformed(line, "#EXT-X-MEDIA needs GROUP-ID and NAME")
        }
        let uri = try attributes.string("URI", line: line)
        if type == "CLOSED-CAPTIONS", uri != nil { throw PlaylistAttributes.malformed(line, "closed captions have no URI") }
        return Rendition(
            type: type, groupID: group, name: name, language: try attributes.string("LANGUAGE", line: line),
            uri: uri, line: line, attributes: attributes)
    }
}
