import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// `serve --keep-history` (issue 58, item 3): the service's own maintenance task compacts an
/// account whose history passed the retention, its devices' view unchanged, and `/metrics` counts it.
@Suite struct RetentionMetricsTests {
    @Test func aServiceWithAShortRetentionCompactsAnAccountAndItsMetricsSayHowMuch() async throws {
        try await TestServer.with(configure: {
            // All of a connection's time (share 1): at the default tenth, each look rests nine times
            // what it took, and on a loaded machine (the whole suite at once) two looks that found
            // nothing due yet rested past the wait below. A look that compacted nothing (a push
            // under way) is tried again after a second, not the default hour.
            $0.compaction = CompactionSchedule(keepHistory: .seconds(2), minimumEvents: 20, retryAfter: .seconds(1),
                                               poll: .milliseconds(50), share: 1)
        }) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for index in 0..<30 { phone.record(EndToEndTests.donation("soup-\(index % 5)"), at: now + Int64(index)) }
            try await phone.push()
            // One more push: the device's last event, which a compaction keeps (it gives the
            // device's last seq), is then that one.
            phone.record(EndToEndTests.donation("soup-0"), at: now + 100)
            try await phone.pull(waitFor: try await phone.push())
            let before = phone.view
            #expect(before.shortcuts.count == 5)

            func compactedEvents() async throws -> Int? {
                var request = HTTPClientRequest(url: server.operatorURL.absoluteString + "/metrics")
                request.method = .GET
                let text = String(buffer: try await HTTPClient.shared.execute(request, timeout: .seconds(10)).body.collect(upTo: 1 << 22))
                return text.firstMatch(of: /\nshortcut_sync_compacted_events_total ([0-9]+)/).flatMap { Int($0.1) }
            }
            func left() async throws -> Int64 {
                try await server.sql.query("SELECT count(*) FROM events WHERE account_id = \(account.id)")
                    .decode(Int64.self).collectAll().first ?? 0
            }
            try await eventually("the service compacted the account by itself", timeout: .seconds(30)) {
                try await left() < 31
            }
            // The counter is the process's, which other tests' services share: at least this
            // account's events are in it.
            let removed = 31 - (try await left())
            #expect(removed >= 20, "removed \(removed)")
            // Counted once the compaction has committed: a moment after the rows are gone.
            try await eventually("the counter has this account's events", timeout: .seconds(5)) {
                Int64(try await compactedEvents() ?? 0) >= removed
            }
            try await phone.pull(fresh: true)
            #expect(phone.view == before, "compacting changes no view")
        }
    }
}
