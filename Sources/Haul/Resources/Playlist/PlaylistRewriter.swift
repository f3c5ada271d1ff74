/// Writes the local copies of playlists: the same text with every URI replaced by the local
/// file's name (relative, so the directory can be moved or opened offline), and nothing left
/// that would send a player to the network.
enum PlaylistRewriter {
    /// A media playlist: URI lines and the `URI` attributes of `EXT-X-KEY` and `EXT-X-MAP` are
    /// replaced as `localNames` says (by line number); any other tag that carries a URI
    /// (low-latency parts, preload hints, rendition reports) is dropped, since its target was
    /// not downloaded. Everything else (durations, byte ranges, discontinuities, IVs) is kept.
    static func media(_ text: String, localNames: [Int: String]) throws(HaulError) -> String {
        var output: [String] = []
        var number = 0
        for rawLine in PlaylistLines(text) {
            number += 1
            let line = rawLine.trimmingBlanks()
            if line.isEmpty { continue }
            if !line.hasPrefix("#") {
                guard let name = localNames[number] else {
                    throw HaulError(.invalidState, "no local name for the URI on playlist line \(number)")
                }
                output.append(name)
                continue
            }
            guard line.hasPrefix("#EXT") else { continue }  // comments are not copied
            if let name = localNames[number] {
                output.append(try replacingURI(in: Substring(line), with: name, line: number))
            } else if !line.contains("URI=") {
                output.append(line)
            }
        }
        return output.joined(separator: "\n") + "\n"
    }

    /// A master playlist that offers only what was downloaded: the chosen variant and the
    /// renditions of its groups, each pointing at its local media playlist.
    static func master(
        _ master: MasterPlaylist, variant: Variant, variantName: String, renditionNames: [Int: String]
    ) -> String {
        var lines = ["#EXTM3U"]
        if let version = master.version { lines.append("#EXT-X-VERSION:\(version)") }
        if master.independentSegments { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        for rendition in master.renditions(of: variant) {
            var attributes = rendition.attributes.pairs
            if let name = renditionNames[rendition.line], let index = attributes.firstIndex(where: { $0.name == "URI" }) {
                attributes[index].value = name
            } else if rendition.uri != nil {
                continue  // not downloaded: not offered
            }
            lines.append("#EXT-X-MEDIA:" + render(attributes))
        }
        for rendition in master.renditions where rendition.type == "CLOSED-CAPTIONS"
            && rendition.groupID == variant.attributes["CLOSED-CAPTIONS"] {
            lines.append("#EXT-X-MEDIA:" + render(rendition.attributes.pairs))
        }
        lines.append("#EXT-X-STREAM-INF:" + render(variant.attributes.pairs))
        lines.append(variantName)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func replacingURI(in line: Substring, with name: String, line number: Int) throws(HaulError) -> String {
        guard let colon = line.firstIndex(of: ":") else { return String(line) }
        var pairs = try PlaylistAttributes(parsing: line[line.index(after: colon)...], line: number).pairs
        guard let index = pairs.firstIndex(where: { $0.name == "URI" }) else { return String(line) }
        pairs[index].value = name
        return line[...colon] + render(pairs)
    }

    private static func render(_ pairs: [(name: String, value: String, quoted: Bool)]) -> String {
        pairs.map { $0.quoted ? "\($0.name)=\"\($0.value)\"" : "\($0.name)=\($0.value)" }.joined(separator: ",")
    }
}
