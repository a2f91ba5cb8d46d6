import Foundation

/// What a pull's cursor says: the view `device` of `account` had at account `version`, in
/// projection `epoch`, with the device's apps at `appsVersion` (0 before it reported any), in the
/// history where `version` was assigned by the push that drew `history`; and, when the answer
/// stopped at its page size, where it stopped (`page`).
/// Devices hold it as opaque text, which the HTTP layer signs.
public struct PullCursor: Sendable, Hashable {
    public var epoch: Int64
    public var account: UUID
    public var device: UUID
    public var appsVersion: Int64
    /// The account version the answer was read at. With no `page`, the device's view is
    /// complete up to it; with one, the next page goes on from there.
    public var version: Int64
    /// The history `version` belongs to: the random value the push that assigned `version` drew
    /// (`events.history`, `account_heads.history`, migration 0027; 0 at version 0, which means the
    /// empty view in every history). Nil in a cursor made before cursors named their history,
    /// or when the service could not tell it: such a cursor is never the base of a diff.
    public var history: Int64?
    /// Where a paged answer stopped (`more: true`); nil when it was the last page.
    public var page: PullPage?

    public init(epoch: Int64, account: UUID, device: UUID, appsVersion: Int64, version: Int64, history: Int64?, page: PullPage? = nil) {
        self.epoch = epoch
        self.account = account
        self.device = device
        self.appsVersion = appsVersion
        self.version = version
        self.history = history
        self.page = page
    }

    /// Where the next answer to `device` of `account` goes on from this cursor — where the
    /// cursor's view is complete, or where its page stopped — when the projections are now in
    /// `epoch`, the device's apps at `appsVersion` and the account at `version`, and the
    /// database's history value of the cursor's own version is `historyAtCursor` (nil: unknown,
    /// e.g. its event compacted away); nil when the device must get its whole view again
    /// (`reset: true`).
    ///
    /// A diff is only right against the view the cursor describes, so any doubt is a reset: a
    /// cursor issued to another account or device, of another epoch (a rebuild was promoted),
    /// made before the device reported other apps (its filter changed), ahead of the account
    /// (it cannot have seen that version), or of another history (a restored backup or a
    /// point-in-time recovery, where its version now means other events), or of none (a cursor
    /// older than histories, or whose version's history the database no longer knows).
    public func resumption(account: UUID, device: UUID, epoch: Int64, appsVersion: Int64, version: Int64,
                           historyAtCursor: Int64?) -> PullPage? {
        guard self.account == account, self.device == device, self.epoch == epoch, self.appsVersion == appsVersion,
              self.version <= version, let history, history == historyAtCursor else { return nil }
        return page ?? PullPage(completeAt: self.version)
    }
}
