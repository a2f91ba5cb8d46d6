import Foundation
import Logging
import PostgresNIO

extension DatabaseURL {
    /// The configuration of a single connection outside the pool: for the sync worker, which
    /// holds its advisory lock on a connection of its own, and for `LISTEN`.
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: username, password: password, database: database,
                                  tls: requireTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable)
        }
        configuration.options.connectTimeout = .milliseconds(Self.connectTimeout.inMilliseconds)
        return configuration
    }
}

extension DatabaseURL {
    /// Runs `body` on a connection of its own, closed afterwards: for one-off work (creating a
    /// database, migrating) before a service's pool runs. A `PostgresClient` made for that would
    /// lease its first connection before its `run()` had begun, which PostgresNIO warns of.
    @discardableResult
    public func withSingleConnection<Result: Sendable>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 1, logger: logger)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(connection))
        } catch {
            outcome = .failure(error)
        }
        try? await connection.untilClosed { try await $0.close() }
        return try outcome.get()
    }
}
