import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// A migration's refold (`refold_pending`) of a compacted account starts from its snapshot and
/// folds the events after its horizon (issue 58): folded from its first event left, the events
/// kept below the horizon, it would lose the compacted donations.
@Suite struct CompactedRefoldTests {
    @Test func aRefoldOfACompactedAccountStartsFromItsSnapshot() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account), watch = DeviceScript(account: account)
            try await register([phone, watch], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            func views() async throws -> [DeviceView] {
                try await projections.fullViews(account: account, devices: [phone.deviceId, watch.deviceId])
            }
            // 1…20: soups, one a push; 21: the watch deletes soup-1; 22…25: more soups, after the horizon too.
            for index in 0..<20 {
                _ = try await store.append([phone.donate("soup-\(index % 4)", at: 1000 + Int64(index) * 10).event], account: account, device: phone.deviceId)
            }
            _ = try await store.append([watch.delete(.identifiers(["soup-1"]), at: 1500).event], account: account, device: watch.deviceId)
            let compaction = try await projections.compact(account: account, through: 21)
            #expect(compaction.outcome == .compacted && compaction.horizonVersion == 21 && compaction.eventsRemoved > 0)
            for index in 0..<4 {
                _ = try await store.append([phone.donate("soup-\(index)", at: 2000 + Int64(index) * 10).event], account: account, device: phone.deviceId)
            }
            let before = try await views()
            #expect(before[0].shortcuts[ShortcutID(bundleId: "com.example.soup", identifier: "soup-0")]?.donationCount == 6)

            // As a migration marks it: its groups' rows wrong on purpose, which the refold replaces.
            try await client.query("UPDATE projection_donation_groups SET donations = 99 WHERE account_id = \(account)", logger: logger)
            try await client.query("UPDATE account_heads SET refold_pending = true WHERE account_id = \(account)", logger: logger)
            var steps = 0
            while case .folded = try await projections.foldNextBehind(batchSize: 100, parkedRetry: (.seconds(1), .seconds(1))) { steps += 1 }
            #expect(steps == 1)
            let pending = try await client.query("SELECT refold_pending FROM account_heads WHERE account_id = \(account)", logger: logger)
                .decode(Bool.self).collectAll().first
            #expect(pending == false)
            #expect(try await views() == before, "the refold's views are those before it")
            let verified = try await ProjectionRebuilder(client: client, logger: logger).verify()
            #expect(verified.differences == [], "\(verified.differences.prefix(3))")
        }
    }
}
