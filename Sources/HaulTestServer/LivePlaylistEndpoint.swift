import HTTPTypes
import Hummingbird

/// `GET /live?key=K&segments=NAME:SECONDS,…&base=URL&window=W&start=S&target=T&fail=N`: a live
/// HLS media playlist that grows by one segment with each request for `K`, as a live encoder's
/// does between reloads, and ends (`EXT-X-ENDLIST`) once every segment is out.
///
/// The first request lists the first `start` segments (default 1; 0: none yet, a stream that
/// has just begun); request `n` lists up to
/// `start + n - 1`. With `window=W` only the last W are listed (a sliding window: the media
/// sequence number moves on). Segment URIs are `base` + NAME, so the segments themselves can
/// come from another server (nginx serving ffmpeg's files). `fail=N` answers the N-th request
/// with 503, as a live origin that hiccups does. `target` is `EXT-X-TARGETDURATION` (default 1).
enum LivePlaylistEndpoint {
    static func respond(_ request: Request, query: QueryParameters, ordinal: Int) -> Response {
        let entries = (query["segments"] ?? "").split(separator: ",").compactMap { entry -> (String, String)? in
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), String(parts[1]))
        }
        guard !entries.isEmpty else { return PlainResponse.text(.badRequest, "missing segments") }
        if let fail = query["fail"].flatMap(Int.init), fail == ordinal {
            return PlainResponse.text(.serviceUnavailable, "status 503")
        }
        let start = max(0, query["start"].flatMap(Int.init) ?? 1)
        let end = min(entries.count, start + ordinal - 1)
        let window = query["window"].flatMap(Int.init) ?? entries.count
        let first = max(0, end - window)
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:\(query["target"] ?? "1")", "#EXT-X-MEDIA-SEQUENCE:\(first)"]
        for (name, seconds) in entries[first..<end] {
            lines.append("#EXTINF:\(seconds),")
            lines.append((query["base"] ?? "") + name)
        }
        if end == entries.count { lines.append("#EXT-X-ENDLIST") }
        var headers = HTTPFields()
        headers[.contentType] = "application/vnd.apple.mpegurl"
        headers[.cacheControl] = "no-cache"
        let body = lines.joined(separator: "\n") + "\n"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
