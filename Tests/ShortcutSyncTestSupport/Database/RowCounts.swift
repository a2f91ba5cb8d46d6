import PostgresNIO
import ShortcutSyncStore

/// How many events the log holds.
public func eventCount(_ client: PostgresClient) async throws -> Int {
    try await client.query("SELECT count(*)::int8 FROM events").decode(Int64.self).collectAll().first.map(Int.init) ?? -1
}

/// How many rows the projection tables hold, to prove that an aborted batch wrote nothing.
public func projectionRowCounts(_ client: PostgresClient) async throws -> [Int64] {
    try await client.query("""
        SELECT (SELECT count(*) FROM projection_accounts), (SELECT count(*) FROM projection_shortcuts),
               (SELECT count(*) FROM projection_voice_shortcuts)
        """).decode((Int64, Int64, Int64).self).collectAll().map { [$0.0, $0.1, $0.2] }.first ?? []
}
