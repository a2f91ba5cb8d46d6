import Foundation
import PostgresNIO
import ShortcutSyncDomain

enum RebuildProjectionTables: ProjectionTableSet {
    static var tables: ProjectionTables { .rebuild }
}
