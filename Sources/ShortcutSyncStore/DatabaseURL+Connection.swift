import Foundation
import PostgresNIO

extension DatabaseURL {
    /// The configuration of a single connection outside the pool: for the sync worker, which
    /// holds its advisory lock on a connection of its own, and for `LISTEN`.
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let socketDirectory {
            return .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        }
        return .init(host: host, port: port, username: username, password: password, database: database,
                     tls: requireTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable)
    }
}
