import Foundation
import ShortcutSyncDomain
import Testing

/// When a pull may go on from a device's cursor, and when the device gets its whole view again
/// (DESIGN §5).
@Suite struct PullCursorTests {
    let account = UUID(), device = UUID()

    /// A cursor read at account version 40, in epoch 3, with the device's apps at version 2, in
    /// the history where version 40 has the value 77.
    func cursor(page: PullPage? = nil, history: Int64? = 77) -> PullCursor {
        PullCursor(epoch: 3, account: account, device: device, appsVersion: 2, version: 40, history: history, page: page)
    }

    func resumption(of cursor: PullCursor, account: UUID? = nil, device: UUID? = nil, epoch: Int64 = 3, appsVersion: Int64 = 2,
                    version: Int64 = 45, historyAtCursor: Int64? = 77) -> PullPage? {
        cursor.resumption(account: account ?? self.account, device: device ?? self.device, epoch: epoch, appsVersion: appsVersion,
                          version: version, historyAtCursor: historyAtCursor)
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

    /// A restored backup: version 40 now means other events (another value), or the database no
    /// longer knows its value, or the cursor was made before cursors named their history.
    @Test func aCursorOfAnotherHistoryOrOfNoneResets() {
        #expect(resumption(of: cursor(), historyAtCursor: 78) == nil)
        #expect(resumption(of: cursor(), historyAtCursor: nil) == nil)
        #expect(resumption(of: cursor(history: nil)) == nil)
        #expect(resumption(of: cursor(history: nil), historyAtCursor: nil) == nil)
        let page = PullPage(removalsAfter: 12, shortcuts: PullPosition(version: 38), voiceShortcuts: PullPosition(version: 12))
        #expect(resumption(of: cursor(page: page), historyAtCursor: 78) == nil)
    }
}
