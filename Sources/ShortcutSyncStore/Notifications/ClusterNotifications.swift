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
/// in place are `nodesNotListening` (on `/readyz`). The nodes are read again now and then
/// (`Discovery`): a worker added later is listened to, one removed no longer.
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

    /// How the cluster's nodes are read again while the service runs: a worker added later is
    /// listened to (what it notified before is missed: it counts as a `LISTEN` resumed), and a
    /// node removed is no longer (issue 65, item 9).
    public struct Discovery: Sendable {
        public var interval: Duration
        /// The cluster's nodes now, each with a source to listen on it (only the new ones' are used).
        public var nodes: @Sendable () async throws -> [Node]

        public init(interval: Duration = .seconds(30), nodes: @escaping @Sendable () async throws -> [Node]) {
            self.interval = interval
            self.nodes = nodes
        }
    }

    public let attached: Node
    private let firstOthers: [Node]
    private let discovery: Discovery?
    private let logger: Logger
    /// The other nodes listened on now, in the order they were found.
    private let others: Mutex<[String]>
    /// The nodes whose `LISTEN` is not in place now (every one until its first is).
    private let notListening: Mutex<Set<String>>
    private let observers = Mutex<[@Sendable (String, Bool) -> Void]>([])

    public init(attached: Node, others: [Node], discovery: Discovery? = nil, logger: Logger) {
        self.attached = attached
        self.firstOthers = others
        self.discovery = discovery
        self.logger = logger
        self.others = Mutex(others.map(\.name))
        notListening = Mutex(Set([attached.name] + others.map(\.name)))
    }

    /// Every node this listens on, the attached one first.
    public var nodeNames: [String] { [attached.name] + others.withLock { $0 } }

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
            group.addTask { [firstOthers, discovery] in
                try await withThrowingDiscardingTaskGroup { nodes in
                    for node in firstOthers {
                        nodes.addTask { try await self.listen(on: node, foundLater: false, continuation) }
                    }
                    guard let discovery else { return }
                    while !Task.isCancelled {
                        try await Task.sleep(for: discovery.interval)
                        for node in await self.rediscover(discovery) {
                            nodes.addTask { try await self.listen(on: node, foundLater: true, continuation) }
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

    /// Listens on another node until it is removed from the cluster (or the listening ends).
    private func listen(on node: Node, foundLater: Bool, _ continuation: NotificationSource.Events.Continuation) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await node.source.withEvents { events in
                    var first = foundLater
                    for await event in events {
                        self.track(event, of: node.name)
                        // A node found later may have notified before it was listened to.
                        if first, case .listening(resumed: false) = event {
                            first = false
                            if let passed = self.passed(.listening(resumed: true), of: node.name) { continuation.yield(passed) }
                            continue
                        }
                        if let passed = self.passed(event, of: node.name) { continuation.yield(passed) }
                    }
                }
            }
            group.addTask {
                while self.others.withLock({ $0.contains(node.name) }) { try await Task.sleep(for: .milliseconds(200)) }
            }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    /// Reads the cluster's nodes again: keeps the ones removed from being listened to, and
    /// returns the new ones. A reading that fails changes nothing (it is tried again).
    private func rediscover(_ discovery: Discovery) async -> [Node] {
        let nodes: [Node]
        do {
            nodes = try await discovery.nodes().filter { $0.name != attached.name }
        } catch {
            logger.log(level: .warning, "could not read the cluster's nodes again", error: error)
            return []
        }
        let names = Set(nodes.map(\.name))
        let (added, removed) = others.withLock { others -> ([Node], [String]) in
            let removed = others.filter { !names.contains($0) }
            let added = nodes.filter { !others.contains($0.name) }
            others = others.filter(names.contains) + added.map(\.name)
            return (added, removed)
        }
        notListening.withLock { notListening in
            for name in removed { notListening.remove(name) }
            for node in added { notListening.insert(node.name) }
        }
        for name in removed { logger.notice("a node left the cluster: no longer listened to", metadata: ["node": "\(name)"]) }
        for node in added { logger.notice("a node joined the cluster: listened to", metadata: ["node": "\(node.name)"]) }
        return added
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
