import Foundation
import PostgresNIO
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport

/// Creates the account of `devices` and each device (with a made-up token hash), as
/// `POST /v1/accounts` and `POST /v1/devices` would: the operators' commands list only
/// accounts and devices the service registered.
public func register(_ devices: [DeviceScript], client: PostgresClient) async throws {
    let accounts = AccountStore(client: client, logger: TestDatabase.shared.logger)
    for account in Set(devices.map(\.account)) {
        _ = try await accounts.createAccount(id: account, tokenHash: randomHash())
    }
    for (index, device) in devices.enumerated() {
        _ = try await accounts.createDevice(id: device.deviceId, account: device.account, name: "Device \(index + 1)",
                                            platform: ["iOS", "iPadOS", "macOS", "watchOS"][index % 4], tokenHash: randomHash())
    }
}

private func randomHash() -> [UInt8] {
    (0..<32).map { _ in UInt8.random(in: 0...255) }
}

/// Makes `account` (its row and its head, as `POST /v1/accounts` does) unless it exists: the log
/// takes pushes only for accounts that exist.
public func openAccount(_ account: UUID, client: PostgresClient) async throws {
    try await client.query("""
        WITH account AS (
            INSERT INTO accounts (account_id, token_hash) VALUES (\(account), \(ByteBuffer(bytes: randomHash()))) ON CONFLICT DO NOTHING)
        INSERT INTO account_heads (account_id) VALUES (\(account)) ON CONFLICT DO NOTHING
        """, logger: TestDatabase.shared.logger)
}

/// Makes each of `devices` a signed-in device of `account` (a row as `POST /v1/devices` leaves,
/// with a made-up token hash) unless it exists: a learning event's scope may name only a device of
/// its account, and a pull is recorded only for a signed-in device.
public func openDevices(_ devices: some Sequence<UUID>, of account: UUID, client: PostgresClient) async throws {
    for device in Set(devices) {
        try await client.query("""
            INSERT INTO devices (device_id, account_id, name, platform, token_hash)
            VALUES (\(device), \(account), 'Device', 'iOS', \(ByteBuffer(bytes: randomHash())))
            ON CONFLICT DO NOTHING
            """, logger: TestDatabase.shared.logger)
    }
}

/// The devices `events` name: their own, and those of their learning events' scopes.
public func devicesNamed(by events: [AcceptedEvent]) -> Set<UUID> {
    var devices = Set(events.map(\.deviceId))
    for accepted in events {
        if case .device(let device)? = accepted.event.body.learningScope { devices.insert(device) }
    }
    return devices
}
