import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// PostgreSQL keeps a plan of a prepared statement made without its values (a generic plan) once
/// it has run it five times on a session, so every statement of the push must reach its rows
/// through an index in that plan too, whatever the account or device has stored. A device's last
/// seq read as `max(seq)` was planned as a scan of every event of the device (measured: 810
/// buffers a push for a device with 8,500 events); as the first row of the index backwards it
/// reads a few. Stored rows joined to the batch's arrays were planned as scans of the account's
/// rows (its groups, marks, voice shortcuts; for the write, its events); looked up per key they
/// cost what the batch touches.
@Suite struct GenericPlanTests {
    @Test func thePushsReadAndWriteCostWhatTheBatchTouchesNotWhatTheAccountHolds() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            try await openAccount(phone.account, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            // 3,000 events of one device, donations of 600 shortcuts: 600 donation groups.
            for batch in 0..<6 {
                let events = (0..<500).map { phone.donate("soup-\($0 % 600)", at: Int64(batch * 500 + $0) * 1000).event }
                try await store.append(events, account: phone.account, device: phone.deviceId)
            }
            let empty = "'{}'"
            let read = try await Self.sharedBuffers(of: FoldSQL.read, arguments: [
                "'\(phone.account)'", "'{com.example.soup}'", "'{soup-1}'", empty, empty, empty,
                "'{com.example.soup,com.example.soup}'", "'{identifier,all}'", "'{soup-1,\"\"}'", empty, empty, empty, empty,
                "'\(phone.deviceId)'",
            ], client: client)
            // Each part reads a row or two through its index: about 20 buffers in all, not the
            // pages of 3,000 events or 600 groups.
            #expect(read < 60, "the push's read used \(read) shared buffers in its generic plan")

            // One shortcut's row rewritten from the event at version 5 (the latest donation, as
            // stored): the write looks that event up by its version.
            var write = ["'\(phone.account)'", "3000", "1", "0"] + Array(repeating: empty, count: 14)
            write += ["'{com.example.soup}'", "'{soup-1}'", "'{5}'", "'{1}'"] + Array(repeating: empty, count: 17)
            write += ["'{\"\"}'", "'{0}'", "'{0}'", empty, "'{\"\"}'", "'{\"\"}'", empty, empty, empty]
            write += ["1"]  // the account's shortcut count
            write += [empty]  // the groups' compacted parts
            #expect(write.count == 50)
            let written = try await Self.sharedBuffers(of: FoldSQL.write, arguments: write, client: client)
            #expect(written < 60, "the fold's write used \(written) shared buffers in its generic plan")
        }
    }

    /// A suggestions request whose device's sums are kept at the head's mark reads the head's
    /// row and no shortcut's (`SuggestionInputsStatement`'s one-time filter), in the generic plan
    /// the service's sessions use; with another mark it reads the candidates' rows.
    @Test func aSuggestionsRequestAtTheKeptMarkReadsNoShortcutsRows() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            try await register([phone], client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            for batch in 0..<6 {
                let events = (0..<100).map { phone.donate("soup-\(batch * 100 + $0)", at: Int64(batch * 100 + $0) * 60_000).event }
                try await store.append(events, account: phone.account, device: phone.deviceId)
            }
            let mark = try #require(try await client.query("""
                SELECT \(unescaped: AccountHead.markSQL) FROM account_heads h WHERE h.account_id = \(phone.account)
                """, logger: logger).decode(String.self).collectAll().first)
            func buffers(keptMark: String) async throws -> Int {
                try await Self.sharedBuffers(of: SuggestionInputsStatement.sql, arguments: [
                    "'\(phone.account)'", "'\(phone.deviceId)'", "true", "\(ProjectionStore.offsetWindow)",
                    "\(ProjectionStore.suggestionReach)", "\(ProjectionStore.suggestionCandidates)", keptMark,
                ], client: client)
            }
            let kept = try await buffers(keptMark: "'\(mark)'")
            let read = try await buffers(keptMark: "NULL")
            #expect(kept < 30, "the request at the kept mark used \(kept) shared buffers")
            #expect(read > 3 * kept, "a request without kept sums used \(read) shared buffers, one at the kept mark \(kept)")
        }
    }

    /// The shared buffers `sql` touches when run once with `arguments` (SQL literals) in a plan
    /// made without them, as the service's sessions plan a prepared statement.
    static func sharedBuffers(of sql: String, arguments: [String], client: PostgresClient) async throws -> Int {
        try await client.withConnection { connection in
            let name = "measured_\(UInt32.random(in: 0...UInt32.max))"
            try await connection.query("SET plan_cache_mode = force_generic_plan", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "PREPARE \(name) AS " + sql), logger: logger)
            let explained: Result<String, any Error>
            do {
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE \(name)(" + arguments.joined(separator: ", ") + ")"),
                    logger: logger)
                explained = .success(try await rows.decode(String.self).collectAll().joined())
            } catch {
                explained = .failure(error)
            }
            try await connection.query(PostgresQuery(unsafeSQL: "DEALLOCATE \(name)"), logger: logger)
            try await connection.query("RESET plan_cache_mode", logger: logger)
            let text = try explained.get()
            guard let plans = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]],
                  let plan = plans.first?["Plan"] as? [String: Any] else { throw PlanNotRead(text: text) }
            return (plan["Shared Hit Blocks"] as? Int ?? 0) + (plan["Shared Read Blocks"] as? Int ?? 0)
        }
    }

    struct PlanNotRead: Error { var text: String }
}
