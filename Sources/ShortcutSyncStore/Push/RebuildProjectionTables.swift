import Foundation
import PostgresNIO
import ShortcutSyncDomain

enum RebuildProjectionTables: ProjectionTableSet {
    static var tables: ProjectionTables { .rebuild }
    static let readSQL = tables.qualifying(FoldSQL.read)
    static let writeSQL = tables.qualifying(FoldSQL.write)
    static let readName = "FoldRead.rebuild"
    static let writeName = "FoldWrite.rebuild"
}
