import Foundation

/// When and how soon to try a transient failure again, and how long to wait for a server or
/// network that is gone.
///
/// Two phases. First `maxRetries` quick retries: exponential backoff with jitter from
/// `baseDelay` to `maxDelay`, so that many downloads failing together against one server do not
/// retry in lockstep. Then, if waiting is allowed (`waitLimit` or `waitDeadline`), the download
/// *waits*: it keeps trying with the backoff growing to `waitingMaxDelay` (about a minute, like
/// a phone that checks again now and then) until its resource deadline, as URLSession's
/// background sessions do with `timeoutIntervalForResource`. A server's `Retry-After` wins over
/// the backoff (capped, so that a hostile value cannot park a download for a day).
///
/// Only transient failures are retried or waited for: broken or refused connections, DNS
/// failures, timeouts, 408, 429 and 5xx. A 404, a checksum mismatch or a certificate error
/// fails at once; a full disk pauses the download (`DownloadManager`).
public struct RetryPolicy: Sendable, Hashable {
    /// Quick retries after the first attempt. Default 5; 0 disables them.
    public var maxRetries: Int
    /// Delay before the first retry. Default 1 s.
    public var baseDelay: Duration
    /// Upper bound of the quick retries' backoff. Default 30 s.
    public var maxDelay: Duration
    /// Upper bound for a server's Retry-After. Default 120 s.
    public var maxRetryAfter: Duration
    /// After the quick retries, keep waiting for the server until this long after the download
    /// was added (its resource timeout). Default nil: no waiting, the download fails.
    /// `RetryPolicy.background` sets 7 days, URLSession's default.
    public var waitLimit: Duration?
    /// After the quick retries, keep waiting for the server until this moment (for a run that
    /// may wait a given time from now, whenever its downloads were added). Default nil.
    /// With `waitLimit` too, the earlier deadline holds.
    public var waitDeadline: Date?
    /// Upper bound of the backoff while waiting. Default 60 s.
    public var waitingMaxDelay: Duration

