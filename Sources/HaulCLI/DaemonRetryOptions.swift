import ArgumentParser
import Haul

/// How `haul daemon` retries and waits. Its downloads outlive the clients that asked for
/// them, so by default a server or network that is gone is waited for, up to 7 days from when
/// a download was added (`RetryPolicy.background`, URLSession's resource timeout).
struct DaemonRetryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Quick retries after a transient failure, before waiting (default 5).", valueName: "n"))
    var retries: Int?

    @Option(name: .customLong("retry-wait"), help: ArgumentHelp(
        "Seconds before the first retry; later ones back off exponentially, up to 60 s while waiting (default 1).",
        valueName: "seconds"))
    var retryWait: Double?

    @Option(name: .customLong("resource-timeout"), help: ArgumentHelp(
        "How long after it was added a download may wait for its server, e.g. 12h, 7d (default 7d); 0 = never wait.",
        valueName: "duration"))
    var resourceTimeout: String?

    func validate() throws {
        if let retries, retries < 0 { throw ValidationError("--retries must not be negative") }
        if let retryWait, !(retryWait > 0 && retryWait <= 3600) {
            throw ValidationError("--retry-wait must be a number of seconds above 0 (at most 3600), got \(retryWait)")
        }
        if let resourceTimeout, resourceTimeout != "0", RetryOptions.duration(resourceTimeout) == nil {
            throw ValidationError("--resource-timeout must be a duration such as 12h or 7d (0 for none), got '\(resourceTimeout)'")
        }
    }

    var policy: RetryPolicy {
        var policy = RetryPolicy.background
        if let retries { policy.maxRetries = retries }
        if let retryWait { policy.baseDelay = .milliseconds(Int64((retryWait * 1000).rounded(.up))) }
        if let resourceTimeout {
            policy.waitLimit = resourceTimeout == "0" ? nil : RetryOptions.duration(resourceTimeout)
        }
        return policy
    }
}
