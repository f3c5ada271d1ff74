import Foundation

/// Turns a playlist URL into a `ResourcePlan`: fetches the playlist (and, for a master
/// playlist, the chosen variant's media playlist and those of its renditions), lists every
/// segment, initialization section and key as one download each (byte ranges of one file are
/// one download of that file), names them safely in one directory, and prepares the local
/// playlists and joins the finishing step writes.
///
/// A live playlist (no `EXT-X-ENDLIST`) is planned as a recording (`ResourcePlan.live`) when
/// `HLSOptions.record` asks for it, and refused otherwise.
///
/// Refused with a clear error: live playlists unless recorded, master playlists that lead
/// to other master playlists (including themselves), URIs that are not http(s), keys on another
/// server (unless allowed), anything over `ResourceLimits`.
package struct HLSPlanner: Sendable {
    let fetcher: any DocumentFetching
    let options: HLSOptions

    package init(fetcher: any DocumentFetching, options: HLSOptions) {
        self.fetcher = fetcher
        self.options = options
    }

    /// Plans the resource at `url` into `directory`; `document` is the playlist when the caller
    /// already fetched it (to look at its content type).
    package func plan(_ url: URL, into directory: URL, document: FetchedDocument? = nil) async throws(HaulError) -> ResourcePlan {
        let top: FetchedDocument
        if let document {
            top = document
        } else {
            top = try await fetch(url, origin: url)
        }
        var names = LocalNames()
        var plan = ResourcePlan(kind: .hls, source: url.absoluteString, directory: directory, requests: [])
        var medias: [(url: URL, document: FetchedDocument, playlist: MediaPlaylist, name: String, subtitles: Bool)] = []
        switch try PlaylistParser.parse(top.body, limits: options.limits) {
        case .media(let playlist):
            let name = names.reserve(Self.playlistName(top.finalURL, fallback: "index.m3u8"))
            medias.append((top.finalURL, top, playlist, name, false))
            plan.entryName = name
        case .master(let master):
            let masterName = names.reserve(Self.playlistName(top.finalURL, fallback: "master.m3u8"))
            let variant = try options.variant.select(from: master.variants)
            var wanted: [(uri: String, line: Int, subtitles: Bool)] = [(variant.uri, variant.line, false)]
            for rendition in master.renditions(of: variant) {
                if let uri = rendition.uri { wanted.append((uri, rendition.line, rendition.type == "SUBTITLES")) }
            }
            guard wanted.count <= options.limits.maxMediaPlaylists else {
                throw HaulError(.invalidResponse, "the variant leads to \(wanted.count) media playlists, more than \(options.limits.maxMediaPlaylists)")
            }
            var nameByURL: [String: String] = [:]
            var namesByLine: [Int: String] = [:]
            for item in wanted {
                let mediaURL = try ResourceURI.resolve(item.uri, against: top.finalURL, place: "master playlist line \(item.line)")
                if let known = nameByURL[mediaURL.absoluteString] {
                    namesByLine[item.line] = known
                    continue
                }
                guard mediaURL.absoluteString != top.finalURL.absoluteString, mediaURL.absoluteString != url.absoluteString else {
                    throw HaulError(.invalidResponse, "master playlist line \(item.line): the playlist names itself")
                }
                let document = try await fetch(mediaURL, origin: url)
                guard case .media(let playlist) = try Self.parse(document, limits: options.limits, url: mediaURL) else {
                    throw HaulError(.invalidResponse, "\(mediaURL.absoluteString) is a master playlist inside a master playlist; playlists nest one level only")
                }
                let name = names.reserve(Self.playlistName(mediaURL, fallback: "media.m3u8"))
                nameByURL[mediaURL.absoluteString] = name
                namesByLine[item.line] = name
                medias.append((document.finalURL, document, playlist, name, item.subtitles))
            }
            plan.localFiles.append(LocalTextFile(name: masterName, text: PlaylistRewriter.master(
                master, variant: variant, variantName: namesByLine[variant.line]!, renditionNames: namesByLine)))
            plan.entryName = masterName
        }
        var joinNames: [String: String] = [:]
        if options.join {
            for media in medias where !media.subtitles {
                let stem = (media.name as NSString).deletingPathExtension
                let ext = media.playlist.segments.contains(where: { $0.map != nil }) ? "mp4" : "ts"
                joinNames[media.name] = names.reserve(stem + "." + ext)
            }
        }
        var requestIndex: [String: Int] = [:]
        for media in medias {
            guard media.playlist.isComplete else {
                guard options.record else {
                    throw HaulError(.invalidResponse, "\(media.url.absoluteString) is a live playlist (no #EXT-X-ENDLIST): only finished playlists can be downloaded, or recorded until they end with --hls-record")
                }
                guard medias.count == 1 else {
                    throw HaulError(.invalidResponse, "\(media.url.absoluteString) is a live playlist with renditions beside it: recording records one media playlist (give its URL, or a master playlist whose variant has no renditions)")
                }
                var recorder = LiveRecorder(
                    playlistURL: media.url, playlistName: media.name, joinName: joinNames[media.name], source: plan.source,
                    options: options, names: names)
                plan.requests += try recorder.take(media.playlist, directory: directory)
                plan.live = recorder
                continue
            }
            let text = String(decoding: media.document.body, as: UTF8.self)
            let files = try mediaFiles(media.playlist, url: media.url, names: &names)
            for (url, name) in files.downloads where requestIndex[url.absoluteString] == nil {
                requestIndex[url.absoluteString] = plan.requests.count
                plan.requests.append(request(url, name: name, directory: directory, source: plan.source))
                guard plan.requests.count <= options.limits.maxFiles else {
                    throw HaulError(.invalidResponse, "the resource has more than \(options.limits.maxFiles) files (the limit)")
                }
            }
            plan.localFiles.append(LocalTextFile(name: media.name, text: try PlaylistRewriter.media(text, localNames: files.namesByLine)))
            if let output = joinNames[media.name] {
                plan.joins.append(JoinSpec(output: output, parts: files.joinParts))
            }
        }
        plan.duration = medias.first?.playlist.duration
        return plan
    }

    /// The files of one media playlist: what to download (URL and local name, in order), the
    /// local name for each URI-bearing line, and the parts of its joined file.
    private func mediaFiles(_ playlist: MediaPlaylist, url: URL, names: inout LocalNames) throws(HaulError)
        -> (downloads: [(URL, String)], namesByLine: [Int: String], joinParts: [JoinPart])
    {
        var downloads: [(URL, String)] = []
        var namesByLine: [Int: String] = [:]
        var parts: [JoinPart] = []
        var lastMap: MediaInitialization?
        func local(_ raw: String, line: Int, ext: String, key: Bool = false) throws(HaulError) -> String {
            let resolved = try ResourceURI.resolve(raw, against: url, place: "\(url.lastPathComponent) line \(line)")
            if key, !options.allowsKeysOnOtherHosts, !ResourceURI.sameOrigin(resolved, url) {
                throw HaulError(.invalidResponse, "\(url.lastPathComponent) line \(line): the key \(resolved.absoluteString) is on another server than the playlist (allow it with --hls-allow-key-hosts)")
            }
            let name = names.name(for: resolved, defaultExtension: ext)
            namesByLine[line] = name
            downloads.append((resolved, name))
            return name
        }
        for segment in playlist.segments {
            if let map = segment.map, map != lastMap {
                let name = try local(map.uri, line: map.line, ext: "mp4")
                parts.append(JoinPart(file: name, range: map.byteRange))
                lastMap = map
            }
            let keyName = try segment.key.map { key throws(HaulError) in try local(key.uri, line: key.line, ext: "key", key: true) }
            if segment.isGap {
                // Not fetched (it is missing on purpose); the local playlist still names it.
                namesByLine[segment.line] = LocalNames.portable(FileNaming.urlName(URL(string: segment.uri) ?? url) ?? "gap")
                continue
            }
            let name = try local(segment.uri, line: segment.line, ext: "ts")
            parts.append(JoinPart(
                file: name, range: segment.byteRange, keyFile: keyName,
                iv: segment.key.map { $0.iv ?? Self.sequenceIV(segment.sequence) }))
        }
        return (downloads, namesByLine, parts)
    }

    private func request(_ url: URL, name: String, directory: URL, source: String) -> DownloadRequest {
        Self.memberRequest(url, name: name, directory: directory, source: source, headers: options.headers)
    }

    /// The download of one file of the resource: credentials only to the document's server.
    static func memberRequest(_ url: URL, name: String, directory: URL, source: String, headers: [HeaderField]) -> DownloadRequest {
        DownloadRequest(
            url: url, directory: directory, fileName: name,
            headers: HTTPTransport.headers(headers, from: URL(string: source) ?? url, to: url),
            conflictPolicy: .overwrite, metadata: [ResourcePlan.metadataKey: source])
    }

    private func fetch(_ url: URL, origin: URL) async throws(HaulError) -> FetchedDocument {
        let headers = HTTPTransport.headers(options.headers, from: origin, to: url)
        return try await fetcher.fetchDocument(url, headers: headers, limit: options.limits.maxDocumentBytes)
    }

    private static func parse(_ document: FetchedDocument, limits: ResourceLimits, url: URL) throws(HaulError) -> HLSPlaylist {
        do {
            return try PlaylistParser.parse(document.body, limits: limits)
        } catch {
            throw HaulError(error.code, "\(url.absoluteString): \(error.message)")
        }
    }

    /// The IV of an AES-128 segment without an explicit one: its media sequence number as a
    /// 128-bit big-endian integer (RFC 8216 §5.2).
    static func sequenceIV(_ sequence: Int64) -> [UInt8] {
        var iv = [UInt8](repeating: 0, count: 16)
        var value = UInt64(bitPattern: sequence)
        for index in stride(from: 15, through: 8, by: -1) {
            iv[index] = UInt8(value & 0xFF)
            value >>= 8
        }
        return iv
    }

    static func playlistName(_ url: URL, fallback: String) -> String {
        var name = LocalNames.portable(FileNaming.urlName(url).flatMap(FileNaming.sanitize) ?? fallback)
        let ext = (name as NSString).pathExtension.lowercased()
        if ext != "m3u8" && ext != "m3u" { name += ".m3u8" }
        return name
    }
}

extension ResourcePlan {
    /// Where each member request keeps the document it belongs to.
    package static let metadataKey = "haul.resource"
}
