import Foundation

/// Resolves a URI written in a playlist or Metalink document against the document's own URL,
/// and refuses what Haul must not fetch: schemes other than http and https (`file://` would
/// read the local disk, `data:` and DRM schemes are not downloads), and URLs without a host.
///
/// Path tricks (`../`, absolute paths) need no check here: they only change what is asked of
/// the server, and the local name is made from the last path component alone (`LocalNames`).
enum ResourceURI {
    static func resolve(_ raw: String, against base: URL?, place: String) throws(HaulError) -> URL {
        guard let resolved = URL(string: raw, relativeTo: base)?.absoluteURL else {
            throw HaulError(.invalidURL, "\(place): '\(raw.prefix(120))' is not a valid URI")
        }
        let scheme = resolved.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw HaulError(.unsupportedScheme, "\(place): '\(raw.prefix(120))' is a \(scheme.isEmpty ? "scheme-less" : scheme + ":") URI; only http and https are fetched")
        }
        guard resolved.host?.isEmpty == false else {
            throw HaulError(.invalidURL, "\(place): '\(raw.prefix(120))' has no host")
        }
        // The fragment is not sent to the server; one file per URL without it.
        guard var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false) else { return resolved }
        components.fragment = nil
        return components.url ?? resolved
    }

    /// Whether two URLs are on the same server (scheme, host and port): credentials and keys
    /// are trusted only there.
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }

    private static func port(_ url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}

/// Local file names for the URLs of one resource: each URL gets one name, made from the last
/// component of its path by `FileNaming.sanitize` (no `/`, no leading dot, no control
/// character, at most 255 bytes: it can only name a file directly in the resource's
/// directory), and made unique (`seg-2.ts`) when two URLs end the same way. Names are compared
/// without case, so that a copy on a case-insensitive file system stays consistent.
struct LocalNames: Sendable, Hashable, Codable {
    private var byURL: [String: String] = [:]
    private var taken: Set<String> = []

    /// Keeps `name` for a file of Haul's own (a local playlist, a joined file); returns the
    /// name actually reserved (numbered when taken).
    mutating func reserve(_ name: String) -> String {
        let unique = uniqued(name)
        taken.insert(unique.lowercased())
        return unique
    }

    /// The local name of `url`, the same for every mention of the URL.
    mutating func name(for url: URL, defaultExtension: String) -> String {
        if let known = byURL[url.absoluteString] { return known }
        var base = Self.portable(FileNaming.urlName(url).flatMap(FileNaming.sanitize) ?? "file")
        if (base as NSString).pathExtension.isEmpty, !defaultExtension.isEmpty { base += "." + defaultExtension }
        let name = reserve(base)
        byURL[url.absoluteString] = name
        return name
    }

    /// Letters, digits, `.`, `-` and `_` only: the name is written into playlists as a
    /// relative URI (where `#`, `?`, `%`, `"` and spaces would mean something else) and must
    /// read the same on every file system.
    static func portable(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            let safe = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar))
            scalars.append(safe ? scalar : "_")
        }
        var result = String(scalars)
        while result.hasPrefix(".") { result.removeFirst() }
        return result.isEmpty ? "file" : result
    }

    private func uniqued(_ name: String) -> String {
        guard taken.contains(name.lowercased()) else { return name }
        let ext = (name as NSString).pathExtension
        let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
        var number = 2
        while true {
            let candidate = String(stem.prefix(200)) + "-\(number)" + (ext.isEmpty ? "" : "." + ext)
            if !taken.contains(candidate.lowercased()) { return candidate }
            number += 1
        }
    }
}
