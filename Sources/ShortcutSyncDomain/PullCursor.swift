import Foundation

/// What a pull's cursor says: the view `device` of `account` had at account `version`, in
/// projection `epoch`, with the device's apps at `appsVersion` (0 before it reported any); and,
/// when the answer stopped at its page size, where it stopped (`page`).
/// Devices hold it as opaque text, which the HTTP layer signs.
public struct PullCursor: Sendable, Hashable {
    public var epoch: Int64
    public var account: UUID
    public var device: UUID
    public var appsVersion: Int64
    /// The account version the answer was read at. With no `page`, the device's view is
    /// complete up to it; with one, the next page goes on from there.
    public var version: Int64
    /// Where a paged answer stopped (`more: true`); nil when it was the last page.
    public var page: PullPage?

    public init(epoch: Int64, account: UUID, device: UUID, appsVersion: Int64, version: Int64, page: PullPage? = nil) {
        self.epoch = epoch
        self.account = account
        self.device = device
        self.appsVersion = appsVersion
        self.version = version
        self.page = page
    }

    /// Where the next answer to `device` of `account` goes on from this cursor — where the
    /// cursor's view is complete, or where its page stopped — when the projections are now in
    /// `epoch`, the device's apps at `appsVersion` and the account at `version`; nil when the
    /// device must get its whole view again (`reset: true`).
    ///
    /// A diff is only right against the view the cursor describes, so any doubt is a reset: a
    /// cursor issued to another account or device, of another epoch (a rebuild was promoted),
    /// made before the device reported other apps (its filter changed), or ahead of the account
    /// (it cannot have seen that version).
    public func resumption(account: UUID, device: UUID, epoch: Int64, appsVersion: Int64, version: Int64) -> PullPage? {
        guard self.account == account, self.device == device, self.epoch == epoch, self.appsVersion == appsVersion,
              self.version <= version else { return nil }
        return page ?? PullPage(completeAt: self.version)
    }
}
