import Foundation
@testable import Haul
import Testing

@Suite("Mirror set")
struct MirrorSetTests {
    static let primary = URL(string: "https://origin.example/file.iso")!
    static let mirror = URL(string: "https://mirror.example/pub/file.iso")!
    static let other = URL(string: "http://other.example:8080/file.iso")!

    static func request(_ mirrors: [URL] = [mirror, other], headers: [HeaderField] = []) -> DownloadRequest {
        DownloadRequest(url: primary, directory: URL(fileURLWithPath: "/tmp"), headers: headers, mirrors: mirrors)
    }

    static let refused = HaulError(.connectionFailed, "refused")

    /// The reference (the URI that answered first, at its final URL) comes first, then the other URIs in the request's order.
    @Test func referenceFirstThenTheOthersInOrder() {
        let final = URL(string: "https://cdn.example/x/file.iso")!
        let set = MirrorSet(request: Self.request(), reference: 1, referenceURL: final)
        #expect(set.sources.map(\.uri) == [Self.mirror, Self.primary, Self.other])
        #expect(set.sources.map(\.target) == [final, Self.primary, Self.other])
        #expect(!set.isSingle)
    }

    /// Requests are spread: each new one goes to the usable source with the fewest requests under way.
    @Test func acquireSpreadsOverSources() {
        var set = MirrorSet(request: Self.request(), reference: 0, referenceURL: Self.primary)
        set.use(0)
        let r1 = set.acquire()
        #expect(r1 == 1)
        let r2 = set.acquire()
        #expect(r2 == 2)
        let r3 = set.acquire()
        #expect(r3 == 0)
        set.release(2)
        let r4 = set.acquire()
        #expect(r4 == 2)
    }

