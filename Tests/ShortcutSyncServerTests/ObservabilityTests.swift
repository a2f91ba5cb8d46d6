import APNsStandIn
import AsyncHTTPClient
import EmbeddedPostgres
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncAPI
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// The dashboard and the alert rules of `deploy/` (issue 33) against the real service and, where
/// Debian's `prometheus` package is installed, a real Prometheus: the rules pass `promtool`,
/// every metric they and the dashboard name is on `/metrics`, and an alert fires when its
/// condition is made true. Where Prometheus is not installed, says so in one line and checks
/// the names alone.
@Suite struct ObservabilityTests {
    /// The repository's `deploy/` folder, found from this file.
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")

    static func tool(_ name: String) -> URL? {
        for folder in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// The metric families an expression of the rules or the dashboard reads.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"\b(shortcut_sync_[a-z_]+|hb_requests|http_server_request_duration_[a-z]+)\b"#)
        let names = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        return Set(names.map { name in
            for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
            return name
        })
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: deploy.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func everyMetricTheDashboardAndTheRulesNameIsExported() async throws {
        let rules = try Self.read("prometheus/alerts.yml")
        let dashboard = try Self.read("grafana/dashboards/shortcut-sync.json")
        let named = Self.metricNames(in: rules).union(Self.metricNames(in: dashboard))
        #expect(named.count >= 15, "\(named.sorted())")
        // With a waker (the wakes' metrics exist once it runs with a key).
        try await APNsStandIn.withStandIn { standIn in try await TestServer.with(configure: TestServer.wakes(standIn)) { server in
            // What makes every family appear: a push, a pull, a poke on a stream.
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let stream = try await StreamTests.open(server, token: mac.token)
            let recorder = StreamRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await recorder.record(stream) }
                #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                let version = try await phone.push()
                #expect(try await recorder.wait { $0.contains("{\"version\": \(version)}") }.contains("{\"version\": \(version)}"))
                group.cancelAll()
            }
            #expect(try await server.raw(.GET, "/v1/sync/pull", token: mac.token).status == 200)
            let exported = try await FreshnessTests.metrics(server)
            for name in named.sorted() {
                #expect(exported.contains("# TYPE \(name) "), "\(name) is named by deploy/ and must be on /metrics")
            }
        } }
    }

    /// Issue 59: an absent series is no zero to Prometheus (`rate()` and the alerts see nothing),
    /// so every family the dashboard and the rules read is on `/metrics` from the start, before
    /// any request, with no APNs key. In a `serve` of its own: the metrics registry is the
    /// process's, where the other tests' servers have made families already.
    @Test func everyMetricTheDashboardAndTheRulesNameIsThereFromTheStartWithoutAKey() async throws {
        let named = Self.metricNames(in: try Self.read("prometheus/alerts.yml"))
            .union(Self.metricNames(in: try Self.read("grafana/dashboards/shortcut-sync.json")))
        #expect(named.contains("shortcut_sync_wakes_sent_total") && named.contains("shortcut_sync_wakes_refused_total"))
        let serve = try await ServeProcess(dataDirectory: ShutdownTests.dataDirectory(), arguments: ["--no-worker"])
        defer { serve.forceStop() }
        try await ShutdownTests.waitUntilReady(serve)
        let exported = try await ShutdownTests.metrics(serve.operatorURL)
        for name in named.sorted() {
            #expect(exported.contains("# TYPE \(name) "), "\(name) is named by deploy/ and must be on /metrics from the start")
        }
    }

    /// Issue 59: the contract says which listener answers what. The paths the spec (as served)
    /// puts on the operators' listener are `/readyz` and `/metrics`, each answered there and 404 on
    /// the API's; nothing else names that server.
    @Test func theSpecPutsTheOperatorsPathsOnTheirListener() async throws {
        try await TestServer.with { server in
            let spec = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.baseURL.absoluteString + "/openapi.yaml"), timeout: .seconds(10))
            #expect(spec.status == .ok)
            let text = String(buffer: try await spec.body.collect(upTo: 1 << 20))
            // Each path item of the spec: its name, and whether it names the operators' listener.
            var onOperators: [String] = []
            var path: String?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
                if !line.hasPrefix(" ") { path = nil }
                if let current = path, line.contains("{operatorPort}"), onOperators.last != current { onOperators.append(current) }
            }
            #expect(onOperators == ["/readyz", "/metrics"])
            for path in onOperators {
                #expect(try await server.operators(path).status == 200, "\(path) on the operators' listener")
                #expect(try await server.raw(.GET, path, token: nil).status == 404, "\(path) on the API's listener")
            }
        }
    }

    @Test func theRulesPassPromtoolAndAParkedAccountFiresItsAlertInARealPrometheus() async throws {
        guard let promtool = Self.tool("promtool"), let prometheus = Self.tool("prometheus") else {
            print("ObservabilityTests: Prometheus is not installed (Debian's prometheus package): the rules are not run")
            return
        }
        let check = try await CommandProcess(executable: promtool, arguments: ["check", "rules", Self.deploy.appendingPathComponent("prometheus/alerts.yml").path],
                                             output: .kept)
        defer { check.forceStop() }
        #expect(try await check.waitForExit(timeout: .seconds(60)))
        #expect(check.exitStatus == 0, "\(check.output)\(check.errorOutput)")

        try await TestServer.with(runsWorker: false) { server in
            let operators = try #require(server.operatorURL.host).appending(":\(try #require(server.operatorURL.port))")
            try await Self.withPrometheus(prometheus, scraping: operators) { api in
                #expect(try await Self.firing(api).isEmpty, "nothing fires on a healthy service")
                try await server.sql.query("""
                    INSERT INTO projection_parked_accounts (account_id, failed_version, error) VALUES (\(UUID()), 1, 'a test parked it')
                    """)
                try await eventually("the parked account's alert fires", timeout: .seconds(60)) {
                    try await Self.firing(api).contains("ShortcutSyncAccountsParked")
                }
                try await server.sql.query("DELETE FROM projection_parked_accounts")
            }
        }
    }

    /// A `serve` whose PostgreSQL stops: its database alert fires (and the service's own does not).
    @Test func theDatabaseStoppedFiresItsAlertInARealPrometheus() async throws {
        guard let prometheus = Self.tool("prometheus") else {
            print("ObservabilityTests: Prometheus is not installed (Debian's prometheus package): the rules are not run")
            return
        }
        try await withScratchCluster("alerts") { cluster, _, connection in
            let url = connection.url(database: "alerts")
            try await DatabaseURL(url).createDatabaseIfMissing(logger: TestDatabase.shared.logger)
            let serve = try await ServeProcess(databaseURL: url)
            defer { serve.command.forceStop() }
            try await ShutdownTests.waitUntilReady(serve)
            try await Self.withPrometheus(prometheus, scraping: "127.0.0.1:\(serve.operatorPort)") { api in
                #expect(try await Self.firing(api).isEmpty, "nothing fires on a healthy service")
                await cluster.stop()
                try await eventually("the database's alert fires", timeout: .seconds(60)) {
                    try await Self.firing(api).contains("ShortcutSyncDatabaseUnreachable")
                }
                #expect(!(try await Self.firing(api).contains("ShortcutSyncDown")), "the service still answers /metrics")
            }
        }
    }

    /// Runs a real Prometheus on the rules as shipped, their waits shortened to a second, scraping
    /// the operators' listener at `operators` and evaluating every second, while `body` runs with
    /// its API's URL; stops it and removes its files afterwards.
    static func withPrometheus(_ prometheus: URL, scraping operators: String, _ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-prometheus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rules = try Self.read("prometheus/alerts.yml").replacingOccurrences(of: #"for: \d+[smh]"#, with: "for: 1s", options: .regularExpression)
        try rules.write(to: folder.appendingPathComponent("alerts.yml"), atomically: true, encoding: .utf8)
        try """
            global: { scrape_interval: 1s, evaluation_interval: 1s }
            rule_files: [\(folder.appendingPathComponent("alerts.yml").path)]
            scrape_configs:
              - job_name: shortcut-sync
                static_configs: [{ targets: ["\(operators)"] }]
            """.write(to: folder.appendingPathComponent("prometheus.yml"), atomically: true, encoding: .utf8)
        let port = try EmbeddedPostgres.freeLoopbackPort()
        let running = try await CommandProcess(executable: prometheus, arguments: [
            "--config.file", folder.appendingPathComponent("prometheus.yml").path,
            "--storage.tsdb.path", folder.appendingPathComponent("data").path,
            "--web.listen-address", "127.0.0.1:\(port)",
        ], output: .kept)
        defer { running.forceStop() }
        let api = "http://127.0.0.1:\(port)/api/v1"
        try await eventually("Prometheus scraped the service", timeout: .seconds(60)) {
            let answer = try? await Self.json("\(api)/query?query=up")
            return ((answer?["data"] as? [String: Any])?["result"] as? [[String: Any]])?.isEmpty == false
        }
        try await body(api)
    }

    static func json(_ url: String) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 22)
        return (try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:]
    }

    /// The names of the alerts firing now.
    static func firing(_ api: String) async throws -> Set<String> {
        let alerts = ((try await json("\(api)/alerts"))["data"] as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
        return Set(alerts.filter { $0["state"] as? String == "firing" }.compactMap { ($0["labels"] as? [String: Any])?["alertname"] as? String })
    }
}
