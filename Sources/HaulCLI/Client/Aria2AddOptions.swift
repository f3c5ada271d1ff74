/// The options `haul add` sends with `aria2.addUri`, in aria2's shape: every value a string,
/// `header` an array of `Name: value` lines; options not given are left out, so the daemon's
/// defaults apply.
struct Aria2AddOptions: Encodable, Sendable, Hashable {
    var dir: String?
    var out: String?
    var header: [String]?
    var checksum: String?
    var split: String?
    var maxConnectionPerServer: String?
    /// Bytes per second, "0" for none.
    var maxDownloadLimit: String?
    /// "true" to add the download paused.
    var pause: String?

    enum CodingKeys: String, CodingKey {
        case dir, out, header, checksum, split, pause
        case maxConnectionPerServer = "max-connection-per-server"
        case maxDownloadLimit = "max-download-limit"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(dir, forKey: .dir)
        try container.encodeIfPresent(out, forKey: .out)
        if let header, !header.isEmpty { try container.encode(header, forKey: .header) }
        try container.encodeIfPresent(checksum, forKey: .checksum)
        try container.encodeIfPresent(split, forKey: .split)
        try container.encodeIfPresent(maxConnectionPerServer, forKey: .maxConnectionPerServer)
        try container.encodeIfPresent(maxDownloadLimit, forKey: .maxDownloadLimit)
        try container.encodeIfPresent(pause, forKey: .pause)
    }
}
