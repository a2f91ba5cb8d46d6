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

    static func pushBody(from seq: Int64, count: Int, identifier: String? = nil) -> String {
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        var text = #"{"events":["#
        for offset in 0..<count {
            if offset > 0 { text += "," }
            var fields = body.dropFirst().dropLast()
            var custom = String(fields)
            if let identifier { custom = custom.replacingOccurrences(of: #""identifier":"item-7""#, with: #""identifier":"\#(identifier)""#) }
            fields = Substring(custom)
            text += #"{"id":"\#(UUID().uuidString)","seq":\#(seq + Int64(offset)),"hlc":{"wallMillis":\#(wall),"counter":\#(offset)},\#(fields)}"#
        }
        return text + "]}"
    }
}
