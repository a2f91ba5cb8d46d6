import Foundation
import ShortcutSyncDomain

extension ShortcutSyncClient {
    /// The APNs environments a token belongs to.
    public enum PushEnvironment: String, Sendable {
        case production, development
    }

    /// Registers the device's APNs token, as the app received it in
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`: the service then
    /// wakes this device with a background notification when another device changes something
    /// while this one sleeps (DESIGN §6). Register it again whenever the app gets it (it can
    /// change); `topic` is the app's bundle id.
    public func registerPushToken(_ deviceToken: Data, topic: String, environment: PushEnvironment) async throws {
        let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
        try await registerPushToken(hex: hex, topic: topic, environment: environment)
    }

    /// The same, with the token already in hex.
    public func registerPushToken(hex: String, topic: String, environment: PushEnvironment) async throws {
        try await transport.registerPushToken(hex, topic: topic, environment: environment.rawValue)
    }

    /// No more background wakes for this device (the app turned them off).
    public func unregisterPushToken() async throws {
        try await transport.deletePushToken()
    }

    /// What the app calls from `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
    /// when a background wake arrives: pushes what waits, pulls what changed; true when the view
    /// changed (the app then answers `.newData`, else `.noData`; a throw is `.failed`).
    public func handleBackgroundNotification() async throws -> Bool {
        let before = currentView
        try await sync()
        return currentView != before
    }
}
