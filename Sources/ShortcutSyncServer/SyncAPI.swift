import CoreMetrics
import Foundation
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

/// The handlers of the operations in `openapi.yaml`; one extension per area, one file each.
///
/// Handlers throw `APIProblem` for anything the caller did wrong; `ProblemMiddleware` renders it.
struct SyncAPI: APIProtocol {
    let accounts: AccountStore
    /// The log pushes and sign-outs are appended to (`PostgresEventStore` on PostgreSQL).
    let events: any EventStore
    let projections: ProjectionStore
    let migrator: Migrator
    let hub: NotificationHub
    /// Pokes the streams of accounts a push changed, here at once and on the other servers soon.
    let announcer: ChangeAnnouncer
    /// Devices' push tokens (DESIGN §6): registered here, and each pull recorded, so that the
    /// waker wakes only the devices that did not pull a change.
    let pushTokens: PushTokenStore
    /// What each device has of its account, recorded by its complete pulls (`GET /v1/devices`,
    /// and no wake for a device that has its account's version).
    let deviceSync: DeviceSyncStore
    /// Whether wakes can be sent (`/readyz`): off without a key, else what APNs said of it.
    let wakes: @Sendable () -> WakeReadiness
    /// A push that could not fold (its account is behind) says so: the maintenance tasks of this
    /// process, if it runs them, look at once.
    let accountBehind: @Sendable () -> Void
    /// `/readyz` reports `degraded` while more events than this wait to be folded.
    let degradedLag: Int64
    /// The most signed-in devices an account may have (DESIGN §5).
    var maximumDevices = Limits.maxDevicesPerAccount
    /// The apps a device may register a push token for (`ServerConfiguration.acceptedTopics`); empty: any.
    let acceptedTopics: Set<String>
    /// Each device's budget of pulls and suggestion requests (`ServerConfiguration.deviceReadsPerSecond`).
    let reads: Budget
    /// Each account's budgets of sign-ins and of sign-outs (`ServerConfiguration.deviceSignInsPerHour`).
    let signIns: Budget
    let signOuts: Budget
    /// Each account's pushes under way (admitted by `PushAdmissionMiddleware`, counted on `/metrics`).
    let pushesInFlight: PushesInFlight
    /// Signs and checks pull cursors with the database's key, read on first use.
    let cursors = CursorCodecCache()
    /// What `/readyz` learns from the database, at most once a second whoever asks.
    let readiness = RecentValue<(upToDate: Bool, status: MaintenanceStatus?, nodesAway: [String])>(interval: .seconds(1))
    let logger: Logger
    /// Epoch milliseconds now; the clock that `hlc.wallMillis` may not run ahead of.
    let now: @Sendable () -> Int64

    // MARK: Authentication

    // `AuthenticationMiddleware` checked the token before the body was read; these say whether
    // it was the kind of token the operation needs.

    func requireAdmin() throws {
        guard case .admin = Caller.current else { throw APIProblem.unauthorized }
    }

    func requireAccount() throws -> UUID {
        guard case .account(let account) = Caller.current else { throw APIProblem.unauthorized }
        return account
    }

    /// The calling device, charged one read of its budget: `429` with `Retry-After` past it.
    func requireDeviceRead() throws -> (device: UUID, account: UUID) {
        let caller = try requireDevice()
        if let wait = reads.charge(caller.device, 1) {
            ServerMetrics.readsOverBudget.increment()
            throw APIProblem.readsOverBudget(retryAfter: wait, reads)
        }
        return caller
    }

    func requireDevice() throws -> (device: UUID, account: UUID) {
        guard case .device(let device, let account) = Caller.current else { throw APIProblem.unauthorized }
        return (device, account)
    }
}
