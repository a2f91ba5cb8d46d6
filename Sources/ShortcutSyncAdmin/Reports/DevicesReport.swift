import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct DevicesReport: AdminReport {
    public struct Device: Encodable, Sendable, Hashable {
        public var deviceId: UUID
        public var name: String
        public var platform: String
        public var createdAt: Date
        /// When it signed out (its token stopped working), if it did.
        public var revokedAt: Date?
        public var events: Int64
        public var lastAcceptedSeq: Int64
        public var lastEventAt: Date?
        /// The apps it reported last; nil if it never reported (it sees every app's items).
        public var installedApps: [String]?
        /// Its APNs token, abbreviated (first 8 hex digits), if it registered one; its environment.
        public var pushToken: String?
        public var pushEnvironment: String?
        /// Its latest background wake, and how many APNs accepted (DESIGN §6).
        public var lastWakeAt: Date?
        public var wakeCount: Int64
        /// The generation of the account token that signed it in (migration 0021); nil (no
        /// `signedInWith` in JSON) for a device signed in before that migration: not known.
        public var signedInWith: Int?
    }

    public var accountId: UUID
    /// The generation of the account's token now: 1 for the first, one more at every rotation.
    public var accountTokenGeneration: Int
    public var devices: [Device]

    public var text: String {
        var table = TextTable([.init("DEVICE", maxWidth: 36), .init("NAME", maxWidth: 24), .init("PLATFORM"),
                               .init("EVENTS", alignRight: true), .init("LAST SEQ", alignRight: true), .init("LAST EVENT"),
                               .init("APPS"), .init("PUSH TOKEN"), .init("LAST WAKE"), .init("WAKES", alignRight: true),
                               .init("SIGNED IN WITH"), .init("STATUS")])
        for device in devices {
            table.append([device.deviceId.lowercased, device.name, device.platform, "\(device.events)", "\(device.lastAcceptedSeq)",
                          LocalTime.format(device.lastEventAt), device.installedApps.map { "\($0.count) reported" } ?? "all",
                          device.pushToken.map { "\($0) \(device.pushEnvironment ?? "")" } ?? "none",
                          LocalTime.format(device.lastWakeAt), "\(device.wakeCount)", signedInWith(device),
                          device.revokedAt == nil ? "signed in" : "signed out"])
        }
        return table.rendered
    }

    /// Which account token signed the device in: `token 2`, `token 1 (rotated)` when that token
    /// was replaced since (a leaked one's devices are those), `unknown` before migration 0021.
    private func signedInWith(_ device: Device) -> String {
        guard let generation = device.signedInWith else { return "unknown" }
        return generation == accountTokenGeneration ? "token \(generation)" : "token \(generation) (rotated)"
    }
}
