import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

/// What operators look at: readiness, health and metrics.
@Suite struct OperationsTests {
    /// Past the threshold of events behind (an import waiting for the maintenance tasks)
    /// readiness says `degraded` (still 200: the service answers), and goes back once the tasks
    /// have folded them. Pushes fold themselves and leave nothing behind.
    @Test func readinessReportsDegradedWhileAnImportWaitsPastTheThreshold() async throws {
        try await TestServer.with(runsWorker: false, degradedLag: 2) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for identifier in ["tomato", "leek", "onion"] { phone.record(EndToEndTests.donation(identifier), at: now) }
            try await phone.push()
            let folded = try await server.operators("/readyz")
            #expect(folded.status == 200)
            #expect(folded.json["degraded"] as? Bool == false)
            #expect(folded.json["accountsBehind"] as? Int == 0)

            var imported = DeviceScript(account: UUID(), detail: .full)
            try await writeBacklog(["a", "b", "c"].map { imported.donate($0, at: now) }, account: imported.account, client: server.sql)
            // Readiness asks the database at most once a second, whoever asks.
            var behind = try await server.operators("/readyz")
            try await eventually("readiness sees the import", timeout: .seconds(5)) {
                behind = try await server.operators("/readyz")
                return behind.json["eventsBehind"] as? Int != 0
            }
            #expect(behind.status == 200)
            #expect(behind.json["ready"] as? Bool == true)
            #expect(behind.json["degraded"] as? Bool == true)
            #expect(behind.json["eventsBehind"] as? Int == 3)
            #expect((behind.json["detail"] as? String)?.contains("3 events behind") == true)

            // Maintenance tasks elsewhere (this server runs none) fold it, and readiness is whole again.
            let worker = SyncWorker(queue: ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger), logger: TestDatabase.shared.logger, idlePoll: .milliseconds(20))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await worker.run() }
                try await eventually("readiness is no longer degraded") {
                    try await server.operators("/readyz").json["degraded"] as? Bool == false
                }
                group.cancelAll()
            }
        }
    }

    /// A parked account (its events skipped until it folds again) makes readiness degraded too.
    @Test func readinessReportsDegradedWhileAnAccountIsParked() async throws {
        try await TestServer.with(runsWorker: false) { server in
            #expect(try await server.operators("/readyz").json["parkedAccounts"] as? Int == 0)
            try await server.sql.query("INSERT INTO projection_parked_accounts (account_id, failed_version, error) VALUES (\(UUID()), 1, 'broken')")
            var parked = try await server.operators("/readyz")
            try await eventually("readiness sees the parked account", timeout: .seconds(5)) {
                parked = try await server.operators("/readyz")
                return parked.json["parkedAccounts"] as? Int != 0
            }
            #expect(parked.status == 200)
            #expect(parked.json["degraded"] as? Bool == true)
            #expect(parked.json["parkedAccounts"] as? Int == 1)
            #expect((parked.json["detail"] as? String)?.contains("parked") == true)
        }
    }

    @Test func readinessAndMetricsReportTheService() async throws {
        try await TestServer.with { server in
            let ready = try await server.operators("/readyz")
            #expect(ready.status == 200)
            #expect(ready.json["ready"] as? Bool == true)
            #expect(ready.json["migrations"] as? Bool == true)
            #expect(try await server.raw(.GET, "/healthz", token: nil).status == 200)
            // What the service tells its operators is not for strangers: the public listener has
            // no such route, and the operators' has nothing else.
            #expect(try await server.raw(.GET, "/readyz", token: nil).status == 404)
            #expect(try await server.raw(.GET, "/metrics", token: nil).status == 404)
            #expect(try await server.operators("/healthz").status == 404)
            #expect(try await server.operators("/v1/sync/pull").status == 404)
            #expect(server.operatorURL.host == "127.0.0.1" && server.operatorURL.port != server.baseURL.port)

            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            // The same donation twice: the second push folds over the rows the first wrote.
            for _ in 0..<2 {
                phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                try await phone.pull(waitFor: try await phone.push())
            }

            var request = HTTPClientRequest(url: server.operatorURL.absoluteString + "/metrics")
            request.method = .GET
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 22))
            for metric in ["shortcut_sync_pushes_total", "shortcut_sync_events_appended_total", "shortcut_sync_open_streams",
                           "shortcut_sync_worker_accounts_behind", "http_server_request_duration"] {
                #expect(text.contains(metric), "\(metric)")
            }
            // A push's time on the service is told from 1 ms (`bench sustained` sets it beside its own).
            let pushBuckets = text.split(separator: "\n").filter { $0.hasPrefix("http_server_request_duration_bucket") && $0.contains(#"http_route="/v1/sync/push""#) }
            #expect(pushBuckets.contains { $0.contains(#"le="0.001""#) }, "\(pushBuckets)")
            let overKeptRows = text.firstMatch(of: /\nshortcut_sync_pushes_over_kept_rows_total ([0-9]+)/).flatMap { Int($0.1) }
            #expect((overKeptRows ?? 0) >= 1, "pushes over kept rows: \(overKeptRows.map(String.init) ?? "not shown")")
        }
    }
}
