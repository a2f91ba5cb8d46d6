import Logging
import PostgresNIO

extension PostgresConnection {
    /// Takes the session advisory lock `key` if no other session holds it, without waiting;
    /// true when this session holds it now. PostgreSQL releases it when the session ends, so a
    /// connection that dies hands the lock on.
    public func tryAdvisoryLock(_ key: Int64, logger: Logger) async throws -> Bool {
        try await guardedQuery("SELECT pg_try_advisory_lock(\(key))", logger: logger)
            .decode(Bool.self).collectAll().first ?? false
    }
}
