import Foundation
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import Synchronization
import Testing

/// Pulls are paged (DESIGN §5, "Bounded per person"): at most the page size of items per answer,
/// `more: true` and a cursor to go on; the pages, applied in order, give the current view
/// exactly, even when pushes land between them.
@Suite struct PullPagingTests {
    static let soup = EndToEndTests.soup

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// How many items a page carries.
    static func items(_ page: Components.Schemas.PullResponse) -> Int {
        page.shortcuts.upserted.count + page.shortcuts.removed.count + page.voiceShortcuts.upserted.count + page.voiceShortcuts.removed.count
    }

    static func voice(_ id: UUID, _ phrase: String, to identifier: String) -> EventBody {
        .voiceShortcutAdded(VoiceShortcutAdded(voiceShortcutId: id, phrase: phrase, bundleId: soup, identifier: identifier,
                                               title: "Order \(identifier)"))
    }

    /// The view the domain folds of everything the devices pushed, as `device` sees it.
    static func expected(_ devices: [SimulatedDevice], for device: SimulatedDevice) -> DeviceView {
        AccountState(folding: devices.flatMap(\.accepted)).view(forDevice: device.id)
    }

    /// Pulls page after page from the device's cursor until `more` is false, checking every page
    /// against `pageSize` (a page that says `more` is full, unless the device's apps filter some
    /// of its rows out); `between` runs after each page but the last (pushes landing between
    /// pages) and returns a version the next page waits for. Returns the pages.
    @discardableResult
    static func walk(
        _ device: SimulatedDevice, pageSize: Int, waitFor version: Int64? = nil, fresh: Bool = false, filtered: Bool = false,
        between: (Int) async throws -> Int64? = { _ in nil }
    ) async throws -> [Components.Schemas.PullResponse] {
        var pages = [try await device.pullPage(waitFor: version, fresh: fresh)]
        while pages.last!.more {
            if !filtered { #expect(items(pages.last!) == pageSize, "a page that says more is full") }
            let next = try await between(pages.count)
            pages.append(try await device.pullPage(waitFor: next))
            #expect(!pages.last!.reset, "a later page never resets")
            #expect(pages.count < 200, "the walk ends")
            if pages.count >= 200 { break }
        }
        for page in pages { #expect(items(page) <= pageSize) }
        return pages
    }

    /// With a small page size, an account's view comes in full pages, `more: true` until the last
    /// (which is not empty: `more` is known from the rows, not guessed), and the pages applied in
    /// order are the whole view; a device whose apps hide some shortcuts still gets every page.
    @Test func aViewLargerThanAPageComesInFullPagesThatMakeTheWholeView() async throws {
        try await TestServer.with(pullPageSize: 7) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let watch = try await server.createDevice(accountToken: account.token, name: "Watch", platform: .watchOS)
            let t0 = Self.now() - 60_000
            for index in 0..<30 { phone.record(EndToEndTests.donation(String(format: "soup-%02d", index)), at: t0 + Int64(index)) }
            for index in 0..<5 { phone.record(Self.voice(UUID(), "Soup number \(index)", to: String(format: "soup-%02d", index)), at: t0 + 100) }
            // The watch has no soup app: it sees no shortcut, yet pages over every row.
            watch.record(.appsReported(AppsReported(installed: ["com.example.tea"])), at: t0 + 200)
            try await phone.push()
            let version = try await watch.push()

            let pages = try await Self.walk(mac, pageSize: 7, waitFor: version, fresh: true)
            #expect(pages.map(\.more) == [true, true, true, true, false])  // 35 items: 5 pages of 7
            #expect(pages.map(Self.items) == [7, 7, 7, 7, 7])
            #expect(pages.map(\.reset) == [true, false, false, false, false])
            #expect(mac.view.shortcuts.count == 30 && mac.view.voiceShortcuts.count == 5)
            #expect(mac.view == Self.expected([phone, watch], for: mac))

            let watchPages = try await Self.walk(watch, pageSize: 7, fresh: true, filtered: true)
            #expect(watchPages.count == 5)
            #expect(watchPages.prefix(4).allSatisfy { $0.shortcuts.upserted.isEmpty })  // filtered after reading
            #expect(watch.view.shortcuts.isEmpty && watch.view.voiceShortcuts.count == 5)
            #expect(watch.view == Self.expected([phone, watch], for: watch))

            // Nothing changed: a pull with the last cursor is one empty page.
            let again = try await mac.pullPage()
            #expect(!again.reset && !again.more && Self.items(again) == 0)
        }
    }

    /// Pushes land between the pages of a first (reset) pull: items already delivered are
    /// changed and deleted, new ones come, a voice shortcut is deleted and one renamed. The pages
    /// still end in exactly the current view, as does a diff pull after many changes, itself paged.
    @Test func pushesBetweenPagesStillEndInExactlyTheCurrentView() async throws {
        try await TestServer.with(pullPageSize: 5) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            var clock = Self.now() - 120_000
            func tick() -> Int64 { clock += 1; return clock }
            let voices = (0..<4).map { _ in UUID() }
            for index in 0..<20 { phone.record(EndToEndTests.donation(String(format: "soup-%02d", index), group: index.isMultiple(of: 2) ? "even" : nil), at: tick()) }
            for (index, id) in voices.enumerated() { phone.record(Self.voice(id, "Phrase \(index)", to: String(format: "soup-%02d", index)), at: tick()) }
            let start = try await phone.push()

            var delivered: [[String]] = []
            try await Self.walk(mac, pageSize: 5, waitFor: start, fresh: true) { page in
                delivered.append(mac.view.shortcuts.keys.map(\.identifier).sorted())
                let seen = delivered.last!
                switch page {
                case 1:
                    // Change and delete what this page delivered; add new items.
                    #expect(seen.count == 5)
                    phone.record(EndToEndTests.donation(seen[0], title: "Changed \(seen[0])"), at: tick())
                    phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .identifiers([seen[1], seen[2]]))), at: tick())
                    for index in 0..<3 { phone.record(EndToEndTests.donation("new-\(index)"), at: tick()) }
                case 2:
                    // A group deletion reaches delivered and undelivered items alike; a voice shortcut goes.
                    phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .groupIdentifier("even"))), at: tick())
                    phone.record(.voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voices[0])), at: tick())
                case 4:
                    // Once voice shortcuts were delivered: one renamed, one deleted, a deleted shortcut back.
                    phone.record(.voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: voices[1], phrase: "Renamed")), at: tick())
                    phone.record(.voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: voices[2])), at: tick())
                    phone.record(EndToEndTests.donation("soup-01", title: "Back again"), at: tick())
                default:
                    return nil
                }
                return try await phone.push()
            }
            #expect(delivered.count >= 4, "the pushes of pages 1, 2 and 4 landed between pages")
            let current = Self.expected([phone], for: mac)
            #expect(mac.view == current)
            #expect(mac.view.voiceShortcuts[voices[0]] == nil && mac.view.voiceShortcuts[voices[1]]?.phrase == "Renamed")
            #expect(!mac.view.shortcuts.keys.contains { $0.identifier == "soup-02" })
            #expect(mac.view.shortcuts[ShortcutID(bundleId: Self.soup, identifier: "soup-01")]?.title == "Back again")

            // Many changes after a complete view: the diff pull is paged too, and pushes between its pages count.
            for index in 0..<10 { phone.record(EndToEndTests.donation("later-\(index)"), at: tick()) }
            for index in 1..<12 where !index.isMultiple(of: 2) {
                phone.record(EndToEndTests.donation(String(format: "soup-%02d", index), title: "Later title \(index)"), at: tick())
            }
            phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .identifiers(["new-0", "new-1", "soup-13", "soup-15"]))), at: tick())
            let changed = try await phone.push()
            let diff = try await Self.walk(mac, pageSize: 5, waitFor: changed) { page in
                guard page == 1 else { return nil }
                phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .identifiers(["later-0", "soup-17"]))), at: tick())
                phone.record(EndToEndTests.donation("latest"), at: tick())
                return try await phone.push()
            }
            #expect(diff.count >= 4)
            #expect(!diff[0].reset && diff[0].more)
            #expect(diff.map(\.reset).allSatisfy { !$0 })
            #expect(mac.view == Self.expected([phone], for: mac))
            #expect(mac.view.shortcuts.keys.contains { $0.identifier == "latest" })
            #expect(!mac.view.shortcuts.keys.contains { $0.identifier == "later-0" })

            // A fresh device, paging the same account now, gets the same view.
            let pad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            try await Self.walk(pad, pageSize: 5, fresh: true)
            #expect(pad.view == mac.view)
        }
    }

    /// With the real page size of 1,000: 2,300 shortcuts pushed as 500-event pushes come in pages
    /// of 1,000, 1,000 and 300; a diff after 1,200 changes is paged at 1,000 too.
    @Test func theRealPageSizeIsAThousandItems() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let t0 = Self.now() - 100_000
            var version: Int64 = 0
            for batch in stride(from: 0, to: 2_300, by: 500) {
                for index in batch..<min(batch + 500, 2_300) {
                    phone.record(EndToEndTests.donation(String(format: "item-%04d", index)), at: t0 + Int64(index))
                }
                version = try await phone.push()
            }
            #expect(phone.accepted.count == 2_300)

            let pages = try await Self.walk(mac, pageSize: ProjectionStore.defaultPullPageSize, waitFor: version, fresh: true)
            #expect(pages.map(Self.items) == [1_000, 1_000, 300])
            #expect(pages.map(\.more) == [true, true, false])
            #expect(mac.view.shortcuts.count == 2_300)
            #expect(mac.view == Self.expected([phone], for: mac))

            // 1,200 changes (1,000 titles, 200 deletions) since the mac's cursor: a diff of 1,000 then 200.
            for index in 0..<1_000 {
                phone.record(EndToEndTests.donation(String(format: "item-%04d", index * 2), title: "Again \(index)"), at: t0 + 3_000 + Int64(index))
                if phone.outbox.count == 500 { version = try await phone.push() }
            }
            let deleted = (0..<200).map { String(format: "item-%04d", $0 * 2 + 1) }
            phone.record(.deletion(Deletion(bundleId: Self.soup, selector: .identifiers(deleted))), at: t0 + 5_000)
            version = try await phone.push()
            let diff = try await Self.walk(mac, pageSize: ProjectionStore.defaultPullPageSize, waitFor: version)
            #expect(diff.map(Self.items) == [1_000, 200])
            #expect(diff.map(\.reset) == [false, false])
            #expect(mac.view.shortcuts.count == 2_100)
            #expect(mac.view == Self.expected([phone], for: mac))
        }
    }

    /// The client library follows `more` at once and publishes the view only when its last page
    /// is applied; an app killed between pages reopens with the last whole view and goes on
    /// where it stopped (no reset), ending with the whole view.
    @Test func theClientLibraryFollowsPagesAndNeverShowsPartOfAView() async throws {
        try await TestServer.with(pullPageSize: 4) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let macDevice = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let t0 = Self.now() - 60_000
            for index in 0..<15 { phone.record(EndToEndTests.donation(String(format: "soup-%02d", index)), at: t0 + Int64(index)) }
            phone.record(Self.voice(UUID(), "Soup please", to: "soup-03"), at: t0 + 50)
            let version = try await phone.push()
            try await phone.pull(waitFor: version)
            #expect(phone.view.shortcuts.count == 15)
            let storage = ClientLibraryTests.storage()
            defer { try? FileManager.default.removeItem(atPath: storage) }

            // The first app pulls and publishes the whole view; what it shows between pages is the view before.
            let watcher = PageWatcher()
            let mac = try ClientLibraryTests.client(server, token: macDevice.token, storage: storage) { watcher.wrap($0) }
            watcher.client.withLock { $0 = mac }
            try await mac.sync()
            #expect(watcher.answers.map(\.more) == [true, true, true, false])  // 16 items, 4 a page
            #expect(watcher.shownWhilePaging.allSatisfy { $0.shortcuts.isEmpty })
            #expect(watcher.shownWhilePaging.count == 3)
            #expect(await mac.currentView == phone.view)
            #expect(await mac.shortcuts().count == 15)

            // 9 more donations; the app dies after its second page.
            for index in 15..<24 { phone.record(EndToEndTests.donation(String(format: "soup-%02d", index)), at: t0 + Int64(index)) }
            try await phone.pull(waitFor: try await phone.push())
            do {
                let dying = PageWatcher(failingAfter: 2)
                let killed = try ClientLibraryTests.client(server, token: macDevice.token, storage: storage) { dying.wrap($0) }
                await #expect(throws: PageWatcher.Died.self) { try await killed.sync() }
                #expect(dying.answers.map(\.more) == [true, true])
                #expect(await killed.currentView.shortcuts.count == 15)  // the last whole view, not a part
            }
            let reopenedWatcher = PageWatcher()
            let reopened = try ClientLibraryTests.client(server, token: macDevice.token, storage: storage) { reopenedWatcher.wrap($0) }
            #expect(await reopened.currentView.shortcuts.count == 15)
            try await reopened.sync()
            #expect(reopenedWatcher.answers.first?.reset == false)  // it went on from the page it had
            #expect(reopenedWatcher.answers.last?.more == false)
            #expect(await reopened.currentView == phone.view)
            #expect(await reopened.shortcuts().count == 24)
        }
    }
}

