/// How a test finds a server's `LISTEN` session in `pg_stat_activity`: by its last statement, the
/// `LISTEN` itself or, once it has listened a while, its heartbeat (`NotificationSource`).
public enum ListenSession {
    /// A condition on `pg_stat_activity`'s `query` that holds for the `LISTEN` sessions only.
    public static let predicate = "(query ILIKE 'LISTEN%' OR query = 'SELECT ''listening'' AS heartbeat')"
}
