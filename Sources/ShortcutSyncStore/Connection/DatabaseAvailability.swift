import _ConnectionPoolModule
import PostgresNIO

/// Tells a database that is down, restarting or overloaded from a mistake in a statement.
///
/// The HTTP layer answers the first kind with `503` and `Retry-After` (the client should try
/// again), the second with `500` (a bug to fix).
public enum DatabaseAvailability {
    /// Whether `error` means the database could not serve the request now: the connection is
    /// gone or cannot be made, the server is shutting down or out of connections, or contention
    /// outlasted the retries.
    public static func isUnavailable(_ error: any Error) -> Bool {
        switch error {
        case let error as StoreError:
            switch error {
            case .connectionClosed, .tooMuchContention: return true
            case .corruptRow, .migrationsMissing: return false
            }
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .queryCancelled,
                 .uncleanShutdown, .failedToAddSSLHandler, .sslUnsupported:
                return true
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                // 08 connection exception, 53 insufficient resources, 57 operator intervention
                // (shutdown, restart; 57014 a statement past `statement_timeout`), 40001/40P01
                // serialization failure and deadlock, 55P03 lock not available (`lock_timeout`),
                // 25P03 a transaction ended by `idle_in_transaction_session_timeout`, 25006 a
                // write refused by a standby (a failover under way: the address still names the
                // old standby, not yet promoted, or a read-only server).
                return ["08", "53", "57"].contains(String(state.prefix(2))) || ["40001", "40P01", "55P03", "25P03", "25006"].contains(state)
            default:
                return false
            }
        case is ConnectionPoolError:
            return true
        default:
            return false
        }
    }
}
