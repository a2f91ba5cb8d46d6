import Foundation

/// The database's notifications as a sequence of events (`NotificationSource.Event`), however
/// they are listened to: what the stream hub and the waker read.
public protocol NotificationEvents: Sendable {
    /// Runs `body` with the events for as long as it runs; see `NotificationSource.withEvents`.
    func withEvents<Result>(_ body: (NotificationSource.Events) async throws -> Result) async throws -> Result
}

extension NotificationSource: NotificationEvents {}
