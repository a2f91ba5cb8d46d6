import Foundation
import ShortcutSyncDomain
import Testing

/// When a pull may go on from a device's cursor, and when the device gets its whole view again
/// (DESIGN §5).
@Suite struct PullCursorTests {
    let account = UUID(), device = UUID()

    /// A cursor read at account version 40, in epoch 3, with the device's apps at version 2.
    func cursor(page: PullPage? = nil) -> PullCursor {
        PullCursor(epoch: 3, account: account, device: device, appsVersion: 2, version: 40, page: page)
    }

    func resumption(of cursor: PullCursor, account: UUID? = nil, device: UUID? = nil, epoch: Int64 = 3, appsVersion: Int64 = 2,
                    version: Int64 = 45) -> PullPage? {
        cursor.resumption(account: account ?? self.account, device: device ?? self.device, epoch: epoch, appsVersion: appsVersion,
                          version: version)
    }

    @Test func aCompleteCursorGoesOnWithWhatChangedAfterItsVersion() {
        #expect(resumption(of: cursor()) == PullPage(completeAt: 40))
        // Nothing changed since: still a diff, an empty one.
        #expect(resumption(of: cursor(), version: 40) == PullPage(completeAt: 40))
    }

    @Test func aPageCursorGoesOnWhereItsPageStopped() {
        let page = PullPage(removalsAfter: 12, shortcuts: PullPosition(version: 38, key: ShortcutID(bundleId: "com.example.soup", identifier: "leek")),
                            voiceShortcuts: PullPosition(version: 12))
        #expect(resumption(of: cursor(page: page)) == page)
    }

    @Test func aCursorOfAnotherAccountOrDeviceResets() {
        #expect(resumption(of: cursor(), account: UUID()) == nil)
        #expect(resumption(of: cursor(), device: UUID()) == nil)
    }

    @Test func aCursorOfAnotherEpochOrAppsVersionResets() {
        #expect(resumption(of: cursor(), epoch: 4) == nil)
        #expect(resumption(of: cursor(), epoch: 2) == nil)
        #expect(resumption(of: cursor(), appsVersion: 3) == nil)
        #expect(resumption(of: cursor(), appsVersion: 1) == nil)
    }

    @Test func aCursorAheadOfTheAccountResets() {
        #expect(resumption(of: cursor(), version: 39) == nil)
    }
}
