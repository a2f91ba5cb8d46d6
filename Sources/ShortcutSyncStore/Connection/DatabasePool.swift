import Logging
import PostgresNIO

/// The connections to the database that a process's stores share: PostgresNIO's pool, itself a
/// `Service` that runs in the process's service group.
///
/// The other modules hold it and hand it to the stores, and never query it: they do not depend on
/// PostgresNIO, so its methods are not visible to them (`MemberImportVisibility`). Only this
/// module speaks PostgreSQL.
public typealias DatabasePool = PostgresClient

extension DatabaseURL {
    /// A pool for a service that runs for long (`serviceClientConfiguration`: generic plans where
    /// they serve, `keptOpen` connections open from the start, no keep-alive queries).
    public func servicePool(maximumConnections: Int, keptOpen: Int, logger: Logger) async throws -> DatabasePool {
        PostgresClient(configuration: try await serviceClientConfiguration(maximumConnections: maximumConnections, keptOpen: keptOpen, logger: logger),
                       backgroundLogger: logger)
    }

    /// A pool for a command that runs a few statements and ends (`admin`).
    public func commandPool(maximumConnections: Int, logger: Logger) throws -> DatabasePool {
        PostgresClient(configuration: try clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: logger)
    }

    /// The database's notifications on `channels`, each attempt to listen on a connection of its
    /// own (never one of a pool's), for a service that listens as long as it runs.
    public func notificationSource(channels: Set<NotificationSource.Channel> = Set(NotificationSource.Channel.allCases),
                                   logger: Logger) throws -> NotificationSource {
        NotificationSource(.dedicated(try connectionConfiguration()), channels: channels, logger: logger)
    }
}