/// Passes pulls through, remembering every answer and, before handing on a page that follows
/// another, what the client shows at that moment; with `failingAfter`, dies once that many pages came.
final class PageWatcher: Sendable {
    struct Died: Error {}

    let client = Mutex<ShortcutSyncClient?>(nil)
    private let state = Mutex<(answers: [PullAnswer], shown: [DeviceView])>(([], []))
    private let failingAfter: Int?

    init(failingAfter: Int? = nil) {
        self.failingAfter = failingAfter
    }

    var answers: [PullAnswer] { state.withLock { $0.answers } }
    var shownWhilePaging: [DeviceView] { state.withLock { $0.shown } }

    func wrap(_ real: any SyncTransport) -> any SyncTransport {
        Transport(real: real, watcher: self)
    }

    private struct Transport: SyncTransport {
        let real: any SyncTransport
        let watcher: PageWatcher

        func push(_ events: [Event]) async throws -> PushOutcome {
            try await real.push(events)
        }

        func pull(cursor: String?, waitFor version: Int64?, timeoutMillis: Int?) async throws -> PullAnswer {
            let count = watcher.answers.count
            if let limit = watcher.failingAfter, count >= limit { throw Died() }
            if let last = watcher.answers.last, last.more, let client = watcher.client.withLock({ $0 }) {
                // Pages applied so far are not shown: the client still shows the view before them.
                let shown = await client.currentView
                watcher.state.withLock { $0.shown.append(shown) }
            }
            let answer = try await real.pull(cursor: cursor, waitFor: version, timeoutMillis: timeoutMillis)
            watcher.state.withLock { $0.answers.append(answer) }
            return answer
        }

        func pokes() async throws -> AsyncThrowingStream<Int64, any Error> {
            try await real.pokes()
        }
    }
}
