/// The options `haul add` sends with `aria2.addUri`, in aria2's shape: every value a string,
/// `header` an array of `Name: value` lines; options not given are left out, so the daemon's
/// defaults apply.
struct Aria2AddOptions: Encodable, Sendable, Hashable {
    var dir: String?
    var out: String?
    var header: [String]?
    var checksum: String?
    /// "true" to add the download paused.
    var pause: String?

    enum CodingKeys: String, CodingKey { case dir, out, header, checksum, pause }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(dir, forKey: .dir)
        try container.encodeIfPresent(out, forKey: .out)
        if let header, !header.isEmpty { try container.encode(header, forKey: .header) }
        try container.encodeIfPresent(checksum, forKey: .checksum)
        try container.encodeIfPresent(pause, forKey: .pause)
    }
}
