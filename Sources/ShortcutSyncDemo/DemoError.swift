import APNsStandIn
import Foundation
import Logging
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake

struct DemoError: Error, CustomStringConvertible {
    var description: String
}
