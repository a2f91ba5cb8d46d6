import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// How many bytes of views a pull's page may still take (nil: no bound). A page takes at least
/// one row, whatever its size, so that every page moves on; past the bound it stops, and the
/// rows of its query that were not read are not read at all.
struct PageBytes {
    var left: Int?
    /// Whether a row was left out for want of room.
    private(set) var full = false
    /// The rows taken so far, of every query of the page.
    private var taken = 0

    init(left: Int?) {
        self.left = left
    }

    /// Takes `count` bytes for a row when there is room, or when the page has no row yet; false
    /// when the row does not fit.
    mutating func take(_ count: Int) -> Bool {
        guard let room = left else { return true }
        if count > room, taken > 0 {
            full = true
            return false
        }
        left = room - count
        taken += 1
        return true
    }
}
