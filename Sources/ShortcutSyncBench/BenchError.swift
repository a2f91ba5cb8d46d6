import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
