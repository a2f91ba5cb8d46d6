import Foundation
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// A device with its token's hash (none once it signed out), as an export carries it.
public struct ArchivedDevice: Sendable, Hashable {
    public var record: DeviceRecord
    public var tokenHash: [UInt8]?
    /// The line of the file it came from, when imported.
    public var line: Int

    public init(record: DeviceRecord, tokenHash: [UInt8]?, line: Int = 0) {
        self.record = record
        self.tokenHash = tokenHash
        self.line = line
    }
}
