import Synchronization

/// The database is known to be unreachable: the request is answered 503 with `Retry-After`.
public struct DatabaseAway: Error, Sendable {
    public init() {}
}
