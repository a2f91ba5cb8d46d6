import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// What operators look at: readiness, health and metrics.
@Suite struct OperationsTests {
    @Test func readinessAndMetricsReportTheService() async throws {
        try await TestServer.with { server in
            let ready = try await server.raw(.GET, "/readyz", token: nil)
            #expect(ready.status == 200)
            #expect(ready.json["ready"] as? Bool == true)
            #expect(ready.json["migrations"] as? Bool == true)
            #expect(try await server.raw(.GET, "/healthz", token: nil).status == 200)

            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            try await phone.pull(waitFor: try await phone.push())

            var request = HTTPClientRequest(url: server.baseURL.absoluteString + "/metrics")
            request.method = .GET
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 22))
            for metric in ["shortcut_sync_pushes_total", "shortcut_sync_events_appended_total", "shortcut_sync_open_streams",
                           "shortcut_sync_worker_lag_events", "http_server_request_duration"] {
                #expect(text.contains(metric), "\(metric)")
            }
        }
    }
}