    /// A policy; every default is stated on its property.
    public init(
        maxRetries: Int = 5,
        baseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(30),
        maxRetryAfter: Duration = .seconds(120),
        waitLimit: Duration? = nil,
        waitDeadline: Date? = nil,
        waitingMaxDelay: Duration = .seconds(60)
    ) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.waitLimit = waitLimit
        self.waitDeadline = waitDeadline
        self.waitingMaxDelay = waitingMaxDelay
    }

    /// The policy of downloads that outlive their callers (the daemon, `BackgroundSession`):
    /// the quick retries, then waiting for up to 7 days from when the download was added.
    public static let background = RetryPolicy(waitLimit: .seconds(7 * 24 * 3600))

    /// Whether transient failures wait after the quick retries.
    public var waits: Bool { waitLimit != nil || waitDeadline != nil }

    /// Whether a `.retrying` event announcing `attempt` is a wait for a server or network that
    /// is gone, rather than one of the quick retries.
    public func isWaiting(beforeAttempt attempt: Int) -> Bool {
        attempt - 1 > maxRetries
    }

    /// What to do after a failed attempt.
    enum Decision: Equatable {
        /// Try again after `delay`; `waiting` once the quick retries are used up.
        case retry(after: Duration, waiting: Bool)
        /// Give up with this error (the attempt's own, or one saying the deadline passed).
        case fail(HaulError)

        var delay: Duration? {
            if case .retry(let delay, _) = self { return delay }
            return nil
        }

        /// Whether the next attempt waits for a server that is gone (the quick retries are
        /// used up): the download gives its slot back meanwhile.
        var isWaiting: Bool {
            if case .retry(_, let waiting) = self { return waiting }
            return false
        }

        /// The error the download reports: the attempt's while it retries.
        func error(for attemptError: HaulError) -> HaulError {
            if case .fail(let error) = self { return error }
            return attemptError
        }
    }

    /// Decides after attempt `nextAttempt - 1` failed with `error`. `addedAt` is when the
    /// download was added (the start of its resource timeout); `requestDeadline`, the
    /// download's own (`DownloadRequest.waitDeadline`), replaces this policy's when set;
    /// `jitter` is in [0, 1).
    func decide(
        after error: HaulError, nextAttempt: Int, addedAt: Date, requestDeadline: Date? = nil, now: Date = Date(), jitter: Double
    ) -> Decision {
        guard error.isTransient else { return .fail(error) }
        if let quick = delay(after: error, nextAttempt: nextAttempt, jitter: jitter) {
            return .retry(after: quick, waiting: false)
        }
        guard let deadline = requestDeadline ?? deadline(addedAt: addedAt) else { return .fail(error) }
        let left = deadline.timeIntervalSince(now)
        guard left > 0 else {
            return .fail(HaulError(
                .deadlineExceeded,
                "gave up waiting at \(Self.format(deadline)), \(Self.describe(now.timeIntervalSince(addedAt))) after the download was added; the last error: \(error.message)"))
        }
        let delay = backoff(retry: nextAttempt - 1, cap: max(waitingMaxDelay, maxDelay), error: error, jitter: jitter)
        // One last try right at the deadline rather than a wait that ends after it.
        return .retry(after: min(delay, .milliseconds(Int64((left * 1000).rounded(.up)))), waiting: true)
    }

    /// When waiting ends for a download added at `addedAt`; nil when this policy does not wait.
    func deadline(addedAt: Date) -> Date? {
        let byLimit = waitLimit.map { addedAt.addingTimeInterval($0.inSeconds) }
        switch (byLimit, waitDeadline) {
        case (let limit?, let deadline?): return min(limit, deadline)
        case (let limit?, nil): return limit
        case (nil, let deadline?): return deadline
        case (nil, nil): return nil
        }
    }

    /// The delay before retry number `retry` (1 for the first), or nil when the error is
    /// permanent or the quick retries are used up (waiting aside).
    func delay(after error: HaulError, nextAttempt: Int, jitter: Double) -> Duration? {
        guard error.isTransient, nextAttempt - 1 <= maxRetries else { return nil }
        return backoff(retry: nextAttempt - 1, cap: maxDelay, error: error, jitter: jitter)
    }

    private func backoff(retry: Int, cap: Duration, error: HaulError, jitter: Double) -> Duration {
        if let retryAfter = error.retryAfter {
            return min(max(retryAfter, .zero), maxRetryAfter)
        }
        // Capped before the power can overflow: 2^40 s is far past any cap.
        let exponent = Double(min(max(0, retry - 1), 40))
        let backoff = min(baseDelay.inSeconds * pow(2, exponent), cap.inSeconds)
        // "Equal jitter": between half and the whole backoff.
        let jittered = backoff * (0.5 + 0.5 * min(max(jitter, 0), 1))
        return .milliseconds(Int64(jittered * 1000))
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// `3 days 2 h`, `5 min 3 s`, `40 s`: how long, for a message.
    static func describe(_ seconds: TimeInterval) -> String {
        let total = Int(max(0, seconds).rounded())
        let (days, hours, minutes, secs) = (total / 86_400, total % 86_400 / 3600, total % 3600 / 60, total % 60)
        if days > 0 { return hours > 0 ? "\(days) days \(hours) h" : "\(days) days" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return secs > 0 ? "\(minutes) min \(secs) s" : "\(minutes) min" }
        return "\(secs) s"
    }

    /// Parses a Retry-After header: delta-seconds or an HTTP date.
    static func parseRetryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingBlanks()
        if let seconds = Int64(trimmed), seconds >= 0 { return .seconds(seconds) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSince(now)) * 1000))
    }
}

/// IMF-fixdate parsing (`Sun, 06 Nov 1994 08:49:37 GMT`), the form HTTP servers send.
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
