import Foundation

/// The URIs one attempt of a download may fetch from (`DownloadRequest.urls`), and which of
/// them are still worth asking: the choice of a URI for each request, what a failure or an
/// inconsistent answer does to it, and how fast each one serves.
///
/// Why a value of its own: a segmented transfer's connections share it behind their lock, and
/// the rules (never splice a mirror that serves another file, leave a failing one for the
/// others, fail only when every one has failed) are tested here without I/O.
///
/// The *reference* is the source whose answer fixed the length and validator of the attempt
/// (the first answer); every other source must match it, which `ResumePolicy.judgeSegment`
/// checks on each of its answers (the `If-Range` it is sent makes a mirror holding another
/// file answer `200`, never a `206` of wrong bytes). A source that does not match is dropped
/// for the rest of the attempt. One that fails (connection refused or reset, timeout, an
/// error status) `maxConsecutiveFailures` times in a row is left for the others too; bytes
/// from a request of it started after its last failure clear its count.
///
/// At most `maxPerSource` requests (aria2's `-x`) go to one source at a time. A failed
/// request makes its source wait before it is asked again (its `Retry-After`, bounded, else a
/// short delay that grows with each failure): no storm of requests at a server that said it
/// is busy. A `429`, `503` or refused connection while other requests of the same source are
/// under way means "full for now", not "broken": it waits, but does not count towards giving
/// the source up.
struct MirrorSet: Sendable {
    /// Whether a source may still be asked in this attempt.
    enum Standing: Sendable, Hashable {
        case usable
        /// It served another file (length, validator) or bytes that do not fit: never again.
        case dropped(reason: String)
        /// It failed `maxConsecutiveFailures` times in a row.
        case failed(reason: String)
    }

    /// One URI and what is known of it in this attempt.
    struct Source: Sendable {
        /// The URI as the request lists it (aria2's `uri`).
        let uri: URL
        /// What is requested: the reference's final URL after redirects, else `uri`.
        let target: URL
        /// The request's headers as they may be sent to `target` (see `headers(for:target:request:)`).
        let headers: [HeaderField]
        var standing = Standing.usable
        var consecutiveFailures = 0
        /// Requests of it under way.
        var inUse = 0
        /// Whether it was asked at all in this attempt.
        var requested = false
        var receivedBytes: Int64 = 0
        var rate = Rate()
        /// Requests of it handed out so far: the next one's serial number.
        var issued = 0
        /// The serial of the latest request whose failure counted; bytes from requests up to
        /// it (started before that failure) do not clear `consecutiveFailures`.
        var lastCountedFailure = -1
        /// The serial of the latest failed request, counted or not (a source being full):
        /// only bytes of a later request end the waiting.
        var lastFailure = -1
        /// Failures since a request started after them brought bytes, for the growing delay.
        var backoffs = 0
        /// Not asked again before this (after a failure).
        var notBefore: ContinuousClock.Instant?
    }

    /// One request handed out: its source and serial number.
    struct Ticket: Sendable, Hashable {
        var source: Int
        var serial: Int
    }

    /// What a connection that needs a source is told.
    enum Pick: Sendable, Hashable {
        case source(Ticket)
        /// Every usable source below its limit waits after a failure: ask again then.
        case wait(until: ContinuousClock.Instant)
        /// Every usable source has `maxPerSource` requests under way: this connection is one too many.
        case busy
        /// No source is usable any more.
        case none
    }

    /// Bytes per second of one source, over windows of about a second.
    struct Rate: Sendable {
        private var windowStart: ContinuousClock.Instant?
        private var windowBytes: Int64 = 0
        private var lastByte: ContinuousClock.Instant?
        private var lastRate: Double?

        mutating func add(_ count: Int, at now: ContinuousClock.Instant) {
            if windowStart == nil { windowStart = now }
            windowBytes += Int64(count)
            lastByte = now
            let elapsed = windowStart!.duration(to: now).inSeconds
            if elapsed >= 1 {
                lastRate = Double(windowBytes) / elapsed
                windowStart = now
                windowBytes = 0
            }
        }

        /// The last full window's rate (the current one's before the first is full); 0 after
        /// two seconds without a byte.
        func bytesPerSecond(at now: ContinuousClock.Instant) -> Int64 {
            guard let lastByte, let windowStart, lastByte.duration(to: now) < .seconds(2) else { return 0 }
            if let lastRate { return Int64(lastRate) }
            let elapsed = windowStart.duration(to: now).inSeconds
            return elapsed > 0 ? Int64(Double(windowBytes) / elapsed) : 0
        }
    }

