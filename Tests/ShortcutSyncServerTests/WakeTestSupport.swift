import APNsStandIn
import Foundation
import HTTPTypes
import NIOHTTP1
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncApp
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWake

/// What the tests of background wakes share: a service whose waker sends to a stand-in, quickly
/// (a change is a wake 200 ms later, looked for every 100 ms: the suites share one PostgreSQL),
/// and devices with push tokens.
extension TestServer {
    /// The apps the tests' services wake (`--apns-topic`).
    static let wokenTopics: Set<String> = ["com.example.shortcuts", "com.example.soup"]

    /// Points the service's waker at `standIn`, with short delays; `interval` between two wakes.
    static func wakes(_ standIn: APNsStandIn, interval: Duration = .seconds(600),
                      delay: Duration = .milliseconds(200)) -> (inout ServeConfiguration) -> Void {
        { configuration in
            configuration.apns = APNsConfiguration(
                keyPEM: standIn.key.privateKeyPEM, keyID: standIn.key.keyID, teamID: standIn.key.teamID,
                topics: Self.wokenTopics, url: standIn.url, additionalTrustRootsPEM: standIn.authorityPEM)
            configuration.wake.delay = delay
            configuration.wake.pollInterval = .milliseconds(100)
            configuration.wake.retryBackoff = .milliseconds(100)
            configuration.wake.interval = interval
        }
    }

    /// A service with wakes sent to a fresh stand-in; both stopped after `body`, also when it throws.
    static func withWakes(
        interval: Duration = .seconds(600), delay: Duration = .milliseconds(200),
        _ body: (TestServer, APNsStandIn) async throws -> Void
    ) async throws {
        try await APNsStandIn.withStandIn { standIn in
            try await TestServer.with(configure: wakes(standIn, interval: interval, delay: delay)) { server in
                try await body(server, standIn)
            }
        }
    }

    var pushTokens: PushTokenStore { PushTokenStore(client: sql, logger: TestDatabase.shared.logger) }

    /// Registers `token` for `device` (`PUT /v1/device/push-token`); the answer's status and JSON.
    @discardableResult
    func registerPushToken(
        _ token: String, for device: SimulatedDevice, topic: String = "com.example.shortcuts",
        environment: String = "production", service: String = "apns"
    ) async throws -> (status: Int, json: [String: Any]) {
        let body: [String: Any] = ["service": service, "token": token, "topic": topic, "environment": environment]
        return try await raw(.PUT, "/v1/device/push-token", token: device.token,
                             body: Array(try JSONSerialization.data(withJSONObject: body)))
    }

    /// The device's wake state as stored; nil when it has no token.
    func wakeState(of device: SimulatedDevice, account: UUID) async throws -> PushTokenState? {
        try await pushTokens.state(device: device.id, account: account)
    }
}

/// A device token as APNs issues them (32 bytes, in hex), a different one each time.
func apnsToken() -> String {
    (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}

/// A donation, to change an account.
func soupDonation(_ identifier: String) -> EventBody {
    .donation(Donation(bundleId: "com.example.soup", identifier: identifier, kind: .intent, intentType: "OrderSoupIntent",
                       title: "\(identifier) soup"))
}
