@testable import Haul
import Testing

@Suite("Connection silence")
struct ConnectionSilenceTests {
    /// Of the candidates, the one silent longest past the limit is picked; one heard recently, or never heard of, is not.
    @Test func picksTheLongestSilentPastTheLimit() {
        let start = ContinuousClock.now
        var silence = ConnectionSilence()
        silence.heard(0, at: start)
        silence.heard(1, at: start + .seconds(1))
        silence.heard(2, at: start + .seconds(9))
        let now = start + .seconds(10)
        #expect(silence.longestSilent(among: [1, 2, 3], longerThan: .seconds(5), now: now) == 1)
        #expect(silence.longestSilent(among: [0, 1, 2], longerThan: .seconds(5), now: now) == 0)
        #expect(silence.longestSilent(among: [2, 3], longerThan: .seconds(5), now: now) == nil)
        #expect(silence.longestSilent(among: [0, 1], longerThan: .seconds(20), now: now) == nil)
    }

    /// A connection holding its reads back is never silent, and its silence counts again from the end of the hold.
    @Test func holdsAreNotSilence() {
        let start = ContinuousClock.now
        var silence = ConnectionSilence()
        silence.heard(0, at: start)
        silence.hold(0)
        silence.hold(0)
        #expect(silence.longestSilent(among: [0], longerThan: .seconds(1), now: start + .seconds(10)) == nil)
        silence.endHold(0, at: start + .seconds(10))
        #expect(silence.longestSilent(among: [0], longerThan: .seconds(1), now: start + .seconds(20)) == nil, "one hold is still on")
        silence.endHold(0, at: start + .seconds(20))
        #expect(silence.longestSilent(among: [0], longerThan: .seconds(1), now: start + .seconds(20.5)) == nil)
        #expect(silence.longestSilent(among: [0], longerThan: .seconds(1), now: start + .seconds(22)) == 0)
    }
}
