import Foundation
import PostgresNIO
import ShortcutSyncDomain

/// The fold statements' texts (for the live tables), apart from their generic statements.
enum FoldSQL {}
