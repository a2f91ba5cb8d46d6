import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// A set of projection tables as a type, so that each set's fold statements are prepared apart
/// (a prepared statement's text is fixed). Each keeps its statements' texts, made once: PostgresNIO
/// asks for a statement's text at every run.
protocol ProjectionTableSet: Sendable {
    static var tables: ProjectionTables { get }
    /// `FoldSQL.read` and `FoldSQL.write` for these tables.
    static var readSQL: String { get }
    static var writeSQL: String { get }
    /// The prepared statements' names (PostgresNIO's default, `String(reflecting:)`, is made at every run).
    static var readName: String { get }
    static var writeName: String { get }
}
