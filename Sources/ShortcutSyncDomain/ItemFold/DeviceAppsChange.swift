import Foundation

/// A device's latest `appsReported` to write back; `appsChanged` when its set of apps changed.
public struct DeviceAppsChange: Sendable, Hashable {
    public var reported: Stamped<Set<String>>
    public var appsChanged: Bool
}
