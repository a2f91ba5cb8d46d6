import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Testing

/// The wakers' queue in `push_tokens` (DESIGN §6), against a real PostgreSQL: a wake is
/// scheduled only for devices behind, claimed by exactly one of many concurrent wakers, put off
/// by the rate limit, put back by a retry, and a token is dropped only as APNs' answer allows.
@Suite struct WakeQueueTests {
    /// `count` accounts with one device each, a push token each, at account version 1.
    static func devices(_ count: Int, client: PostgresClient) async throws -> [(account: UUID, device: UUID)] {
        let accounts = AccountStore(client: client, logger: TestDatabase.shared.logger)
        let tokens = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
        var devices: [(UUID, UUID)] = []
        for _ in 0..<count {
            let account = try await accounts.createAccount(tokenHash: Array(UUID().uuidString.utf8))
            let device = try await accounts.createDevice(account: account, name: "iPad", platform: "iPadOS", tokenHash: Array(UUID().uuidString.utf8))
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            #expect(try await tokens.register(PushTokenRegistration(token: token, topic: "com.example.a", environment: "production"),
                                              device: device, account: account))
            // As a push would: the account moves to version 1.
            try await client.query("UPDATE account_heads SET version = 1, folded_version = 1 WHERE account_id = \(account)")
            devices.append((account, device))
        }
        return devices
    }

    @Test func eachDueWakeIsClaimedByExactlyOneOfManyWakers() async throws {
        try await TestDatabase.withClient(maximumConnections: 12) { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            let devices = try await Self.devices(60, client: client)
            for (account, _) in devices { try await store.scheduleWakes(account: account, version: 1, delay: .zero) }
            // Eight wakers claim a few at a time, at once, until none is left.
            let claimed = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        var mine: [UUID] = []
                        while true {
                            let wakes = try await store.claimDue(limit: 3, interval: .seconds(1200))
                            if wakes.isEmpty { return mine }
                            mine += wakes.map(\.device)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == devices.count, "every wake claimed once, none twice")
            #expect(Set(claimed) == Set(devices.map(\.device)))
        }
    }

    /// A change while a wake is under way (claimed, not yet answered by APNs) finds the claim's
    /// lease as the device's due time, so its notice schedules nothing: the answer leaves the
    /// wake due, and the next claim puts it off to the interval's end. Before, the answer cleared
    /// the due time and the change's wake waited for the sweep (WakeTests lost it so once).
    @Test func aChangeWhileAWakeIsUnderWayGetsAWakeOfItsOwn() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            for answer in ["delivered", "gave up"] {
                let (account, device) = try await Self.devices(1, client: client)[0]
                try await store.scheduleWakes(account: account, version: 1, delay: .zero)
                let claimed = try await store.claimDue(limit: 10, interval: .seconds(2))
                #expect(claimed.map(\.device) == [device])
                // Version 2 while APNs is asked: its notice sees a wake due (the lease) and leaves it.
                try await client.query("UPDATE account_heads SET version = 2, folded_version = 2 WHERE account_id = \(account)")
                try await store.scheduleWakes(account: account, version: 2, delay: .zero)
                if answer == "delivered" { try await store.delivered(claimed[0]) } else { try await store.gaveUp(claimed[0]) }
                let state = try #require(try await store.state(device: device, account: account))
                #expect(state.dueAt != nil, "\(answer): version 2's wake is still due")
                #expect(state.wokenVersion == 1)
                // Without a change meanwhile, nothing is due after the answer.
                try await client.query("UPDATE push_tokens SET due_at = NULL, woken_version = 0, pulled_version = 0, last_wake_at = NULL WHERE account_id = \(account)")
                try await store.scheduleWakes(account: account, version: 2, delay: .zero)
                let again = try await store.claimDue(limit: 10, interval: .seconds(2))
                #expect(again.map(\.device) == [device])
                if answer == "delivered" { try await store.delivered(again[0]) } else { try await store.gaveUp(again[0]) }
                #expect(try await store.state(device: device, account: account)?.dueAt == nil, "\(answer): nothing more is due")
            }
        }
    }

    @Test func onlyDevicesBehindAreScheduledAndAWakeIsPutOffByTheInterval() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            let devices = try await Self.devices(2, client: client)
            let (account, device) = devices[0]
            // The second device pulled version 1: it is not behind, and gets nothing.
            try await DeviceSyncStore(client: client, logger: TestDatabase.shared.logger).recordPull(device: devices[1].device, account: devices[1].account, version: 1, complete: true)
            try await store.scheduleWakes(account: devices[1].account, version: 1, delay: .zero)
            #expect(try await store.state(device: devices[1].device, account: devices[1].account)?.dueAt == nil)

            try await store.scheduleWakes(account: account, version: 1, delay: .zero)
            let first = try await store.claimDue(limit: 10, interval: .seconds(1200))
            #expect(first.map(\.device) == [device])
            try await store.delivered(first[0])
            // Woken for version 1: another notice of version 1 schedules nothing.
            try await store.scheduleWakes(account: account, version: 1, delay: .zero)
            #expect(try await store.state(device: device, account: account)?.dueAt == nil)
            // Version 2 within the interval: claimed, and put off to the interval's end.
            try await client.query("UPDATE account_heads SET version = 2, folded_version = 2 WHERE account_id = \(account)")
            try await store.scheduleWakes(account: account, version: 2, delay: .zero)
            #expect(try await store.claimDue(limit: 10, interval: .seconds(1200)).isEmpty)
            let state = try #require(try await store.state(device: device, account: account))
            let lastWake = try #require(state.lastWakeAt)
            let due = try #require(state.dueAt)
            #expect(abs(due.timeIntervalSince(lastWake) - 1200) < 0.01)
            #expect(state.wokenVersion == 1)
            #expect(state.wakeCount == 1)
        }
    }

    @Test func aRetryPutsTheWakeOffAndCountsItsFailure() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            let (account, device) = try await Self.devices(1, client: client)[0]
            try await store.scheduleWakes(account: account, version: 1, delay: .zero)
            let wake = try #require(try await store.claimDue(limit: 1, interval: .seconds(1200)).first)
            #expect(wake.version == 1)
            #expect(try await store.retryLater(wake, backoff: .zero) == 1)
            let state = try #require(try await store.state(device: device, account: account))
            #expect(state.lastWakeAt == nil, "the rate limit counts from the last wake APNs took, not from a refused one")
            #expect(state.wokenVersion == 0)
            // Due again at once (no backoff here), with its failure counted.
            let again = try #require(try await store.claimDue(limit: 1, interval: .seconds(1200)).first)
            #expect(again.failures == 1)
        }
    }

    /// A waker that claimed a wake and stopped (or died) before APNs answered: when its lease
    /// ends, another waker takes the wake; until then, none does.
    @Test func aClaimedWakeWhoseWakerStoppedIsTakenAgainAfterItsLease() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            let (account, device) = try await Self.devices(1, client: client)[0]
            try await store.scheduleWakes(account: account, version: 1, delay: .zero)
            let claimed = try await store.claimDue(limit: 1, interval: .seconds(1200), lease: .seconds(600))
            #expect(claimed.map(\.device) == [device])
            #expect(try await store.claimDue(limit: 1, interval: .seconds(1200)).isEmpty, "leased: no other waker takes it")
            // The lease ends (as if 600 s had passed).
            try await client.query("UPDATE push_tokens SET due_at = now() WHERE account_id = \(account) AND device_id = \(device)")
            let again = try await store.claimDue(limit: 1, interval: .seconds(1200))
            #expect(again.map(\.device) == [device])
            try await store.delivered(again[0])
            let state = try #require(try await store.state(device: device, account: account))
            #expect(state.dueAt == nil && state.wakeCount == 1 && state.wokenVersion == 1)
        }
    }

    @Test func anUnregisteredTokenIsDroppedOnlyIfNotRegisteredSince() async throws {
        try await TestDatabase.withClient { client, _ in
            let store = PushTokenStore(client: client, logger: TestDatabase.shared.logger)
            let (account, device) = try await Self.devices(1, client: client)[0]
            try await store.scheduleWakes(account: account, version: 1, delay: .zero)
            let wake = try #require(try await store.claimDue(limit: 1, interval: .seconds(1200)).first)
            #expect(try await store.drop(wake, unregisteredAt: wake.registeredAt - 60) == false)
            // Another token registered meanwhile is not dropped for the old one's answer.
            var other = wake
            other.registration.token = String(repeating: "0", count: 64)
            #expect(try await store.drop(other) == false)
            #expect(try await store.drop(wake, unregisteredAt: wake.registeredAt + 60))
            #expect(try await store.state(device: device, account: account) == nil)
        }
    }
}
