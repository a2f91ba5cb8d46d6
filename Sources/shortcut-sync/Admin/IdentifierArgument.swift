import ArgumentParser
import Foundation
import Logging
import ShortcutSyncAdmin
import ShortcutSyncDomain
import ShortcutSyncStore

/// An id given on the command line.
struct IdentifierArgument: ExpressibleByArgument {
    var uuid: UUID

    init?(argument: String) {
        guard let uuid = UUID(canonical: argument) else { return nil }
        self.uuid = uuid
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
