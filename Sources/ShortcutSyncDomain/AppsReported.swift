import Foundation

/// The apps now installed on the reporting device.
public struct AppsReported: Sendable, Hashable, Codable {
    public var installed: [String]

    public init(installed: [String]) {
        self.installed = installed
    }
}
