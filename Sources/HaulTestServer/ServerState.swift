import NIOConcurrencyHelpers

/// The server's memory, per key: how many requests it admitted, the content version, the
/// requests themselves, and how many body bytes were handed to connections for them.
///
/// Fault scripts (`status=503,200`, `dropTimes=1`, `changeAfter=2`) are keyed on "the k-th
/// request to this key", so admitting a request (numbering it, reading its version, bumping the
/// version when due) happens in one critical section. A lock rather than an actor keeps the
/// public `requests(forKey:)` and `changeContent(forKey:)` synchronous, which tests prefer.
final class ServerState: Sendable {
    private struct KeyState {
        var admitted = 0
        var version = 0
        var requests: [RecordedRequest] = []
        var bytesSent = 0
        var streaming = 0
        var peakStreaming = 0
        var released = false
    }

    /// What admission decided for one request.
    struct Admission: Sendable {
        /// 1-based position of this request among the key's requests.
        var ordinal: Int
        /// The content version this request is served with.
        var version: Int
    }

    private let keys = NIOLockedValueBox([String: KeyState]())
    /// `/file` bodies being sent now over every key, and the most at once.
    private let allStreaming = NIOLockedValueBox((now: 0, peak: 0))
    /// Set by shutdown: no body is held any more.
    private let releasedAll = NIOLockedValueBox(false)

    /// Numbers a request to `key`, records it with status 0 (set later by `setStatus`), and
    /// returns its ordinal and content version. With `changeAfter: N`, the request that makes the
    /// count reach N is still served the old version and bumps it for everyone after.
    func admit(key: String, request: RecordedRequest, changeAfter: Int? = nil) -> Admission {
        self.keys.withLockedValue { keys in
            keys[key, default: KeyState()].admitted += 1
            keys[key]!.requests.append(request)
            let state = keys[key]!
            if let changeAfter, state.admitted == changeAfter {
                keys[key]!.version += 1
            }
            return Admission(ordinal: state.admitted, version: state.version)
        }
    }

    /// Fills in the status of the `ordinal`-th request to `key` once the server decided it.
    func setStatus(_ status: Int, key: String, ordinal: Int) {
        self.keys.withLockedValue { keys in
            keys[key]?.requests[ordinal - 1].status = status
        }
    }

    /// The requests admitted for `key`, in order of arrival.
    func requests(forKey key: String) -> [RecordedRequest] {
        self.keys.withLockedValue { $0[key]?.requests ?? [] }
    }

    /// Counts `count` body bytes of a `/file` response for `key` as handed to the connection
    /// (negative to take back a write the connection refused).
    func addBytesSent(_ count: Int, key: String) {
        self.keys.withLockedValue { $0[key, default: KeyState()].bytesSent += count }
    }

    /// A `/file` body for `key` started (`true`) or ended (`false`) streaming.
    func streaming(_ started: Bool, key: String) {
        self.keys.withLockedValue { keys in
            keys[key, default: KeyState()].streaming += started ? 1 : -1
            keys[key]!.peakStreaming = max(keys[key]!.peakStreaming, keys[key]!.streaming)
        }
        self.allStreaming.withLockedValue { all in
            all.now += started ? 1 : -1
            all.peak = max(all.peak, all.now)
        }
    }

    /// `/file` bodies for `key` streaming now.
    func streamingNow(forKey key: String) -> Int {
        self.keys.withLockedValue { $0[key]?.streaming ?? 0 }
    }

    /// The most `/file` bodies for `key` that were streaming at the same time.
    /// The most `/file` bodies sent at the same time, over every key.
    func peakStreamingOverall() -> Int {
        self.allStreaming.withLockedValue { $0.peak }
    }

    func peakStreaming(forKey key: String) -> Int {
        self.keys.withLockedValue { $0[key]?.peakStreaming ?? 0 }
    }

    /// Body bytes of `/file` responses for `key` handed to connections so far, all requests together.
    func bytesSent(forKey key: String) -> Int {
        self.keys.withLockedValue { $0[key]?.bytesSent ?? 0 }
    }

    /// The content version currently served for `key` (0 until it changes).
    func version(forKey key: String) -> Int {
        self.keys.withLockedValue { $0[key]?.version ?? 0 }
    }

    /// Lets every body of `key` held by `hold=` go on, now and from now on.
    func release(key: String) {
        self.keys.withLockedValue { $0[key, default: KeyState()].released = true }
    }

    /// Lets every held body go on (the server is shutting down).
    func releaseAll() {
        self.releasedAll.withLockedValue { $0 = true }
    }

    /// Whether bodies of `key` held by `hold=` may go on.
    func isReleased(key: String) -> Bool {
        self.releasedAll.withLockedValue { $0 } || self.keys.withLockedValue { $0[key]?.released ?? false }
    }

    /// Bumps `key`'s content version: new bytes, new ETag, later Last-Modified.
    func changeContent(forKey key: String) {
        self.keys.withLockedValue { $0[key, default: KeyState()].version += 1 }
    }
}
