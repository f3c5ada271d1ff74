/// Checks secrets through a `SecretThrottle`: waits for the check's slot (suspended, so the
/// actor and every other request go on meanwhile), compares, and records failures.
actor SecretGate {
    enum Verdict: Sendable, Hashable {
        case accepted
        case rejected
        /// Not compared: too many checks are waiting after recent failures.
        case refused
    }

    /// The clock and the sleep, replaceable so that tests need not wait.
    struct Timing: Sendable {
        var now: @Sendable () -> ContinuousClock.Instant
        var sleep: @Sendable (ContinuousClock.Instant) async -> Void

        static let system = Timing(
            now: { ContinuousClock.now },
            sleep: { deadline in try? await Task.sleep(until: deadline, clock: .continuous) })
    }

    private let secret: RPCSecret
    private var throttle: SecretThrottle
    private let timing: Timing

    init(secret: RPCSecret, policy: SecretThrottle.Policy, timing: Timing = .system) {
        self.secret = secret
        self.throttle = SecretThrottle(policy: policy)
        self.timing = timing
    }

    func verify(_ candidate: String) async -> Verdict {
        switch throttle.admit(at: timing.now()) {
        case .refuse:
            return .refused
        case .checkAt(let slot):
            await timing.sleep(slot)
        case .checkNow:
            break
        }
        if secret.matches(candidate) { return .accepted }
        throttle.failed(at: timing.now())
        return .rejected
    }

    var failures: Int { throttle.failures }
}
