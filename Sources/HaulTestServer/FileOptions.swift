/// The knobs of one `/file` request, parsed from its query.
///
/// Every option is optional and documented with its default here, because this struct is the
/// reference for what the engine's tests can ask for. An unparsable value is a `400` rather than
/// a silent default: a typo in a test URL should fail loudly, not test the wrong thing.
struct FileOptions: Sendable {
    /// How the ETag is sent: `"s<seed>-v<version>-<size>"`, weak (`W/` prefix), or not at all.
    enum ETagMode: String, Sendable {
        case strong, weak, none
    }

    /// `size=N`: content length in bytes. Default 1024.
    var size = 1024
    /// `seed=S`: content seed; the bytes served are `TestContent` for `seed &+ version`. Default 0.
    var seed: UInt64 = 0
    /// `key=K`: which per-key state (counter, version, recorded requests) to use. Default: the path.
    var key: String?
    /// `etag=strong|weak|none`. Default strong.
    var etag = ETagMode.strong
    /// `changedETag=strong|weak|none`: how the ETag is sent once the content changed (version 1
    /// and later, see `changeAfter=`), like a server whose new file comes without a strong
    /// validator. Default: as `etag=`.
    var changedETag: ETagMode?
    /// `lm=1|0`: send Last-Modified. Default 1.
    var lastModified = true
    /// `ranges=1|0`: honour Range/If-Range and send `Accept-Ranges: bytes`. Default 1.
    var ranges = true
    /// `rangesFor=K`: honour ranges on the key's first K requests only; later ones ignore Range
    /// and get the whole file (200), like a server whose replicas differ. Default: every request.
    var rangesFor: Int?
    /// `maxRange=N`: a range is answered with at most N bytes from its start, and a
    /// Content-Range that says so: an honest short `206`, as servers that cap ranges send.
    /// Default: the whole range.
    var maxRange: Int?
    /// `ifRange=1|0`: honour `If-Range`. With 0 a range is served whatever validator `If-Range`
    /// names (or however little the response carries), like a careless mirror. Default 1.
    var ifRange = true
    /// `changeAfter=N`: request N to the key is still served the current version, then the version
    /// bumps, once, for every later request. Every request to the key counts, HEAD included. Default off.
    var changeAfter: Int?
    /// `status=503,503,200`: the k-th request gets the k-th status, the last one repeats. Default 200.
    /// Any 2xx entry means "serve the file normally" (200, or 206 for a range); any other code gets a
    /// short `error <code>` text body and no validators.
    var statuses: [Int] = []
    /// `retryAfter=S`: `Retry-After` on non-2xx responses. Default none.
    var retryAfter: String?
    /// `drop=N`: close the connection after N body bytes (of whatever response is sent, 206 too);
    /// N at or past the body's end means no drop. Default off.
    var drop: Int?
    /// `dropTimes=K`: drop only on the key's first K requests. Default: every request.
    var dropTimes: Int?
    /// `stall=S`: where `drop=` would close the connection, first stay silent with it open for
    /// S seconds (a server that stops sending). Bounded, because the server does not notice a
    /// client's close while it is not reading. Default off.
    var stall: Int?
    /// `hold=N`: no byte at or past content offset N is sent until the test calls
    /// `TestServer.release(key:)`: a body stops at N (a range that starts past N, before its
    /// first byte) with its connection open, until the release, the client hanging up or a
    /// minute passing. Gzip bodies are not held. It lets a test act on a download that is
    /// known to be under way and unfinished, however slowly the machine runs, where a throttle
    /// only makes that likely. Default off.
    var hold: Int?
    /// `rate=N`: throttle the body to about N bytes per second. Default off.
    var rate: Int?
    /// `rateStart=N`: apply `rate=` only to responses whose body starts at content offset N (a
    /// range from N; 0 is also a whole body), so that one segment of a split download can be
    /// made slow. Default: every response.
    var rateStart: Int?
    /// `lengthDelta=D`: declare Content-Length = actual + D. D > 0: the real bytes are sent, then the
    /// connection is closed; D < 0: only the declared bytes are sent, cleanly. Ignored with `chunked=1`.
    /// Default 0.
    var lengthDelta = 0
    /// `chunked=1`: no Content-Length, chunked transfer encoding. Default 0.
    var chunked = false
    /// `gzip=1`: `Content-Encoding: gzip` with a valid gzip stream; disables ranges. Default 0.
    var gzip = false
    /// `disposition=RAW`: `Content-Disposition` sent verbatim (bytes as decoded). Default none.
    var disposition: [UInt8]?
    /// `chunkSize=N`: body write size in bytes. Default 64 KiB; `rate=` picks its own unless given.
    var chunkSize: Int?

