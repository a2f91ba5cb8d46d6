import CoreMetrics
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus
import ServiceLifecycle
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore
import Tracing

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
            case .changed(let version, let committedAt, let traceparent):
                // Handed to the connection now: what the device sees, this long after the commit.
                if let committedAt { freshness.streamDelivered(committedAt: committedAt, now: now()) }
                guard let parent = TraceParent.context(traceparent) else {
                    return ArraySlice("event: changed\ndata: {\"version\": \(version)}\n\n".utf8)
                }
                // The message is a span of the change's trace, and names it: the pull it makes the
                // device send carries it back as its `traceparent` (the client library does).
                let span = startSpan("stream: changed", context: parent, ofKind: .producer)
                span.attributes["shortcut_sync.version"] = Int(version)
                defer { span.end() }
                let carried = TraceParent.of(span.context).map { #", "traceparent": "\#($0)""# } ?? ""
                return ArraySlice("event: changed\ndata: {\"version\": \(version)\(carried)}\n\n".utf8)
            case .keepAlive:
                return ArraySlice(": keep-alive\n\n".utf8)
            }
        }
        return .ok(.init(body: .textEventStream(HTTPBody(events, length: .unknown, iterationBehavior: .single))))
    }
}