    /// A source that fails is asked less than the others, is given up after `maxConsecutiveFailures` failures in a row, and the transfer is told to go on while another is usable.
    @Test func failingSourceIsLeftForTheOthers() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary, maxConsecutiveFailures: 2)
        let first = set.acquire()
        #expect(first == 0)
        set.release(0)
        let r5 = set.failed(0, Self.refused)
        #expect(r5, "the mirror is still there to ask")
        let r6 = set.acquire()
        #expect(r6 == 1, "a tie goes to the one that did not fail")
        set.release(1)
        let r7 = set.failed(0, Self.refused)
        #expect(r7)
        #expect(set.sources[0].standing == .failed(reason: "refused"))
        let r8 = set.acquire()
        #expect(r8 == 1)
        set.release(1)
        let r9 = set.acquire()
        #expect(r9 == 1, "never the failed one again")
        set.release(1)
        let r10 = set.failed(1, Self.refused)
        #expect(r10, "one failure of two: still usable")
        let r11 = set.failed(1, Self.refused)
        #expect(!r11, "every source has failed: no failover")
    }

    /// The download fails only when every source has failed: then no source is given and failover stops.
    @Test func everySourceFailedEndsFailover() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary, maxConsecutiveFailures: 1)
        let r12 = set.failed(0, Self.refused)
        #expect(r12)
        let r13 = set.failed(1, Self.refused)
        #expect(!r13)
        #expect(!set.hasUsable)
        let r14 = set.acquire()
        #expect(r14 == nil)
    }

    /// Bytes from a source clear its failures: a mirror that drops connections mid-body but always brings bytes is never given up.
    @Test func bytesClearFailures() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary, maxConsecutiveFailures: 2)
        let r15 = set.failed(1, Self.refused)
        #expect(r15)
        set.received(1000, from: 1, at: .now)
        let r16 = set.failed(1, Self.refused)
        #expect(r16)
        #expect(set.sources[1].standing == .usable)
        #expect(set.sources[1].receivedBytes == 1000)
    }

    /// At most `maxPerSource` requests go to a source: when every usable one is at its limit, a connection is told it is one too many.
    @Test func requestsPerSourceAreCapped() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary, maxPerSource: 2)
        set.use(0)
        #expect(set.acquire() == 1)
        #expect(set.acquire() == 0)
        #expect(set.acquire() == 1)
        #expect(set.pick() == .busy)
        _ = set.drop(1, reason: "other file")
        set.release(0)
        #expect(set.acquire() == 0)
        #expect(set.pick() == .busy, "the mirror's connections do not move to the reference past its limit")
    }

    /// A failed request makes its source wait before it is asked again: its Retry-After, bounded, else a delay that grows with each failure in a row; bytes from a new request end the waiting.
    @Test func failedSourceWaitsBeforeItIsAskedAgain() {
        var set = MirrorSet(request: Self.request([]), reference: 0, referenceURL: Self.primary, maxConsecutiveFailures: 10)
        let now = ContinuousClock.now
        let first = set.pick(at: now)
        guard case .source(let t1) = first else { Issue.record("\(first)"); return }
        _ = set.failed(0, HaulError(.httpStatus, "busy", httpStatus: 503), serial: t1.serial, at: now)
        set.release(0)
        #expect(set.pick(at: now) == .wait(until: now + MirrorSet.baseBackoff))
        guard case .source(let t2) = set.pick(at: now + MirrorSet.baseBackoff) else { Issue.record("not asked after the wait"); return }
        _ = set.failed(0, HaulError(.httpStatus, "busy", httpStatus: 503), serial: t2.serial, at: now)
        set.release(0)
        #expect(set.pick(at: now) == .wait(until: now + MirrorSet.baseBackoff * 2), "the delay grows")
        guard case .source(let t3) = set.pick(at: now + .seconds(1)) else { Issue.record("not asked after the wait"); return }
        _ = set.failed(0, HaulError(.httpStatus, "slow down", httpStatus: 429, retryAfter: .seconds(3600)), serial: t3.serial, at: now)
        set.release(0)
        #expect(set.pick(at: now) == .wait(until: now + MirrorSet.maxRetryAfter), "Retry-After, bounded")
        guard case .source(let t4) = set.pick(at: now + MirrorSet.maxRetryAfter) else { Issue.record("not asked"); return }
        set.received(10, from: 0, serial: t4.serial, at: now)
        set.release(0)
        #expect(set.pick(at: now) == .source(MirrorSet.Ticket(source: 0, serial: t4.serial + 1)), "bytes end the waiting")
    }

    /// Failures are counted per source honestly: bytes of a request that began before a failure do not clear it, and a 503 or refusal while another request of the source is under way is the source being full, not a failure, so a source that delivers is never given up for it.
    @Test func failuresAreCountedHonestly() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary, maxConsecutiveFailures: 2)
        let now = ContinuousClock.now
        let streaming = set.use(1)
        let second = set.use(1)
        _ = set.failed(1, HaulError(.timeout, "silent"), serial: second.serial, at: now)
        set.release(1)
        set.received(1000, from: 1, serial: streaming.serial, at: now)
        #expect(set.sources[1].consecutiveFailures == 1, "older bytes do not clear a later failure")
        let third = set.use(1)
        _ = set.failed(1, HaulError(.timeout, "silent"), serial: third.serial, at: now)
        set.release(1)
        #expect(set.sources[1].standing != .usable, "two failures in a row")
        set.received(1000, from: 1, serial: set.use(1).serial, at: now)
        #expect(set.sources[1].standing == .usable && set.sources[1].consecutiveFailures == 0, "a new request's bytes prove it works")

        let delivering = set.use(0)
        for _ in 0..<5 {
            let extra = set.use(0)
            _ = set.failed(0, HaulError(.httpStatus, "503", httpStatus: 503), serial: extra.serial, at: now)
            set.release(0)
            set.received(100, from: 0, serial: delivering.serial, at: now)
        }
        #expect(set.sources[0].standing == .usable && set.sources[0].consecutiveFailures == 0, "full, not failed")
        #expect(set.sources[0].notBefore.map { $0 > now } == true, "but it waits before its next extra request")
    }

    /// The URI the validator came from is remembered: restored from the recorded final URL (nil when it is none of the URIs, and then every URI must prove the validator); a resume asks it right after the URI the attempt starts with; in a split it is the authority and the others must prove the same file; with one URI nothing must be proven.
    @Test func validatorSourceIsRememberedAndTrusted() {
        let request = Self.request()
        func restored(_ finalURL: URL?, _ request: DownloadRequest = Self.request()) -> TransferState {
            TransferState(request: request, partKey: "k", validator: .etag("\"x\""), expectedLength: 10, durableOffset: 0, finalURL: finalURL)
        }
        let fromMirror = restored(Self.mirror)
        #expect(fromMirror.validatorSource == 1 && fromMirror.sourceIndex == 1)
        #expect(fromMirror.mustProveSameFile(0) && !fromMirror.mustProveSameFile(1) && fromMirror.mustProveSameFile(2))
        let unknown = restored(URL(string: "https://cdn.example/elsewhere")!)
        #expect(unknown.validatorSource == nil && (0..<3).allSatisfy(unknown.mustProveSameFile))
        let single = restored(nil, Self.request([]))
        #expect(single.validatorSource == 0 && !single.mustProveSameFile(0))
        var fresh = TransferState(request: request, partKey: "k")
        fresh.validatorSource = 2
        fresh.startOver()
        #expect(fresh.validatorSource == nil, "a new start forgets it")

        #expect(MirrorSet.order(count: 3, startingAt: 1, thenAsking: 0) == [1, 0, 2])
        #expect(MirrorSet.order(count: 3, startingAt: 1, thenAsking: 1) == [1, 2, 0])
        #expect(MirrorSet.order(count: 3, startingAt: 1, thenAsking: nil) == [1, 2, 0])
        let set = MirrorSet(request: request, reference: 1, referenceURL: Self.mirror, validatorSource: 2)
        #expect(set.authority == 2 && set.sources[2].uri == Self.other)
        #expect(set.mustProveSameFile(0) && set.mustProveSameFile(1) && !set.mustProveSameFile(2))
        #expect(!MirrorSet(request: Self.request([]), reference: 0, referenceURL: Self.primary).mustProveSameFile(0))
    }

    /// A mirror that serves another file is dropped at once and never chosen again.
    @Test func inconsistentMirrorIsDropped() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary)
        let r17 = set.drop(1, reason: "other validator")
        #expect(r17)
        #expect(set.sources[1].standing == .dropped(reason: "other validator"))
        set.use(0)
        let r18 = set.acquire()
        #expect(r18 == 0)
    }

    /// With one URI nothing changes: a failure does not ask for another request (the transfer keeps its own rules).
    @Test func singleSourceNeverFailsOver() {
        var set = MirrorSet(request: Self.request([]), reference: 0, referenceURL: Self.primary)
        #expect(set.isSingle)
        let r19 = set.failed(0, Self.refused)
        #expect(!r19)
        let r20 = set.drop(0, reason: "x")
        #expect(!r20)
    }

    /// Credentials given for the first URL's server go there only; a mirror's own user info goes to that mirror only, and a redirect elsewhere drops it.
    @Test func credentialsStayWithTheirServer() {
        let withUser = URL(string: "https://bob:secret@mirror.example/pub/file.iso")!
        let request = Self.request(
            [withUser], headers: [HeaderField(name: "Authorization", value: "Bearer origin"), HeaderField(name: "Cookie", value: "c=1"),
                                  HeaderField(name: "X-Trace", value: "t")])
        let toPrimary = MirrorSet.headers(for: Self.primary, target: Self.primary, request: request)
        #expect(toPrimary.map(\.name) == ["Authorization", "Cookie", "X-Trace"])
        let toMirror = MirrorSet.headers(for: withUser, target: withUser, request: request)
        #expect(toMirror.map(\.name) == ["X-Trace", "Authorization"])
        #expect(toMirror.last?.value == "Basic " + Data("bob:secret".utf8).base64EncodedString())
        let redirected = MirrorSet.headers(for: withUser, target: URL(string: "https://cdn.example/f")!, request: request)
        #expect(redirected.map(\.name) == ["X-Trace"])
        let plainMirror = MirrorSet.headers(for: Self.other, target: Self.other, request: request)
        #expect(plainMirror.map(\.name) == ["X-Trace"])
    }

    /// The first request goes round the URIs from the last one that answered; after a server or network failure the next attempt starts with the next URI, after other failures with the same.
    @Test func firstRequestOrderAndNextAfterFailure() {
        #expect(MirrorSet.order(count: 3, startingAt: 1) == [1, 2, 0])
        #expect(MirrorSet.order(count: 1, startingAt: 0) == [0])
        #expect(MirrorSet.next(after: 2, count: 3, error: Self.refused) == 0)
        #expect(MirrorSet.next(after: 0, count: 3, error: HaulError(.httpStatus, "503", httpStatus: 503)) == 1)
        #expect(MirrorSet.next(after: 0, count: 3, error: HaulError(.diskFull, "full")) == 0)
        #expect(MirrorSet.next(after: 0, count: 1, error: Self.refused) == 0)
    }

    /// getServers lists the sources asked in the attempt with their connections and speed over about a second, and 0 once a source has been silent for two; one never asked is not listed.
    @Test func serversInUseWithTheirRates() {
        var set = MirrorSet(request: Self.request([Self.mirror]), reference: 0, referenceURL: Self.primary)
        let start = ContinuousClock.now
        set.use(0)
        set.received(1000, from: 0, at: start)
        set.received(1000, from: 0, at: start + .milliseconds(1000))
        let servers = set.servers(at: start + .milliseconds(1100))
        #expect(servers.map(\.uri) == [Self.primary])
        #expect(servers.first?.bytesPerSecond == 2000)
        #expect(servers.first?.connections == 1)
        #expect(set.servers(at: start + .seconds(4)).first?.bytesPerSecond == 0)
        set.release(0)
        #expect(set.servers(at: start + .milliseconds(1100)).map(\.connections) == [0], "asked, idle now")
    }
}

