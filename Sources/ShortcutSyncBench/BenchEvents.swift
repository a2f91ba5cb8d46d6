import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// Event-shaped push bodies, made as text (the load generator's own cost stays small): a
/// donation of about 400 bytes, as DESIGN §8's raw figures assume.
enum BenchEvents {
    static let body = #"{"type":"donation","bundleId":"com.example.soup","identifier":"item-7","kind":"intent","intentType":"OrderSoupIntent","title":"Order a large bowl of tomato soup","subtitle":"From the place around the corner","groupIdentifier":"soups","keywords":["soup","tomato","lunch","order"],"eligibleForSearch":true,"eligibleForPrediction":true,"parameters":{"size":"large","count":2,"extras":["bread","cheese"],"note":"no onions please"}}"#

    /// The donation's fields without its braces, as they follow an event's id, seq and clock.
    static let fields = String(body.dropFirst().dropLast())

    /// `count` events from `seq` on. Made cheaply, since the load generator shares the machine
    /// with what it measures: the fields are cut from `body` once, and the ids come from a
    /// generator seeded once a body (Foundation's `UUID()` opened /dev/urandom for each id, and
    /// making bodies was 40 % of the load generator's CPU in a profile of `bench push`).
    static func pushBody(from seq: Int64, count: Int, identifier: String? = nil) -> String {
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        let fields = identifier.map { Self.fields.replacingOccurrences(of: #""identifier":"item-7""#, with: #""identifier":"\#($0)""#) }
            ?? Self.fields
        var ids = SplitMix64(state: UInt64.random(in: .min ... .max))
        var text = #"{"events":["#
        text.reserveCapacity(count * (fields.utf8.count + 120) + 16)
        for offset in 0..<count {
            if offset > 0 { text += "," }
            text += #"{"id":"\#(ids.nextUUID().uuidString)","seq":\#(seq + Int64(offset)),"hlc":{"wallMillis":\#(wall),"counter":\#(offset)},\#(fields)}"#
        }
        return text + "]}"
    }
}
