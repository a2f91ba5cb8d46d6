import Foundation
import ShortcutSyncDomain

/// The check of the pull cursor's payload reader (`PullCursor(payload:)`). A device sends its
/// cursor back with every pull; the service reads the payload only once its signature holds, but
/// the reader is written as if anyone's bytes reached it.
///
/// For every input it must not crash or read out of bounds (the sanitizers), and what it reads
/// must be what it writes: a cursor read from an input, written (`payload`) and read again, is
/// the same cursor, and its page's versions are not past the cursor's own.
enum CursorPayloadCheck {
    static func check(_ bytes: [UInt8]) {
        guard let cursor = PullCursor(payload: bytes) else { return }
        guard let again = PullCursor(payload: cursor.payload) else { fail("its own payload of a cursor it read is refused", bytes) }
        guard again == cursor else { fail("a cursor written and read again is another cursor", bytes) }
        if let page = cursor.page {
            guard page.removalsAfter <= cursor.version, page.shortcuts.version <= cursor.version,
                  page.voiceShortcuts.version <= cursor.version else { fail("a page past its cursor's version was read", bytes) }
        }
    }

    static func fail(_ why: String, _ bytes: [UInt8]) -> Never {
        fatalError("\(why): \(String(decoding: bytes.prefix(2_000), as: UTF8.self))")
    }
}
