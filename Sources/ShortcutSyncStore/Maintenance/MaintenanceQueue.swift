import Foundation

/// The accounts behind their head, as the maintenance tasks see them (DESIGN §6): take one, fold
/// a batch of its events, record how far it is folded — or park it when its events cannot be
/// folded. `ProjectionStore` is the implementation on PostgreSQL.
public protocol MaintenanceQueue: Sendable {
    /// Takes an account behind and folds up to `batchSize` of its events in one transaction (or
    /// all of them from its first, when a migration marked it to refold); what it did.
    /// `parkedRetry`: the first and the longest pause before a parked account is tried again.
    func foldNextBehind(batchSize: Int, parkedRetry: (first: Duration, longest: Duration)) async throws -> MaintenanceStep
    /// How many accounts are behind their head now.
    func accountsBehind() async throws -> Int64
    /// Takes an account due for compaction under `schedule` (skipping those held), in one
    /// transaction: compacts it if its history past the retention is worth it, and writes when
    /// it is next due; what it did (`ProjectionStore.compactNextDue`).
    func compactNextDue(_ schedule: CompactionSchedule, candidates: Int) async throws -> RetentionStep
}

/// What one step of a maintenance task did.
public enum MaintenanceStep: Sendable {
    /// No account was behind (or every one behind was held by another task).
    case idle
    /// `events` events of `account` were folded (none, for a refold that changed no view).
    case folded(account: UUID, events: Int)
    /// `account`'s events from `version` on could not be folded: it is parked, and tried again later.
    case parked(account: UUID, version: Int64, error: any Error)
}
