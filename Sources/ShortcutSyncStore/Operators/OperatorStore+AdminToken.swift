import Foundation
import Logging
import PostgresNIO

extension OperatorStore {
    /// Tells every server of the database that the admin token's file holds a new token
    /// (`AdminTokenRotated`): each re-reads its file when it hears it.
    public func announceAdminTokenRotated() async throws {
        try await client.query("SELECT pg_notify(\(AdminTokenRotated.channel), '{}')", logger: logger)
    }
}
