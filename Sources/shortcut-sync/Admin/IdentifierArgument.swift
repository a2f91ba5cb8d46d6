import ArgumentParser
import Foundation
import Logging
import ShortcutSyncAdmin
import ShortcutSyncStore

/// An id given on the command line.
struct IdentifierArgument: ExpressibleByArgument {
    var uuid: UUID

    init?(argument: String) {
        guard let uuid = UUID(uuidString: argument) else { return nil }
        self.uuid = uuid
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
