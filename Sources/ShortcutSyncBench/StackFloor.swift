import EmbeddedPostgres
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncChildProcess
import ShortcutSyncDomain
import ShortcutSyncStore
import UnixSignals

/// The stack's floor for a push (`bench push`'s 1-event scenario, issue 30): what a push costs a
/// server built on the same Hummingbird and PostgresNIO that does nothing a push does not need at
/// the least. It answers `POST /v1/sync/push` with a bearer token by collecting the body and
/// running two prepared statements on one pooled connection (the token's head read, then the
/// head moved and the body inserted as one JSON row), with a small JSON answer. No middleware,
/// no JSON parsed here, no fold, no limit: the service's CPU per push beside this one's, in the
/// same run, is what this project adds to its stack.
///
/// It runs as a process of its own (`shortcut-sync bench stack-floor`, not listed), so that its
/// CPU time is its own, on tables of its own in the bench's database (`prepare`, `drop`).
public enum StackFloor {
    /// The floor's tables, made by the bench before it starts the floor.
    public static func prepare(_ database: DatabaseURL, logger: Logger) async throws {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        try await client.withRunning {
            try await client.query("CREATE TABLE IF NOT EXISTS bench_floor_heads (token text PRIMARY KEY, version bigint NOT NULL)", logger: logger)
            try await client.query("""
                CREATE TABLE IF NOT EXISTS bench_floor_events (token text NOT NULL, version bigint NOT NULL, body jsonb NOT NULL, PRIMARY KEY (token, version))
                """, logger: logger)
        }
    }

    /// Drops the floor's tables (the bench's database is kept when it runs in place).
    public static func drop(_ database: DatabaseURL, logger: Logger) async throws {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        try await client.withRunning {
            _ = try await client.query("DROP TABLE IF EXISTS bench_floor_events, bench_floor_heads", logger: logger)
        }
    }

    /// Starts the floor as a child process of this executable on `database` (its tables made
    /// first), waits until it answers, and runs `body` with its address and pid; then stops it and
    /// drops its tables, whatever `body` did (its error, if any, is rethrown after).
    static func with<Result: Sendable>(database: DatabaseURL, logger: Logger, _ body: (URL, Int32) async throws -> Result) async throws -> Result {
        let outcome: Swift.Result<Result, any Error>
        do {
            try await prepare(database, logger: logger)
            let port = try EmbeddedPostgres.freeLoopbackPort()
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let process = try await CommandProcess(executable: executable, arguments: ["bench", "stack-floor", "--port", "\(port)"],
                                                   environment: ["DATABASE_URL": database.urlString], output: .inherited)
            let url = URL(string: "http://127.0.0.1:\(port)")!
            do {
                try await waitUntilAnswering(url.absoluteString + "/healthz", what: "the stack's floor") {
                    process.isRunning ? nil : "status \(process.exitStatus.map(String.init) ?? "?")"
                }
                outcome = .success(try await body(url, process.processIdentifier))
            } catch {
                outcome = .failure(error)
            }
            await process.stop()
        } catch {
            outcome = .failure(error)
        }
        try? await drop(database, logger: logger)
        return try outcome.get()
    }

    /// The floor on `port` (loopback), `GET /healthz` and `POST /v1/sync/push`, as a service
    /// group: its PostgreSQL client and its HTTP server, shut down gracefully at one of
    /// `signals` or at `triggerGracefulShutdown()`.
    public static func services(_ database: DatabaseURL, port: Int, signals: [UnixSignal] = [], logger: Logger) throws -> ServiceGroup {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: 24), backgroundLogger: logger)
        let router = Router()
        router.get("/healthz") { _, _ in HTTPResponse.Status.ok }
        router.post("/v1/sync/push") { request, _ -> Response in
            guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
                return Response(status: .unauthorized)
            }
            let token = String(authorization.dropFirst("Bearer ".count))
            let body = try await request.body.collect(upTo: Limits.maxPushBytes)
            let version = try await client.withConnection { connection -> Int64 in
                var head: Int64 = 0
                for try await version in try await connection.execute(ReadHead(token: token), logger: logger) { head = version }
                var moved: Int64 = 0
                for try await version in try await connection.execute(Append(token: token, head: head, body: body), logger: logger) { moved = version }
                return moved
            }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"version":\#(version)}"#)))
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        return ServiceGroup(configuration: ServiceGroupConfiguration(services: [client, application], gracefulShutdownSignals: signals, logger: logger))
    }

    /// The token's head (no row before its first push).
    struct ReadHead: PostgresPreparedStatement {
        static let name = "StackFloor.readHead"
        static let sql = "SELECT version FROM bench_floor_heads WHERE token = $1"
        typealias Row = Int64
        var token: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(token)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// The head moved on from `head` (made at the first push) and the body inserted at the new version.
    struct Append: PostgresPreparedStatement {
        static let name = "StackFloor.append"
        static let sql = """
            WITH head AS (
                INSERT INTO bench_floor_heads AS h (token, version) VALUES ($1, $2 + 1)
                ON CONFLICT (token) DO UPDATE SET version = h.version + 1 WHERE h.version = $2
                RETURNING version
            )
            INSERT INTO bench_floor_events (token, version, body) SELECT $1, head.version, convert_from($3, 'UTF8')::jsonb FROM head
            RETURNING version
            """
        typealias Row = Int64
        var token: String
        var head: Int64
        var body: ByteBuffer

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(token)
            bindings.append(head)
            bindings.append(body)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }
}
