import Foundation
import PostgresNIO
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