    private(set) var sources: [Source]
    let maxConsecutiveFailures: Int
    /// Requests under way per source at most (aria2's `--max-connection-per-server`).
    let maxPerSource: Int
    /// The wait after a failure without `Retry-After`: `baseBackoff`, doubled per failure in a
    /// row, up to `maxBackoff`; a `Retry-After` is honoured up to `maxRetryAfter`.
    static let baseBackoff = Duration.milliseconds(100)
    static let maxBackoff = Duration.seconds(5)
    static let maxRetryAfter = Duration.seconds(30)
    /// The source the download's validator came from: the only one whose answers may say the
    /// file changed, and judged by the rules of a download with one URI. Every other one must
    /// send exactly the same strong validator (`mustProveSameFile`).
    let authority: Int

    init(sources: [Source], maxConsecutiveFailures: Int = 3, maxPerSource: Int = .max, authority: Int = 0) {
        precondition(!sources.isEmpty, "a download has at least one URI")
        self.sources = sources
        self.maxConsecutiveFailures = maxConsecutiveFailures
        self.maxPerSource = max(1, maxPerSource)
        self.authority = authority
    }

    /// The sources of `request` for an attempt whose first answer came from its URI number
    /// `reference` at `referenceURL` (after redirects): that one first, then the others in
    /// the request's order. `validatorSource` is the URI the download's validator came from
    /// (`TransferState.validatorSource`); when it is not known, the reference, whose first
    /// answer was then judged strictly, is the authority.
    init(
        request: DownloadRequest, reference: Int, referenceURL: URL, validatorSource: Int? = nil,
        maxConsecutiveFailures: Int = 3, maxPerSource: Int = .max
    ) {
        let uris = request.urls
        let first = min(max(0, reference), uris.count - 1)
        var sources = [Source(
            uri: uris[first], target: referenceURL,
            headers: Self.headers(for: uris[first], target: referenceURL, request: request))]
        var authority = 0
        for (index, uri) in uris.enumerated() where index != first {
            if index == validatorSource { authority = sources.count }
            sources.append(Source(uri: uri, target: uri, headers: Self.headers(for: uri, target: uri, request: request)))
        }
        self.init(sources: sources, maxConsecutiveFailures: maxConsecutiveFailures, maxPerSource: maxPerSource, authority: authority)
    }

    /// Whether source `index`'s answers must carry exactly the download's strong validator
    /// before a byte of them is written: every source but the authority, when there are several.
    func mustProveSameFile(_ index: Int) -> Bool {
        !isSingle && index != authority
    }

    /// The headers to send to `target` (reached from the request's URI `uri`): the request's
    /// own headers, with credentials and cookies only when `uri` is on the server of the
    /// request's first URL (they were given for that one); then `uri`'s own user info, for
    /// its server only; then the same rule again from `uri` to `target` (a redirect).
    static func headers(for uri: URL, target: URL, request: DownloadRequest) -> [HeaderField] {
        let forURI = URLCredentials.headers(HTTPTransport.headers(request.headers, from: request.url, to: uri), for: uri)
        return HTTPTransport.headers(forURI, from: uri, to: target)
    }

    /// The order in which the first request of an attempt tries a request's `count` URIs:
    /// from the one that answered last (`start`), then round the list.
    static func order(count: Int, startingAt start: Int) -> [Int] {
        let start = count > 0 ? ((start % count) + count) % count : 0
        return (0..<count).map { (start + $0) % count }
    }

    /// `order(count:startingAt:)`, with `second` (the URI a resume must be able to fall back
    /// to: the validator's source) moved right after the first.
    static func order(count: Int, startingAt start: Int, thenAsking second: Int?) -> [Int] {
        var order = order(count: count, startingAt: start)
        if let second, let at = order.firstIndex(of: second), at > 1 {
            order.remove(at: at)
            order.insert(second, at: 1)
        }
        return order
    }

    /// The URI the next attempt starts with after one ended with `error` on URI `current`:
    /// the next one for a failure of the server or the network (a mirror with the same file
    /// lets the attempt resume from it); the same one otherwise.
    static func next(after current: Int, count: Int, error: HaulError) -> Int {
        guard count > 1, error.isTransient || error.httpStatus.map({ $0 >= 400 }) == true else { return current }
        return (current + 1) % count
    }

    var isSingle: Bool { sources.count == 1 }

    /// Whether any source may still be asked.
    var hasUsable: Bool { sources.contains { $0.standing == .usable } }

