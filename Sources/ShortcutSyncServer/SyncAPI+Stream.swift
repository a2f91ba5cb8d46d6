import CoreMetrics
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// Server-Sent Events: `changed` whenever this device's view changes, a comment as keep-alive.
    /// The stream ends when the device is signed out, and when the service shuts down.
    func stream(_ input: Operations.Stream.Input) async throws -> Operations.Stream.Output {
        let (device, account) = try requireDevice()
        let messages = hub.subscribe(account: account, device: device, greeting: true)
        // The mailbox ends on graceful shutdown itself (and holds one pending poke at most).
        let (freshness, now) = (hub.freshness, now)
        let events = messages.map { message -> ArraySlice<UInt8> in
            switch message {
            case .changed(let version, let committedAt):
                // Handed to the connection now: what the device sees, this long after the commit.
                if let committedAt { freshness.streamDelivered(committedAt: committedAt, now: now()) }
                return ArraySlice("event: changed\ndata: {\"version\": \(version)}\n\n".utf8)
            case .keepAlive:
                return ArraySlice(": keep-alive\n\n".utf8)
            }
        }
        return .ok(.init(body: .textEventStream(HTTPBody(events, length: .unknown, iterationBehavior: .single))))
    }
}
