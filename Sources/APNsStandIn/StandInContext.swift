import Hummingbird
import NIOCore

/// A request to the stand-in with the connection it came on: APNs counts a provider's token
/// updates per connection (each of several servers signs its own token, on its own connection).
struct StandInContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's end of the connection (over HTTP/2, the parent of the request's stream).
    let connection: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        let channel = source.channel.parent ?? source.channel
        connection = channel.remoteAddress?.description ?? "unknown"
    }
}
