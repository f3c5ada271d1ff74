import Hummingbird
import NIOCore

/// Hummingbird's per-request context, plus the connection's channel.
///
/// `BasicRequestContext` does not expose the channel, and dropping a connection after exactly N
/// body bytes needs it (see `ConnectionDropped`), so the test server carries it along.
struct TestServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection this request arrived on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
