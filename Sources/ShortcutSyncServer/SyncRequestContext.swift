import Hummingbird
import NIOCore

/// The request context of the service: Hummingbird's basics plus the connection's channel, so
/// that a request whose body does not arrive in time can have its connection closed.
public struct SyncRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
