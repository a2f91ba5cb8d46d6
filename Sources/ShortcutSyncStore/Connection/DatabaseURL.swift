import Foundation
import Logging
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL, turned into a client configuration.
///
/// `?host=/path/to/socket/dir` connects over a Unix socket instead, as libpq does.
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var socketDirectory: String?
    public var requireTLS: Bool

    public enum ParseError: Error, CustomStringConvertible {
        case invalid(String)
        public var description: String {
            switch self {
            case .invalid(let why): "invalid database URL: \(why)"
            }
        }
    }

    public init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              ["postgres", "postgresql"].contains(scheme) else {
            throw ParseError.invalid("expected postgres://user:password@host:port/database")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = components.port ?? 5432
        username = components.user?.removingPercentEncoding ?? "postgres"
        password = components.password?.removingPercentEncoding
        database = String(components.path.drop { $0 == "/" }).removingPercentEncoding ?? ""
        if database.isEmpty { database = username }
        socketDirectory = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        // libpq's modes; another is a typo that must not quietly mean "no TLS".
        let mode = query["sslmode"] ?? "disable"
        guard Self.sslModes.contains(mode) else {
            throw ParseError.invalid("unknown sslmode '\(mode)': one of \(Self.sslModes.joined(separator: ", "))")
        }
        requireTLS = ["require", "verify-ca", "verify-full"].contains(mode)
    }

    /// The `sslmode` values libpq knows. `allow` and `prefer` connect without TLS here (PostgreSQL
    /// on loopback or a private network); `require` and the `verify-` modes insist on it.
    public static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// The same server with another database.
    public func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    public var description: String {
        "postgres://\(username)@\(socketDirectory ?? "\(host):\(port)")/\(database)"
    }

    /// The text form without the password: for printing (DESIGN §5: no password is printed or logged).
    public var redactedURLString: String {
        var copy = self
        copy.password = nil
        return copy.urlString
    }

    /// The text form, password included: for handing to another process (in its environment,
    /// not its arguments, which every user of the machine may list).
    public var urlString: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.port = port
        components.path = "/" + database
        var items: [URLQueryItem] = []
        if let socketDirectory { items.append(URLQueryItem(name: "host", value: socketDirectory)) }
        items.append(URLQueryItem(name: "sslmode", value: requireTLS ? "require" : "disable"))
        components.queryItems = items
        return components.string ?? description
    }

    /// How long an attempt to connect may take, the session's start and authentication included,
    /// before it counts as failed (PostgresNIO's default is 10 s). A database that is down
    /// refuses at once; this bounds one that does not answer. Requests never wait for it: while
    /// an attempt is under way they are bounded by `DatabaseReach`. Not shorter, since a loaded
    /// machine (a test run on two cores) took more than 1.5 s to start a session.
    public static let connectTimeout: Duration = .seconds(5)

    /// A pool's configuration, its sessions started with `limits` (an operator's command's by
    /// default; `servicePool` gives the service's).
    public func clientConfiguration(maximumConnections: Int = 20, limits: SessionLimits = .command) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: username, password: password, database: database,
                                  tls: requireTLS ? .require(.makeClientConfiguration()) : .disable)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = Self.connectTimeout
        configuration.options.additionalStartupParameters.append(contentsOf: limits.startupParameters)
        return configuration
    }

    /// Makes one connection and closes it: a server that cannot be reached fails here, in seconds
    /// (a pool would keep trying). What went wrong is `DatabaseFailure(error)`.
    public func checkConnection(logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 1, logger: logger)
        try await connection.close()
    }

    /// Creates the database if the server does not have it yet (connecting to `postgres` to do so).
    public func createDatabaseIfMissing(logger: Logger) async throws {
        let database = database
        try await with(database: "postgres").withSingleConnection(logger: logger) { admin in
            let exists = try await admin.guardedQuery("SELECT 1 FROM pg_database WHERE datname = \(database)", logger: logger)
                .decode(Int.self).collectAll()
            if exists.isEmpty {
                let quoted = "\"" + database.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                do {
                    try await admin.guardedQuery(PostgresQuery(unsafeSQL: "CREATE DATABASE \(quoted)"), logger: logger)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
                    // Another process created it at the same moment.
                }
            }
        }
    }
}

extension DatabaseURL {
    /// Drops the database (connecting to `postgres` to do so), ending its sessions first: for
    /// the throwaway databases of benchmarks.
    public func dropDatabase(logger: Logger) async throws {
        let quoted = "\"" + database.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        try await with(database: "postgres").withSingleConnection(logger: logger) { admin in
            try await admin.guardedQuery(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)"), logger: logger)
        }
    }
}

extension PostgresClient {
    /// Runs the client's connection pool for the duration of `body`: for short-lived commands and tests.
    public func withRunning<Result: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
            group.addTask { await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
