import ArgumentParser
import Foundation
import Haul

/// How `haul get` retries and waits: a few quick retries by default, then failure (a script
/// learns about a dead server at once); `--max-tries 0` or `--retry-until` to wait for a server
/// or network that went away instead, as aria2's `--max-tries=0` does.
struct RetryOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Quick retries after transient failures (connection refused or lost, DNS, timeout, 408, 429, 5xx); default 5.",
        valueName: "n"))
    var retries: Int?

    @Option(name: .customLong("max-tries"), help: ArgumentHelp(
        "Attempts in all, as in aria2; 0 = unlimited: after the quick retries, wait for the server (backoff up to 60 s) until --retry-until, or for ever.",
        valueName: "n"))
    var maxTries: Int?

    @Option(name: .customLong("retry-until"), help: ArgumentHelp(
        "After the quick retries, keep waiting for the server this long from now, e.g. 90s, 30m, 2h, 7d; then fail.",
        valueName: "duration"))
    var retryUntil: String?

    @Option(name: .customLong("retry-wait"), help: ArgumentHelp(
        "Seconds before the first retry; later ones back off exponentially (default 1).", valueName: "seconds"))
    var retryWait: Double?

    func validate() throws {
        if let retries, retries < 0 { throw ValidationError("--retries must not be negative") }
        if let maxTries, maxTries < 0 { throw ValidationError("--max-tries must be 0 (unlimited) or more") }
        if retries != nil, let maxTries, maxTries > 0 {
            throw ValidationError("--retries and --max-tries N say the same thing; give one (--max-tries 0 with --retries is fine)")
        }
        if let maxTries, maxTries > 0, retryUntil != nil {
            throw ValidationError("--retry-until waits after the quick retries; it cannot be combined with --max-tries \(maxTries)")
        }
        if let retryUntil, Self.duration(retryUntil) == nil {
            throw ValidationError("--retry-until must be a duration such as 90s, 30m, 2h or 7d, got '\(retryUntil)'")
        }
        if let retryWait, !(retryWait > 0 && retryWait <= 3600) {
            throw ValidationError("--retry-wait must be a number of seconds above 0 (at most 3600), got \(retryWait)")
        }
    }

    /// The policy these options describe, with deadlines counted from `now`.
    func policy(now: Date = Date()) -> RetryPolicy {
        var policy = RetryPolicy()
        if let retries { policy.maxRetries = retries }
        if let maxTries, maxTries > 0 { policy.maxRetries = maxTries - 1 }
        if let retryWait { policy.baseDelay = .milliseconds(Int64((retryWait * 1000).rounded(.up))) }
        if let limit = retryUntil.flatMap(Self.duration) {
            policy.waitDeadline = now.addingTimeInterval(limit.inSeconds)
        } else if maxTries == 0 {
            policy.waitDeadline = .distantFuture
        }
        return policy
    }

    /// `90`, `90s`, `30m`, `2h`, `7d` (decimals allowed), as a duration; nil when unparsable,
    /// not above 0, or over 10 years.
    static func duration(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, seconds: Double)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]
        var number = Substring(trimmed)
        var scale = 1.0
        if let unit = units.first(where: { trimmed.hasSuffix($0.suffix) }) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.seconds
        }
        guard let value = Double(number), value.isFinite, value > 0 else { return nil }
        let seconds = value * scale
        guard seconds <= 10 * 365 * 86_400 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}
