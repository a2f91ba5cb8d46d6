import Foundation
import PostgresNIO
import ShortcutSyncDomain

extension PostgresEventStore {
    /// DESIGN §3, §5: a learning event's `device` scope names a device of the account, signed in
    /// or signed out (so that forgetting a sold iPad still works), never a made-up one or another
    /// account's: each such scope would otherwise be kept in the account's rules, which every fold
    /// reads. Throws a `ValidationError` pointing at each `deviceId` that is not one, before
    /// anything is written. Learning events are rare: a batch without one costs nothing here.
    func requireDevicesOfAccount(in events: [Event], account: UUID) async throws {
        let named = events.indices.compactMap { index -> (index: Int, device: UUID)? in
            guard let scope = events[index].body.learningScope, case .device(let device) = scope else { return nil }
            return (index, device)
        }
        guard !named.isEmpty else { return }
        let devices = Array(Set(named.map(\.device)))
        let known = Set(try await client.guardedQuery(
            "SELECT device_id FROM devices WHERE account_id = \(account) AND device_id = ANY(\(devices))",
            logger: logger).decode(UUID.self).collectAll())
        let unknown = named.filter { !known.contains($0.device) }
        guard unknown.isEmpty else {
            throw ValidationError(unknown.map {
                FieldError(pointer: "/events/\($0.index)/deviceId", detail: "must be a device of this account, signed in or signed out")
            })
        }
    }
}
