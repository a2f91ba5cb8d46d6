import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import ShortcutSyncStore

/// One sample account: its devices, its reader's cursor and the donations it expects.
struct SampleAccount: Sendable {
    var pusher: String
    var reader: String
    /// Its reader's place on the `StreamBoard`.
    var index: Int
    var nextSeq: Int64 = 1
    var samples = 0
    var cursor: String?
    /// Donations pushed per identifier.
    var donations: [String: Int] = [:]

    init(pusher: String, reader: String, index: Int) {
        self.pusher = pusher
        self.reader = reader
        self.index = index
    }
}
