@testable import Haul
import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

/// Each HTTP/2 connection asks its server to start every stream with a wide flow-control
/// window: with HTTP/2's default of 65,535 bytes, a body of 64 KiB or more waited a round
/// trip for its first window update (bench/compare.sh job (i): 600 files of 64 KiB over a
/// 40 ms link took 3.4 s, curl 1.8 s; 1.9 s with this frame).
@Suite struct HTTP2StreamWindowTests {
    @Test func aNewConnectionAsksForWideStreamWindows() throws {
        let channel = EmbeddedChannel()
        _ = HTTPTransport.widenStreamWindows(on: channel)
        let frame = try #require(try channel.readOutbound(as: HTTP2Frame.self))
        #expect(frame.streamID == .rootStream)
        guard case .settings(.settings(let settings)) = frame.payload else {
            Issue.record("expected a SETTINGS frame, got \(frame.payload)")
            return
        }
        #expect(settings == [HTTP2Setting(parameter: .initialWindowSize, value: 8 * 1024 * 1024)])
        #expect(try channel.readOutbound(as: HTTP2Frame.self) == nil)
        _ = try channel.finish()
    }
}