    /// A query value that could not be parsed; becomes a `400` naming the parameter.
    struct InvalidParameter: Error, Sendable {
        var name: String
        var value: String
    }

    init(_ query: QueryParameters) throws(InvalidParameter) {
        if let size = try Self.integer("size", query, minimum: 0) { self.size = size }
        if let seed = query["seed"] {
            guard let parsed = UInt64(seed) ?? Int64(seed).map({ UInt64(bitPattern: $0) }) else {
                throw InvalidParameter(name: "seed", value: seed)
            }
            self.seed = parsed
        }
        self.key = query["key"]
        if let etag = query["etag"] {
            guard let mode = ETagMode(rawValue: etag) else { throw InvalidParameter(name: "etag", value: etag) }
            self.etag = mode
        }
        if let changed = query["changedETag"] {
            guard let mode = ETagMode(rawValue: changed) else { throw InvalidParameter(name: "changedETag", value: changed) }
            self.changedETag = mode
        }
        self.lastModified = try Self.flag("lm", query) ?? true
        self.ranges = try Self.flag("ranges", query) ?? true
        self.ifRange = try Self.flag("ifRange", query) ?? true
        self.changeAfter = try Self.integer("changeAfter", query, minimum: 1)
        if let statuses = query["status"] {
            self.statuses = try statuses.split(separator: ",").map { text throws(InvalidParameter) in
                guard let status = Int(text), (200...599).contains(status) else {
                    throw InvalidParameter(name: "status", value: statuses)
                }
                return status
            }
        }
        self.retryAfter = query["retryAfter"]
        self.drop = try Self.integer("drop", query, minimum: 0)
        self.dropTimes = try Self.integer("dropTimes", query, minimum: 0)
        self.rangesFor = try Self.integer("rangesFor", query, minimum: 0)
        self.maxRange = try Self.integer("maxRange", query, minimum: 1)
        self.stall = try Self.integer("stall", query, minimum: 1)
        self.rate = try Self.integer("rate", query, minimum: 1)
        self.hold = try Self.integer("hold", query, minimum: 1)
        self.rateStart = try Self.integer("rateStart", query, minimum: 0)
        self.lengthDelta = try Self.integer("lengthDelta", query, minimum: Int.min) ?? 0
        self.chunked = try Self.flag("chunked", query) ?? false
        self.gzip = try Self.flag("gzip", query) ?? false
        self.disposition = query.bytes("disposition")
        self.chunkSize = try Self.integer("chunkSize", query, minimum: 1)
    }

    /// How the ETag of content version `version` is sent.
    func etagMode(forVersion version: Int) -> ETagMode {
        version > 0 ? (changedETag ?? etag) : etag
    }

    /// The status for the `ordinal`-th (1-based) request to the key.
    func status(forOrdinal ordinal: Int) -> Int {
        guard let last = self.statuses.last else { return 200 }
        return ordinal <= self.statuses.count ? self.statuses[ordinal - 1] : last
    }

    /// Whether the `ordinal`-th request to the key is served ranges.
    func servesRanges(forOrdinal ordinal: Int) -> Bool {
        ranges && ordinal <= (rangesFor ?? .max)
    }

    /// Whether the `ordinal`-th request to the key should have its connection dropped.
    func drops(forOrdinal ordinal: Int) -> Bool {
        guard self.drop != nil else { return false }
        guard let dropTimes = self.dropTimes else { return true }
        return ordinal <= dropTimes
    }

    /// The throttle of a response whose body starts at content offset `start`.
    func rate(forBodyStart start: Int) -> Int? {
        guard let rateStart else { return self.rate }
        return rateStart == start ? self.rate : nil
    }

    /// The body write size: `chunkSize=`, else about 1/20 s of `rate=` bounded to 1–64 KiB, else 64 KiB.
    var writeChunkSize: Int {
        if let chunkSize { return chunkSize }
        if let rate { return min(max(rate / 20, 1024), 65_536) }
        return 65_536
    }

    private static func integer(_ name: String, _ query: QueryParameters, minimum: Int) throws(InvalidParameter) -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), value >= minimum else { throw InvalidParameter(name: name, value: text) }
        return value
    }

    private static func flag(_ name: String, _ query: QueryParameters) throws(InvalidParameter) -> Bool? {
        switch query[name] {
        case nil: return nil
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        case let text?: throw InvalidParameter(name: name, value: text)
        }
    }
}
