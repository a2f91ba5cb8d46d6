import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

public struct EraseReport: AdminReport {
    public var accountId: UUID
    public var events: Int64
    public var projectionRows: Int64
    public var devices: Int64
    public var accounts: Int64

    public var text: String {
        "Erased account \(accountId.lowercased): \(plural(Int(events), "event")), \(plural(Int(projectionRows), "projection row")), \(plural(Int(devices), "device")) (with their tokens) and the account.\n"
    }
}
