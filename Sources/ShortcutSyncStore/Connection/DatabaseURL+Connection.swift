import Foundation
import Logging
import PostgresNIO

extension DatabaseURL {
    /// The configuration of a single connection outside the pool: for the sync worker, which
    /// holds its advisory lock on a connection of its own, and for `LISTEN`; its session started
    /// with the service's `limits` unless told otherwise.
    public func connectionConfiguration(limits: SessionLimits = .service) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: username, password: password, database: database,
                                  tls: requireTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable)
        }
        configuration.options.connectTimeout = .milliseconds(Self.connectTimeout.inMilliseconds)
        configuration.options.additionalStartupParameters.append(contentsOf: limits.startupParameters)
        return configuration
    }
}

extension DatabaseURL {
    /// Runs `body` on a connection of its own, closed afterwards: for one-off work (creating a
    /// database, migrating) before a service's pool runs, with an operator's command's limits. A `PostgresClient` made for that would
    /// lease its first connection before its `run()` had begun, which PostgresNIO warns of.
    @discardableResult
    public func withSingleConnection<Result: Sendable>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(limits: .command), id: 1, logger: logger)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await SessionLimits.withStatementDeadline(SessionLimits.command.statementDeadline) { try await body(connection) })
        } catch {
            outcome = .failure(error)
        }
        try? await connection.untilClosed { try await $0.close() }
        return try outcome.get()
    }
}

extension DatabaseURL {
    /// The configuration of the pool that runs pushes and folds (`serve`, `worker`): on one
    /// PostgreSQL, every session plans each prepared statement once, without its values
    /// (`plan_cache_mode = force_generic_plan`).
    ///
    /// With PostgreSQL's default, a plan that sees the arrays of the fold's read looked cheaper
    /// than one that does not, so the read was planned again at every push: measured by
    /// `bench push` (1-event pushes), 1.05 ms of planning a push beside 0.15 ms of execution. Its
    /// statements reach every row by key in any plan (`GenericPlanTests`). On a Citus node the
    /// opposite, each statement planned with its values at every run (`force_custom_plan`): Citus
    /// cannot route some statements without their values ("could not create distributed plan"),
    /// and on a node holding the account's shards a generic plan of a statement whose account is
    /// a parameter keeps every local plan Citus makes for it, one at every run, so that the
    /// session grows without end (`DistributedFunctions.settings`, which the functions carry for
    /// sessions that are not the service's). When the database cannot be asked at start (it is
    /// away) each statement is planned with its values, as on Citus: right on either, where
    /// PostgreSQL's default could let a Citus node's sessions grow.
    ///
    /// The pool keeps `keptOpen` connections open from its start (at most `maximumConnections`),
    /// and sends no keep-alive query on idle ones. PostgresNIO's pool arms a timer (a task group
    /// of two tasks and a sleep) for each connection that goes back idle: a keep-alive timer on
    /// every one, an idle timeout's on one it may close. With a statement or two a request, that
    /// was 13–15 % of the service's CPU per 1-event push (docs/benchmarks.md). The pool lends its
    /// lowest idle connection first, so a load within `keptOpen` statements at once goes back
    /// only to connections kept open, and arms nothing. A connection the server closes leaves the
    /// pool as it closes, pinged or not; one that something between drops without a word is found
    /// at its next use (docs/operating.md, "Connections to the database"). Its sessions are named
    /// `applicationName` in `pg_stat_activity`.
    public func serviceClientConfiguration(maximumConnections: Int, keptOpen: Int, logger: Logger) async throws -> PostgresClient.Configuration {
        var configuration = try clientConfiguration(maximumConnections: maximumConnections, limits: .service)
        configuration.options.minimumConnections = min(max(0, keptOpen), maximumConnections)
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters.append(("application_name", Self.applicationName))
        let citus = try? await withSingleConnection(logger: logger) { try await $0.hasCitus(logger: logger) }
        switch citus {
        case false?: configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_generic_plan"))
        case true?: configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_custom_plan"))
        case nil:
            // Either may be behind the URL: planned with their values, as on Citus, statements
            // are right on both (one PostgreSQL's pushes then plan at every run, about a
            // millisecond more); a default of generic plans after five runs could make a Citus
            // node's sessions grow without end.
            logger.warning("the database could not be asked whether it is a Citus cluster's: the service's statements are planned at every run until it is started again with the database reachable")
            configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_custom_plan"))
        }
        return configuration
    }
}

extension DatabaseURL {
    /// The `application_name` of the sessions of a service's pool (`serve`, `worker`).
    public static let applicationName = "shortcut-sync"
}

extension PostgresConnection {
    /// Whether the database has the citus extension: it is then a Citus coordinator.
    func hasCitus(logger: Logger) async throws -> Bool {
        try await guardedQuery("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')", logger: logger)
            .decode(Bool.self).collectAll().first ?? false
    }
}