    /// A source for a new request, counted in use until `release`: among the usable ones below
    /// `maxPerSource` requests and not waiting after a failure, the one with the fewest
    /// requests under way, then the fewest recent failures, then the first listed.
    mutating func pick(at now: ContinuousClock.Instant = .now) -> Pick {
        let usable = sources.indices.filter { sources[$0].standing == .usable }
        guard !usable.isEmpty else { return .none }
        let open = usable.filter { sources[$0].inUse < maxPerSource }
        guard !open.isEmpty else { return .busy }
        let ready = open.filter { sources[$0].notBefore.map { $0 <= now } ?? true }
        guard let best = ready.min(by: { a, b in
            (sources[a].inUse, sources[a].consecutiveFailures, a) < (sources[b].inUse, sources[b].consecutiveFailures, b)
        }) else {
            return .wait(until: open.compactMap { sources[$0].notBefore }.min() ?? now)
        }
        return .source(use(best))
    }

    /// `pick`'s source, nil when it gives none.
    mutating func acquire(at now: ContinuousClock.Instant = .now) -> Int? {
        if case .source(let ticket) = pick(at: now) { return ticket.source }
        return nil
    }

    /// Counts a request of source `index` as under way (the reference's first answer).
    @discardableResult
    mutating func use(_ index: Int) -> Ticket {
        sources[index].inUse += 1
        sources[index].requested = true
        sources[index].issued += 1
        return Ticket(source: index, serial: sources[index].issued - 1)
    }

    mutating func release(_ index: Int) {
        sources[index].inUse = max(0, sources[index].inUse - 1)
    }

    /// Bytes from source `index` were written by its request number `serial` (nil: one
    /// started now). A request started after the source's last counted failure proves it
    /// works: its failures are forgotten (and a source given up for them is usable again).
    /// Bytes of an older request, under way since before that failure, prove nothing new.
    mutating func received(_ count: Int, from index: Int, serial: Int? = nil, at now: ContinuousClock.Instant) {
        sources[index].receivedBytes += Int64(count)
        sources[index].rate.add(count, at: now)
        let serial = serial ?? sources[index].issued
        guard serial > sources[index].lastCountedFailure else { return }
        sources[index].consecutiveFailures = 0
        if case .failed = sources[index].standing { sources[index].standing = .usable }
        guard serial > sources[index].lastFailure else { return }
        sources[index].backoffs = 0
        sources[index].notBefore = nil
    }

    /// A request of source `index` (number `serial`; nil: the latest) failed without bringing
    /// a byte; it is still counted in use. The source waits before it is asked again. A `429`,
    /// `503` or refused connection while another of its requests is under way is the source
    /// being full, not failing: it is not counted. Returns whether another request should be
    /// made (to any usable source): only when there are several sources and one of them is
    /// still usable. A single source keeps the transfer's own rules.
    mutating func failed(_ index: Int, _ error: HaulError, serial: Int? = nil, at now: ContinuousClock.Instant = .now) -> Bool {
        let full = [429, 503].contains(error.httpStatus ?? 0) || error.code == .connectionFailed
        if !(full && sources[index].inUse > 1) {
            sources[index].consecutiveFailures += 1
            sources[index].lastCountedFailure = max(sources[index].lastCountedFailure, serial ?? sources[index].issued - 1)
            if sources[index].consecutiveFailures >= maxConsecutiveFailures, sources[index].standing == .usable {
                sources[index].standing = .failed(reason: error.message)
            }
        }
        sources[index].lastFailure = max(sources[index].lastFailure, serial ?? sources[index].issued - 1)
        sources[index].backoffs += 1
        let delay = error.retryAfter.map { min($0, Self.maxRetryAfter) }
            ?? min(Self.baseBackoff * (1 << min(sources[index].backoffs - 1, 16)), Self.maxBackoff)
        let until = now + delay
        sources[index].notBefore = max(sources[index].notBefore ?? until, until)
        return !isSingle && hasUsable
    }

    /// Source `index` served another file or bytes that do not fit: it is never asked again
    /// in this attempt. Returns whether another request should be made (as `failed`).
    mutating func drop(_ index: Int, reason: String) -> Bool {
        sources[index].standing = .dropped(reason: reason)
        return !isSingle && hasUsable
    }

    /// The sources asked in this attempt, as `DownloadManager.servers(of:)` reports them
    /// (`connections` 0 for one with no request under way right now).
    func servers(at now: ContinuousClock.Instant) -> [DownloadServer] {
        sources.filter(\.requested).map { source in
            DownloadServer(
                uri: source.uri, currentURL: URLCredentials.split(source.target).url,
                bytesPerSecond: source.rate.bytesPerSecond(at: now), connections: source.inUse)
        }
    }
}
