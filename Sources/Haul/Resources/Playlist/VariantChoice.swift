/// Which variant of a master playlist to download (`--hls-variant`).
package enum VariantChoice: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The highest `BANDWIDTH` (the default); among equals, the largest resolution.
    case highest
    /// The lowest `BANDWIDTH`.
    case lowest
    /// The N-th `EXT-X-STREAM-INF`, from 0.
    case index(Int)
    /// The highest bandwidth that is at most this many bits per second (the lowest when none is).
    case bandwidth(Int64)
    /// The variant of exactly this resolution (the highest bandwidth among several).
    case resolution(Resolution)

    /// Parses `highest`, `lowest`, `index=N`, `bandwidth=N` or `resolution=WxH`.
    package init(parsing text: String) throws(HaulError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        switch (parts.first?.lowercased(), parts.count) {
        case ("highest", 1): self = .highest
        case ("lowest", 1): self = .lowest
        case ("index", 2):
            guard let index = Int(parts[1]), index >= 0 else { throw Self.bad(text) }
            self = .index(index)
        case ("bandwidth", 2):
            guard let bandwidth = Int64(parts[1]), bandwidth >= 0 else { throw Self.bad(text) }
            self = .bandwidth(bandwidth)
        case ("resolution", 2):
            let sides = parts[1].lowercased().split(separator: "x").compactMap { Int($0) }
            guard sides.count == 2, sides[0] > 0, sides[1] > 0 else { throw Self.bad(text) }
            self = .resolution(Resolution(width: sides[0], height: sides[1]))
        default:
            throw Self.bad(text)
        }
    }

    package var description: String {
        switch self {
        case .highest: return "highest"
        case .lowest: return "lowest"
        case .index(let index): return "index=\(index)"
        case .bandwidth(let bandwidth): return "bandwidth=\(bandwidth)"
        case .resolution(let resolution): return "resolution=\(resolution)"
        }
    }

    /// The chosen variant, or an error that lists what the playlist offers.
    package func select(from variants: [Variant]) throws(HaulError) -> Variant {
        guard !variants.isEmpty else { throw HaulError(.invalidResponse, "the master playlist names no variant") }
        let byBandwidth = variants.sorted {
            ($0.bandwidth, $0.resolution.map { $0.width * $0.height } ?? 0, -$0.index)
                < ($1.bandwidth, $1.resolution.map { $0.width * $0.height } ?? 0, -$1.index)
        }
        switch self {
        case .highest:
            return byBandwidth.last!
        case .lowest:
            return byBandwidth.first!
        case .index(let index):
            guard index < variants.count else { throw unavailable(variants) }
            return variants[index]
        case .bandwidth(let limit):
            return byBandwidth.last(where: { $0.bandwidth <= limit }) ?? byBandwidth.first!
        case .resolution(let resolution):
            guard let match = byBandwidth.last(where: { $0.resolution == resolution }) else { throw unavailable(variants) }
            return match
        }
    }

    private func unavailable(_ variants: [Variant]) -> HaulError {
        let offered = variants.map { variant in
            "index=\(variant.index) bandwidth=\(variant.bandwidth)" + (variant.resolution.map { " resolution=\($0)" } ?? "")
        }
        return HaulError(.invalidRequest, "no variant matches --hls-variant \(self); the playlist offers: \(offered.joined(separator: "; "))")
    }

    private static func bad(_ text: String) -> HaulError {
        HaulError(.invalidRequest, "--hls-variant takes highest, lowest, index=N, bandwidth=BITS or resolution=WxH, got '\(text)'")
    }
}
