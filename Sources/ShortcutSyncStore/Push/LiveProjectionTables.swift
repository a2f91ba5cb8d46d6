import Foundation
import PostgresNIO
import ShortcutSyncDomain

enum LiveProjectionTables: ProjectionTableSet {
    static var tables: ProjectionTables { .live }
}
