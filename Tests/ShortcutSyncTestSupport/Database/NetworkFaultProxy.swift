import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on loopback between a service and its PostgreSQL that fails as networks do
/// (issue 64): as a black hole — every open connection silent, no answer, no FIN, no RST, and new
/// ones accepted but never forwarded — until `restore`, after which new connections are forwarded
/// again while the old ones stay silent for good, as after a failover behind a cloud endpoint or a
/// dropped NAT entry; or slow, every chunk held `latency` each way.
///
/// A silent connection's bytes are read and dropped, so its sender never learns anything from
/// TCP either, and its closing is not passed on: the server keeps the session of a connection the
/// service gave up, as it would behind a real black hole, until its own timeouts end it.
public final class NetworkFaultProxy: Sendable {
    private struct State {
        var silent = false
        /// Connections numbered up to this one are silent for good.
        var silentThrough = 0
        var nextID = 0
        var latency: Duration = .zero
        var channels: [any Channel] = []
        var upstreamPort: Int
    }

    private let state: Mutex<State>
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    private let upstreamHost: String
    /// The port it listens on, at 127.0.0.1.
    public let port: Int

    /// Listens on a free loopback port and forwards to `host:port`.
    public init(forwardingTo host: String = "127.0.0.1", port upstreamPort: Int) async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        upstreamHost = host
        state = Mutex(State(upstreamPort: upstreamPort))
        let box = ProxyBox()
        listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: true)
            .childChannelInitializer { channel in
                box.proxy.map { $0.accepted(channel) } ?? channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = listener.localAddress?.port ?? 0
        box.proxy = self
    }

    /// Every open connection goes silent, and so does every new one until `restore`.
    public func blackHole() {
        state.withLock { state in
            state.silent = true
            state.silentThrough = state.nextID
        }
    }

    /// New connections are forwarded again; those opened before stay silent.
    public func restore() {
        state.withLock { state in
            state.silentThrough = state.nextID
            state.silent = false
        }
    }

    /// New connections go to `port` from now on, as a cloud endpoint or a moved address sends
    /// them to a promoted standby.
    public func forward(toPort port: Int) {
        state.withLock { $0.upstreamPort = port }
    }

    /// Every chunk is held `latency` before it is passed on, each way.
    public func setLatency(_ latency: Duration) {
        state.withLock { $0.latency = latency }
    }

    /// Closes every connection and the listener.
    public func stop() async {
        let channels = state.withLock { state in
            defer { state.channels.removeAll() }
            return state.channels
        }
        for channel in channels { try? await channel.close() }
        try? await listener.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func isSilent(_ id: Int) -> Bool {
        state.withLock { $0.silent || id <= $0.silentThrough }
    }

    fileprivate var latency: Duration { state.withLock { $0.latency } }

    private func accepted(_ client: any Channel) -> EventLoopFuture<Void> {
        let (id, silentNow, upstreamPort) = state.withLock { state -> (Int, Bool, Int) in
            state.nextID += 1
            state.channels.append(client)
            return (state.nextID, state.silent, state.upstreamPort)
        }
        let toServer = Relay(proxy: self, id: id)
        do {
            try client.pipeline.syncOperations.addHandler(toServer)
        } catch {
            return client.eventLoop.makeFailedFuture(error)
        }
        // Accepted, never forwarded: a connect into the black hole waits for its own timeout.
        guard !silentNow else { return client.eventLoop.makeSucceededVoidFuture() }
        let toClient = Relay(proxy: self, id: id)
        ClientBootstrap(group: client.eventLoop)
            .channelInitializer { server in
                server.eventLoop.makeCompletedFuture { try server.pipeline.syncOperations.addHandler(toClient) }
            }
            .connect(host: upstreamHost, port: upstreamPort)
            .whenComplete { [self] result in
                switch result {
                case .success(let server):
                    state.withLock { $0.channels.append(server) }
                    toServer.partner = server
                    toClient.partner = client
                    toServer.flushPending()
                case .failure:
                    client.close(promise: nil)
                }
            }
        return client.eventLoop.makeSucceededVoidFuture()
    }
}

/// Hands the proxy to the child channels' initializer, which is made before the proxy is whole.
private final class ProxyBox: @unchecked Sendable {
    // Written once, before the first connection can be accepted.
    var proxy: NetworkFaultProxy?
}

/// One direction of one proxied connection: what it reads, its partner writes, unless the
/// connection is silent.
private final class Relay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    // Touched on the connection's event loop only (both channels share it).
    let proxy: NetworkFaultProxy
    let id: Int
    var partner: (any Channel)?
    private var pending: [ByteBuffer] = []

    init(proxy: NetworkFaultProxy, id: Int) {
        self.proxy = proxy
        self.id = id
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard !proxy.isSilent(id) else { return }
        guard let partner else {
            pending.append(buffer)
            return
        }
        forward(buffer, to: partner, on: context.eventLoop)
    }

    func flushPending() {
        guard let partner else { return }
        for buffer in pending { forward(buffer, to: partner, on: partner.eventLoop) }
        pending.removeAll()
    }

    private func forward(_ buffer: ByteBuffer, to partner: any Channel, on loop: any EventLoop) {
        let latency = proxy.latency
        guard latency > .zero else {
            partner.writeAndFlush(buffer, promise: nil)
            return
        }
        let proxy = proxy, id = id
        loop.scheduleTask(in: .nanoseconds(Int64(latency.components.seconds) * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)) {
            guard !proxy.isSilent(id) else { return }
            partner.writeAndFlush(buffer, promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A black hole passes no FIN on.
        if !proxy.isSilent(id) { partner?.close(promise: nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
