import Foundation

/// The database's notifications as a sequence of events (`NotificationSource.Event`), however
/// they are listened to: what the stream hub and the waker read.
public protocol NotificationEvents: Sendable {
    /// Runs `body` with the events for as long as it runs; see `NotificationSource.withEvents`.
    func withEvents<Result>(_ body: (NotificationSource.Events) async throws -> Result) async throws -> Result

    /// On a Citus cluster, the nodes (`host:port`) whose `LISTEN` is not in place now: what they
    /// notify is not heard until it is back (`ClusterNotifications`). Empty on one node.
    var nodesNotListening: [String] { get }
}

extension NotificationEvents {
    public var nodesNotListening: [String] { [] }
}

extension NotificationSource: NotificationEvents {}
