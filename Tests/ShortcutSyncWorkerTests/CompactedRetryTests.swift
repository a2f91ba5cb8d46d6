import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// A retry stays a retry for ever (DESIGN §4; issue 65, item 3): after a compaction removed the
/// events a device sent, what it sends again is still recognised by `(deviceId, seq, id)`, from
/// what the compaction kept of each compacted seq (`retry_fingerprints`), and a seq sent again with
/// another id is still refused.
@Suite struct CompactedRetryTests {
    @Test func aRetryOfSeqsCompactedAwayIsStillARetry() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var phone = DeviceScript(account: account)
            try await register([phone], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            let projections = ProjectionStore(client: client, logger: logger)
            let events = (0..<250).map { phone.donate("soup-\($0 % 7)", at: 1_000 + Int64($0) * 10).event }

            // 1–150 (the answer lost), then 1–250 (1–150 recognised, 151–250 stored; lost again).
            #expect(try await store.append(Array(events[..<150]), account: account, device: phone.deviceId).appended == 150)
            let second = try await store.append(events, account: account, device: phone.deviceId)
            #expect(second.appended == 100 && second.lastAcceptedSeq == 250)
            let before = try await projections.fullViews(account: account, devices: [phone.deviceId])

            let compaction = try await projections.compact(account: account, through: second.version)
            #expect(compaction.outcome == .compacted && compaction.eventsRemoved > 200, "\(compaction)")

            // 1–250 once more: every seq a retry, nothing stored, the views as they were.
            let third = try await store.append(events, account: account, device: phone.deviceId)
            #expect(third.appended == 0 && third.lastAcceptedSeq == 250 && third.version == second.version)
            // A part of it, and a part with new events after it.
            #expect(try await store.append(Array(events[20..<90]), account: account, device: phone.deviceId).appended == 0)
            let more = (0..<10).map { phone.donate("tea-\($0)", at: 5_000 + Int64($0)).event }
            let fourth = try await store.append(Array(events[200...]) + more, account: account, device: phone.deviceId)
            #expect(fourth.appended == 10 && fourth.lastAcceptedSeq == 260)
            let views = try await projections.fullViews(account: account, devices: [phone.deviceId])
            #expect(views[0].shortcuts.count == before[0].shortcuts.count + 10)

            // A compacted seq sent with another id is not a retry.
            // (An id of another fingerprint: one of the same is taken for the retry, one time in 65,536.)
            var reused = events[0]
            repeat { reused.id = UUID() } while RetryFingerprints.fingerprint(of: reused.id) == RetryFingerprints.fingerprint(of: events[0].id)
            do {
                _ = try await store.append([reused], account: account, device: phone.deviceId)
                Issue.record("seq 1 with another id was taken for a retry")
            } catch AppendError.seqReused(let index, let seq, let last) {
                #expect(index == 0 && seq == 1 && last == 260)
            }
        }
    }

    /// DESIGN §8's bound, in the shape the retry's record is kept for: 30,000 donations of one
    /// person on 50 shortcuts, pushed by three devices in batches of 500 (each device's last push
    /// 500 events, which the log no longer keeps whole), compacted at the head.
    @Test func thirtyThousandDonationsIn500EventPushesKeepUnder200KB() async throws {
        try await TestDatabase.withClient { client, _ in
            let account = UUID()
            var devices = (0..<3).map { _ in DeviceScript(account: account) }
            try await register(devices, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            var wall: Int64 = 1_763_712_000_000
            var last = AppendResult(lastAcceptedSeq: 0, version: 0, appended: 0, folded: true)
            var lastPushes = [[Event]](repeating: [], count: 3)
            for push in 0..<60 {
                let index = push % 3
                let batch = (0..<500).map { offset -> Event in
                    wall += 7
                    let shortcut = (push * 500 + offset) * 7 % 50
                    return devices[index].donate("item-\(shortcut % 25)", bundle: shortcut < 25 ? "com.example.soup" : "com.example.coffee",
                                                 at: wall).event
                }
                last = try await store.append(batch, account: account, device: devices[index].deviceId)
                lastPushes[index] = batch
            }
            let projections = ProjectionStore(client: client, logger: logger)
            let compaction = try await projections.compact(account: account, through: last.version)
            #expect(compaction.outcome == .compacted && compaction.eventsRemoved > 29_000, "\(compaction)")

            var bytes: Int64 = 0
            var byTable: [String: Int64] = [:]
            for table in try await accountTables(client) {
                let size = try await client.query(PostgresQuery(unsafeSQL: """
                    SELECT coalesce(sum(pg_column_size(t.*)), 0)::int8 FROM \(table) t WHERE t.account_id = $1
                    """, binds: { var binds = PostgresBindings(); binds.append(account); return binds }()), logger: logger)
                    .decode(Int64.self).collectAll().first ?? 0
                bytes += size
                byTable[table] = size
            }
            #expect(bytes <= 200_000, "\(bytes) bytes of rows: \(byTable.filter { $0.value > 0 })")
            // And every device's last push is still a retry.
            for index in devices.indices {
                let retry = try await store.append(lastPushes[index], account: account, device: devices[index].deviceId)
                #expect(retry.appended == 0 && retry.lastAcceptedSeq == 10_000)
            }
        }
    }

    /// Every table of the public and snapshot schemas with an `account_id`.
    private func accountTables(_ client: PostgresClient) async throws -> [String] {
        try await client.query("""
            SELECT format('%I.%I', table_schema, table_name) FROM information_schema.columns
            WHERE column_name = 'account_id' AND table_schema IN ('public', 'snapshot')
              AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')
            ORDER BY 1
            """, logger: logger).decode(String.self).collectAll()
    }
}
