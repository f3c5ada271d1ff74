/// Makes guessing the secret slow, as a value type without I/O: it decides when each secret
/// check may run; the caller waits, checks, and reports failures back.
///
/// While nobody has sent a wrong secret, every check runs at once. After a failure, checks are
/// spaced out globally: each takes the next free slot, and slots are `penalty` apart, where the
/// penalty doubles with every failure up to `cap`. Spacing every check (the right secret too)
/// is what bounds guessing: if only wrong answers were slow, an attacker sending many guesses
/// at once would learn a right one fast. A check whose slot is more than `maxWait` away is
/// refused without comparing, so a flood of guesses costs the daemon nothing and cannot make
/// anyone wait longer than that. After `forgiveAfter` without a failure, all is forgotten.
///
/// Requests do not carry a client identity (loopback TCP), so during an attack legitimate TCP
/// clients wait too (at most `maxWait`) or are refused until it stops; unix-socket clients and
/// methods without a secret are never delayed.
package struct SecretThrottle: Sendable {
    package struct Policy: Sendable, Hashable {
        /// Spacing after the first failure. Default 100 ms.
        package var base: Duration
        /// Largest spacing. Default 5 s: at most one guess per 5 s during a sustained attack.
        package var cap: Duration
        /// Longest a check may be made to wait; later ones are refused. Default 30 s.
        package var maxWait: Duration
        /// Quiet time after which failures are forgotten. Default 60 s.
        package var forgiveAfter: Duration

        package init(
            base: Duration = .milliseconds(100), cap: Duration = .seconds(5),
            maxWait: Duration = .seconds(30), forgiveAfter: Duration = .seconds(60)
        ) {
            self.base = base
            self.cap = cap
            self.maxWait = maxWait
            self.forgiveAfter = forgiveAfter
        }
    }

    package enum Admission: Sendable, Hashable {
        /// Compare now.
        case checkNow
        /// Wait until then, then compare.
        case checkAt(ContinuousClock.Instant)
        /// Too many checks are waiting: answer "unauthorized" without comparing.
        case refuse
    }

    package let policy: Policy
    package private(set) var failures = 0
    private var nextSlot: ContinuousClock.Instant?
    private var lastFailure: ContinuousClock.Instant?

    package init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// The spacing between checks now.
    package var penalty: Duration {
        guard failures > 0 else { return .zero }
        var delay = policy.base
        for _ in 1..<min(failures, 64) {
            delay *= 2
            if delay >= policy.cap { return policy.cap }
        }
        return min(delay, policy.cap)
    }

    /// A check wants to run at `now`: when may it?
    package mutating func admit(at now: ContinuousClock.Instant) -> Admission {
        if let last = lastFailure, last.duration(to: now) >= policy.forgiveAfter {
            failures = 0
            nextSlot = nil
            lastFailure = nil
        }
        guard failures > 0 else { return .checkNow }
        let slot = max(now, nextSlot ?? now)
        guard now.duration(to: slot) <= policy.maxWait else { return .refuse }
        nextSlot = slot + penalty
        return slot <= now ? .checkNow : .checkAt(slot)
    }

    /// A check at `now` found the secret wrong.
    package mutating func failed(at now: ContinuousClock.Instant) {
        failures += 1
        lastFailure = now
        nextSlot = max(nextSlot ?? now, now + penalty)
    }
}
