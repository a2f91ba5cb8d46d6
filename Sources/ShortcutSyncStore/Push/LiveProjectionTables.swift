import Foundation
import PostgresNIO
import ShortcutSyncDomain

enum LiveProjectionTables: ProjectionTableSet {
    static var tables: ProjectionTables { .live }
    static let readSQL = tables.qualifying(FoldSQL.read)
    static let writeSQL = tables.qualifying(FoldSQL.write)
    static let readName = "FoldRead.live"
    static let writeName = "FoldWrite.live"
}
