import Logging
import NIOCore
import Synchronization

/// At most `limit` open connections from one client address (DESIGN §5): past it, a new
/// connection from that address is closed as it opens, so that one client cannot take the
/// service's connection slots (`maximumHTTPConnections`) from everyone else. Loopback is counted
/// as any address.
final class ConnectionsPerAddress: Sendable {
    let limit: Int
    private let open = Mutex<[String: Int]>([:])
    private let logger: Logger

    init(limit: Int, logger: Logger) {
        precondition(limit > 0, "at least one connection per address")
        self.limit = limit
        self.logger = logger
    }

    /// A handler for one new connection, which counts it while it is open.
    func handler() -> Handler {
        Handler(counter: self)
    }

    /// Counts a connection from `address`; false (and not counted) when the address has `limit` open.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            guard open[address, default: 0] < limit else { return false }
            open[address, default: 0] += 1
            return true
        }
    }

    func release(_ address: String) {
        open.withLock { open in
            let left = open[address, default: 1] - 1
            open[address] = left > 0 ? left : nil
        }
    }

    /// How many connections `address` has open.
    func count(_ address: String) -> Int {
        open.withLock { $0[address, default: 0] }
    }

    final class Handler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny
        let counter: ConnectionsPerAddress
        private let admitted = Mutex<String?>(nil)

        init(counter: ConnectionsPerAddress) {
            self.counter = counter
        }

        func handlerAdded(context: ChannelHandlerContext) {
            guard let address = context.channel.remoteAddress?.ipAddress else { return }
            if counter.admit(address) {
                admitted.withLock { $0 = address }
            } else {
                counter.logger.notice("a client address has the most connections allowed; its new one is closed",
                                      metadata: ["address": "\(address)", "limit": "\(counter.limit)"])
                context.close(promise: nil)
            }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if let address = admitted.withLock({ $0.take() }) { counter.release(address) }
        }
    }
}
