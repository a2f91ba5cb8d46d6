import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

extension PSQLError {
    var isUniqueViolation: Bool { serverInfo?[.sqlState] == "23505" }
    var constraintName: String? { serverInfo?[.constraintName] }
}
