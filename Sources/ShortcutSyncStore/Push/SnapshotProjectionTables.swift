import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// The snapshots of compacted accounts: their fold's rows at their horizon (migration 0025),
/// folded and read with the live tables' statements.
enum SnapshotProjectionTables: ProjectionTableSet {
    static var tables: ProjectionTables { .snapshot }
    static let readSQL = tables.qualifying(FoldSQL.read)
    static let writeSQL = tables.qualifying(FoldSQL.write)
    static let readName = "FoldRead.snapshot"
    static let writeName = "FoldWrite.snapshot"
}
