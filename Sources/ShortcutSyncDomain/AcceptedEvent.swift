import Foundation

/// An event the service accepted from one of an account's devices.
public struct AcceptedEvent: Sendable, Hashable {
    public var deviceId: UUID
    public var event: Event

    public init(deviceId: UUID, event: Event) {
        self.deviceId = deviceId
        self.event = event
    }

    /// The merge order of DESIGN §3: `(hlc.wallMillis, hlc.counter, deviceId, seq)`.
    public var key: EventKey {
        EventKey(hlc: event.hlc, deviceId: deviceId, seq: event.seq)
    }
}
