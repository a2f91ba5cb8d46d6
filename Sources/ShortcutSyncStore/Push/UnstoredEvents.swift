import Foundation
import Logging
import PostgresNIO
import ShortcutSyncDomain

/// The events a statement appends itself, after `afterVersion`, with their stored bodies (made
/// once, for the insert).
struct UnstoredEvents {
    var afterVersion: Int64
    var events: ArraySlice<Event>
    var bodies: [String]

    static let none = UnstoredEvents(afterVersion: 0, events: [], bodies: [])

    func event(at version: Int64) -> (body: String, hlc: HLCTimestamp)? {
        guard version > afterVersion, version - afterVersion <= Int64(bodies.count) else { return nil }
        let offset = Int(version - afterVersion - 1)
        return (bodies[offset], events[events.index(events.startIndex, offsetBy: offset)].hlc)
    }
}
