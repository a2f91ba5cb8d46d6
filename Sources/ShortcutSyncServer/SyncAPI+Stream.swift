import CoreMetrics
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// Server-Sent Events: `changed` whenever this device's view changes, a comment as keep-alive.
    func stream(_ input: Operations.Stream.Input) async throws -> Operations.Stream.Output {
        let (device, account) = try await requireDevice()
        let messages = hub.subscribe(account: account, device: device, greeting: true)
        let events = messages.map { message -> ArraySlice<UInt8> in
            switch message {
            case .changed(let position): ArraySlice("event: changed\ndata: {\"position\": \(position)}\n\n".utf8)
            case .keepAlive: ArraySlice(": keep-alive\n\n".utf8)
            }
        }
        return .ok(.init(body: .textEventStream(HTTPBody(events, length: .unknown, iterationBehavior: .single))))
    }
}
