import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// A set of projection tables as a type, so that each set's fold statements are prepared apart
/// (a prepared statement's text is fixed).
protocol ProjectionTableSet: Sendable {
    static var tables: ProjectionTables { get }
}
