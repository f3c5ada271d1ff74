import Foundation

/// When and how soon to try a transient failure again.
///
/// Exponential backoff with jitter, so that many downloads failing together against one
/// server do not retry in lockstep; a server's `Retry-After` wins over the backoff (capped,
/// so that a hostile value cannot park a download for a day).
public struct RetryPolicy: Sendable, Hashable {
    /// Retries after the first attempt. Default 5; 0 disables retries.
    public var maxRetries: Int
    /// Delay before the first retry. Default 1 s.
    public var baseDelay: Duration
    /// Upper bound of the backoff. Default 30 s.
    public var maxDelay: Duration
    /// Upper bound for a server's Retry-After. Default 120 s.
    public var maxRetryAfter: Duration

    public init(
        maxRetries: Int = 5,
        baseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(30),
        maxRetryAfter: Duration = .seconds(120)
    ) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The delay before attempt `nextAttempt` (2 for the first retry), or nil when the error
    /// is permanent or the retries are used up. `jitter` is a number in [0, 1).
    func delay(after error: HaulError, nextAttempt: Int, jitter: Double) -> Duration? {
        guard error.isTransient, nextAttempt - 1 <= maxRetries else { return nil }
        if let retryAfter = error.retryAfter {
            return min(max(retryAfter, .zero), maxRetryAfter)
        }
        let exponent = Double(max(0, nextAttempt - 2))
        let backoff = min(baseDelay.inSeconds * pow(2, exponent), maxDelay.inSeconds)
        // "Equal jitter": between half and the whole backoff.
        let jittered = backoff * (0.5 + 0.5 * min(max(jitter, 0), 1))
        return .milliseconds(Int64(jittered * 1000))
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
