import Foundation
import ShortcutSyncDomain
import ShortcutSyncStore

/// How far `admin compact` compacts each account.
public enum CompactTarget: Sendable, Hashable {
    /// Through the account's head (its greatest clean cut).
    case head
    /// Through this account version at most (`--through`).
    case through(Int64)
    /// Through the last version recorded before this time at most (`--before`).
    case before(Date)
}

extension Operator {
    /// Compacts `account`'s history (every account's when nil, listed as `accounts()` lists them,
    /// one at a time, each in its own transaction) through the greatest clean cut the target allows
    /// (`ProjectionStore.compact`); `dryRun` changes nothing and says what it would free.
    /// `progress` hears how many accounts are done of how many.
    public func compact(
        account: UUID?, target: CompactTarget, dryRun: Bool,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) async -> Void = { _, _ in }
    ) async throws -> CompactReport {
        let accounts: [UUID]
        if let account {
            try await requireAccount(account)
            accounts = [account]
        } else {
            accounts = try await store.accounts().map(\.accountId)
        }
        let projections = ProjectionStore(client: client, logger: logger)
        var report = CompactReport(dryRun: dryRun, accounts: [])
        await progress(0, accounts.count)
        for (index, id) in accounts.enumerated() {
            let through: Int64 = switch target {
            case .head: .max
            case .through(let version): version
            case .before(let time): try await projections.lastVersion(of: id, recordedBefore: time)
            }
            do {
                report.accounts.append(.init(try await projections.compact(account: id, through: through, dryRun: dryRun)))
            } catch AppendError.accountUnknown where account == nil {
                // Erased since it was listed: nothing of it to compact.
            } catch AppendError.accountUnknown {
                throw noAccount(id)
            }
            await progress(index + 1, accounts.count)
        }
        return report
    }

    /// "compacted through version H (time)", as the commands that read history say it.
    static func compactedThrough(_ horizon: AccountHorizon) -> String {
        let time = Date(timeIntervalSince1970: Double(horizon.key.hlc.wallMillis) / 1000)
        return "compacted through version \(horizon.version) (\(ISO8601.format(time)))"
    }

    /// The refusal of a replay (`shortcuts --at/--as-of`) of a compacted account: its events up to
    /// the horizon are gone, and a replay folds the log from its first event.
    func replayRefused(account: UUID, device: UUID, horizon: AccountHorizon, prefix: LogPrefix) -> AdminUsageError {
        let before = switch prefix {
        case .all: false
        case .throughVersion(let version): version < horizon.version
        case .recordedBy(let time): time.timeIntervalSince1970 * 1000 < Double(horizon.key.hlc.wallMillis)
        }
        let said = "account \(account.lowercased) is \(Self.compactedThrough(horizon))"
        return AdminUsageError(before
            ? "\(said): its history before that is gone; `shortcut-sync admin shortcuts --device \(device.lowercased)` shows the view now"
            : "\(said): a replay folds the log from its first event, which is gone; `shortcut-sync admin shortcuts --device \(device.lowercased)` shows the view now")
    }

    /// The refusal of `events --after V` with V before the horizon.
    func eventsRefused(account: UUID, horizon: AccountHorizon) -> AdminUsageError {
        AdminUsageError("account \(account.lowercased) is \(Self.compactedThrough(horizon)): its events start after it (--after \(horizon.version) or later)")
    }
}
