import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// Issue 65, item 10: the learning rules' list of signed-out devices grew with every device an
/// account ever signed out. A compaction forgets those signed out at or below its horizon (their
/// donations counted, as teaching nothing, in the snapshot; a sign-out is its device's last
/// event), and keeps those signed out after it; what the account learned does not change, and a
/// rebuild from the snapshot equals the live rows.
@Suite struct CompactedSignOutTests {
    @Test func aCompactionForgetsTheDevicesSignedOutBehindItsHorizon() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account)
            var old = (0..<3).map { _ in DeviceScript(account: account) }
            var late = DeviceScript(account: account)
            try await register([phone, late] + old, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            let base: Int64 = 1_764_000_000_000

            // Three devices donate, then are signed out; the phone and a fourth device donate.
            for index in old.indices {
                let events = (0..<4).map { old[index].donate("soup-\($0)", at: base + Int64(index * 10 + $0)) }
                _ = try await store.append(events.map(\.event), account: account, device: old[index].deviceId)
                #expect(try await store.signOut(device: old[index].deviceId, account: account, wallMillis: base + 100 + Int64(index)))
            }
            for index in 0..<4 {
                _ = try await store.append([phone.donate("soup-\(index)", at: base + 200 + Int64(index))].map(\.event),
                                           account: account, device: phone.deviceId)
            }
            let horizon = try await client.query("SELECT version FROM account_heads WHERE account_id = \(account)", logger: logger)
                .decode(Int64.self).collectAll().first ?? 0
            // After the horizon: the fourth device donates and is signed out.
            _ = try await store.append([late.donate("soup-0", at: base + 300)].map(\.event), account: account, device: late.deviceId)
            #expect(try await store.signOut(device: late.deviceId, account: account, wallMillis: base + 301))
            _ = try await store.append([phone.donate("soup-1", at: base + 400)].map(\.event), account: account, device: phone.deviceId)

            let before = try await projections.learningRules(account: account)
            #expect(before.signedOut == Set(old.map(\.deviceId) + [late.deviceId]))
            let learned = try await projections.allHabits(account: account)
            let views = try await projections.fullViews(account: account, devices: [phone.deviceId])

            let compaction = try await projections.compact(account: account, through: horizon)
            #expect(compaction.outcome == .compacted && compaction.horizonVersion == horizon, "\(compaction)")
            let after = try await projections.learningRules(account: account)
            #expect(after.signedOut == [late.deviceId], "the devices signed out behind the horizon are forgotten, the later one kept")
            #expect(try await projections.allHabits(account: account).map(\.habits) == learned.map(\.habits))
            #expect(try await projections.fullViews(account: account, devices: [phone.deviceId]) == views)

            // The snapshot's rules say the same: a rebuild from it equals the live rows.
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.differences.isEmpty, "\(verified.differences.prefix(3))")
        }
    }
}
