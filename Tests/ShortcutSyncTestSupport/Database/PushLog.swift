import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport

/// Appends pushes to the log and remembers every accepted event per account, as the domain fold needs them.
public struct PushLog {
    public let store: PostgresEventStore
    public private(set) var accepted: [UUID: [AcceptedEvent]] = [:]
    /// Accounts made (or found) by this log: a push to any other makes it first.
    private var opened: Set<UUID> = []
    /// Devices made (or found) by this log: those a push names (`devicesNamed(by:)`).
    private var openedDevices: Set<UUID> = []

    public init(client: PostgresClient) {
        store = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
    }

    @discardableResult
    public mutating func push(_ device: DeviceScript, _ events: [AcceptedEvent]) async throws -> AppendResult {
        if opened.insert(device.account).inserted { try await openAccount(device.account, client: store.client) }
        let named = devicesNamed(by: events)
        try await openDevices(named.subtracting(openedDevices), of: device.account, client: store.client)
        openedDevices.formUnion(named)
        let result = try await store.append(events.map(\.event), account: device.account, device: device.deviceId)
        accepted[device.account, default: []] += events
        return result
    }

    /// Remembers events pushed some other way (by a concurrent task), as if pushed here.
    public mutating func record(_ device: DeviceScript, _ events: [AcceptedEvent]) {
        accepted[device.account, default: []] += events
    }

    /// What the domain says `device` sees, from every event of its account.
    public func expectedView(account: UUID, device: UUID) -> DeviceView {
        AccountState(folding: accepted[account] ?? []).view(forDevice: device)
    }
}

extension PushLog {
    /// A log of `pushes` random pushes of `scenario`, whose accounts and devices are registered first.
    public static func registering(_ scenario: inout Scenario, pushes: Int, client: PostgresClient) async throws -> PushLog {
        try await register(scenario.devices, client: client)
        var log = PushLog(client: client)
        for _ in 0..<pushes {
            let (device, events) = scenario.push()
            try await log.push(device, events)
        }
        return log
    }
}
