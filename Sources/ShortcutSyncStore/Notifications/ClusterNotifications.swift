import Foundation
import Logging
import Synchronization

/// The notifications of every node of a Citus cluster as one sequence of events (issue 57).
///
/// `NOTIFY` is heard only by the sessions of the node that ran it, and a server or an operator
/// may run a push, a sign-out, a rotation or an erasure on any node: so a server listens on each
/// one, a `NotificationSource` per node, each reconnecting on its own. The node its pool talks to
/// (`attached`) is the database as far as its requests go: its connection's news (`connected`,
/// `unreachable`, `listening`) pass as they are. Of the other nodes only the notifications pass,
/// and a `LISTEN` that comes back after it was lost (`listening(resumed: true)`: whatever that
/// node notified meanwhile was missed, and whoever waits should look again); that a node's
/// `LISTEN` failed is logged by its source, naming the node, and the nodes whose `LISTEN` is not
/// in place are `nodesNotListening` (on `/readyz`).
public final class ClusterNotifications: NotificationEvents {
    /// A node and the source that listens on it.
    public struct Node: Sendable {
        public var name: String
        public var source: NotificationSource

        public init(name: String, source: NotificationSource) {
            self.name = name
            self.source = source
        }
    }

    public let attached: Node
    public let others: [Node]
    private let logger: Logger
    /// The nodes whose `LISTEN` is not in place now (every one until its first is).
    private let notListening: Mutex<Set<String>>
    private let observers = Mutex<[@Sendable (String, Bool) -> Void]>([])

    public init(attached: Node, others: [Node], logger: Logger) {
        self.attached = attached
        self.others = others
        self.logger = logger
        notListening = Mutex(Set([attached.name] + others.map(\.name)))
    }

    /// Every node this listens on, the attached one first.
    public var nodeNames: [String] { [attached.name] + others.map(\.name) }

    public var nodesNotListening: [String] {
        let names = notListening.withLock { $0 }
        return nodeNames.filter(names.contains)
    }

    public func withEvents<Result>(_ body: (NotificationSource.Events) async throws -> Result) async throws -> Result {
        let (events, continuation) = NotificationSource.Events.makeStream()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [attached] in
                try await attached.source.withEvents { events in
                    for await event in events {
                        self.track(event, of: attached.name)
                        continuation.yield(event)
                    }
                }
            }
            for node in others {
                group.addTask {
                    try await node.source.withEvents { events in
                        for await event in events {
                            self.track(event, of: node.name)
                            if let passed = self.passed(event, of: node.name) { continuation.yield(passed) }
                        }
                    }
                }
            }
            defer {
                group.cancelAll()
                continuation.finish()
            }
            return try await body(events)
        }
    }

    /// What another node's event is to the listeners: its notifications, and a lost `LISTEN`
    /// resumed; its connection's news are the attached node's to give.
    private func passed(_ event: NotificationSource.Event, of node: String) -> NotificationSource.Event? {
        switch event {
        case .connected, .unreachable, .silent:
            return nil
        case .listening(let resumed):
            guard resumed else { return nil }
            logger.notice("listening again on a node of the cluster: whatever it notified meanwhile was missed",
                          metadata: ["node": "\(node)"])
            return event
        case .projection, .deviceSignedOut, .accountErased, .accountTokenRotated, .adminTokenRotated:
            return event
        }
    }

    /// Tells `observer` each time a node's `LISTEN` comes into place (`true`) or is lost
    /// (`false`): what `AccountRouter` reads as a worker back or away. A node not listened to yet
    /// is not told as lost.
    public func observeNodes(_ observer: @escaping @Sendable (_ node: String, _ listening: Bool) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Keeps whether `node`'s `LISTEN` is in place, and tells the observers when that changes.
    private func track(_ event: NotificationSource.Event, of node: String) {
        let listening: Bool
        switch event {
        case .connected, .unreachable, .silent:
            guard notListening.withLock({ $0.insert(node).inserted }) else { return }
            listening = false
        case .listening:
            guard notListening.withLock({ $0.remove(node) != nil }) else { return }
            listening = true
        case .projection, .deviceSignedOut, .accountErased, .accountTokenRotated, .adminTokenRotated:
            return
        }
        for observer in observers.withLock({ $0 }) { observer(node, listening) }
    }
}
