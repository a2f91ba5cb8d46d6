import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport

/// Appends pushes to the log and remembers every accepted event per account, as the domain fold needs them.
public struct PushLog {
    public let store: PostgresEventStore
    public private(set) var accepted: [UUID: [AcceptedEvent]] = [:]

    public init(client: PostgresClient) {
        store = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
    }

    @discardableResult
    public mutating func push(_ device: DeviceScript, _ events: [AcceptedEvent]) async throws -> AppendResult {
        let result = try await store.append(events.map(\.event), account: device.account, device: device.deviceId)
        accepted[device.account, default: []] += events
        return result
    }

    /// What the domain says `device` sees, from every event of its account.
    public func expectedView(account: UUID, device: UUID) -> DeviceView {
        AccountState(folding: accepted[account] ?? []).view(forDevice: device)
    }
}
