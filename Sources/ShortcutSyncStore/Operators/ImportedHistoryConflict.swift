import Foundation
import ShortcutSyncDomain

/// An import refused because the database holds the account with another history than the
/// file's: a compacted file into an account stored uncompacted or with another horizon (or
/// another snapshot at the same one). Two histories cut at different places cannot be merged
/// event by event: the events one compacted away are gone from the other's file. Nothing of the
/// file is stored.
public struct ImportedHistoryConflict: Error, Sendable, Hashable {
    public var account: UUID
    /// The line of the file's horizon.
    public var line: Int
    /// The file's horizon.
    public var file: AccountHorizon
    /// The account's horizon in the database, nil when it is not compacted there.
    public var stored: AccountHorizon?
    /// The account's version in the database.
    public var storedVersion: Int64
}
