import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// Issue 65, item 10: a push-token registration under way while its device is signed out does
/// not leave its row behind. The registration is made to wait after it read the device signed
/// in (another session's uncommitted row of the same device holds its insert), the sign-out
/// runs meanwhile, then that session rolls back and the registration goes on.
@Suite struct PushTokenSignOutRaceTests {
    @Test func aRegistrationUnderWayDuringASignOutLeavesNoToken() async throws {
        try await TestDatabase.withClient { client, url in
            let logger = TestDatabase.shared.logger
            let accounts = AccountStore(client: client, logger: logger)
            let account = try await accounts.createAccount(tokenHash: Array(UUID().uuidString.utf8))
            let device = try await accounts.createDevice(account: account, name: "iPad", platform: "iPadOS", tokenHash: Array(UUID().uuidString.utf8))
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()

            let blocker = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(limits: .command), id: 7, logger: logger)
            defer { Task { try? await blocker.close() } }
            try await blocker.query("BEGIN", logger: logger)
            try await blocker.query("""
                INSERT INTO push_tokens (account_id, device_id, token, topic, environment, registered_at)
                VALUES (\(account), \(device), repeat('ab', 32), 'com.example.a', 'production', now())
                """, logger: logger)
            func waiting() async throws -> Int64 {
                try await client.query("SELECT count(*) FROM pg_locks WHERE NOT granted", logger: logger).decode(Int64.self).collectAll().first ?? 0
            }
            let registration = Task {
                try await PushTokenStore(client: client, logger: logger).register(
                    PushTokenRegistration(token: token, topic: "com.example.a", environment: "production"), device: device, account: account)
            }
            try await eventually("the registration waits on the other session's row") { try await waiting() > 0 }
            let signOut = Task { try await accounts.revokeDevice(device, account: account) }
            // The sign-out either waits for the registration (the head's lock) or is done already.
            try await Task.sleep(for: .milliseconds(500))
            try await blocker.query("ROLLBACK", logger: logger)
            _ = try await registration.value
            #expect(try await signOut.value)
            let left = try await client.query("SELECT count(*) FROM push_tokens WHERE account_id = \(account) AND device_id = \(device)",
                                              logger: logger).decode(Int64.self).collectAll().first
            #expect(left == 0, "the signed-out device's push token outlived its sign-out")
        }
    }
}
