import Foundation
import ShortcutSyncDomain
@testable import ShortcutSyncServer
import ShortcutSyncStore
import Testing

/// The signed text of pull cursors, complete and paged (DESIGN §5).
@Suite struct CursorCodecTests {
    let codec = CursorCodec(key: Array("a key for tests, 32 bytes long!!".utf8))
    let account = UUID(), device = UUID()

    func cursor(_ page: PullPage?) -> PullCursor {
        PullCursor(epoch: 3, account: account, device: device, appsVersion: 2, version: 917, history: 8_123_456_789_012, page: page)
    }

    @Test func completeAndPagedCursorsComeBackAsTheyWent() {
        let pages: [PullPage?] = [
            nil,
            PullPage(removalsAfter: 900, shortcuts: PullPosition(version: 905, key: ShortcutID(bundleId: "com.example.soup", identifier: "a:b:c")),
                     voiceShortcuts: PullPosition(version: -1)),
            PullPage(removalsAfter: 917, shortcuts: PullPosition(version: 917),
                     voiceShortcuts: PullPosition(version: 910, key: UUID())),
            PullPage(removalsAfter: 0, shortcuts: PullPosition(version: 0, key: ShortcutID(bundleId: "com.example.tea", identifier: "汤 🍵 ::")),
                     voiceShortcuts: PullPosition(version: 0, key: UUID())),
        ]
        for page in pages {
            let text = codec.text(cursor(page))
            #expect(text.hasPrefix("3."))
            #expect(codec.cursor(text) == cursor(page), "\(text)")
        }
        #expect(codec.text(cursor(nil)).utf8.count < 200)
    }

    /// The longest key a page can stop at (a 255-character bundle id, an identifier of 256 code
    /// points of 4 bytes each), every number at its widest, the history included, still makes a
    /// cursor within the cap, and it comes back.
    @Test func theLongestPagedCursorFitsTheCap() {
        let bundle = "com." + String(repeating: "a", count: 251)
        let identifier = String(repeating: "🍵", count: 256)
        let page = PullPage(removalsAfter: Int64.max, shortcuts: PullPosition(version: Int64.min, key: ShortcutID(bundleId: bundle, identifier: identifier)),
                            voiceShortcuts: PullPosition(version: Int64.min, key: UUID()))
        var longest = cursor(page)
        longest.epoch = Int64.min
        longest.appsVersion = Int64.min
        longest.version = Int64.max
        longest.history = Int64.min
        let text = codec.text(longest)
        #expect(text.utf8.count == 2_079)
        #expect(text.utf8.count <= CursorCodec.maximumTextLength)
        #expect(codec.cursor(text) == longest)
    }

    /// Cursors and tokens already handed out were made with Foundation's base64, its `+` and `/`
    /// replaced and its padding dropped: the text made now is the same, and it reads back.
    @Test func base64URLTextIsWhatFoundationsBase64MadeIt() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let before = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Tokens.base64URL(bytes) == before)
            #expect(CursorCodec.bytes(base64URL: Substring(before)) == bytes)
        }
        #expect(Tokens.base64URL(Array(repeating: 0xfb, count: 6)) == "-_v7-_v7")
        for notBase64URL in ["A", "AAAAA", "+/v7", "A.AA", "ÄAAA"] {
            #expect(CursorCodec.bytes(base64URL: Substring(notBase64URL)) == nil, "\(notBase64URL)")
        }
    }

    @Test func changedOlderOrOverlongTextIsUnknown() {
        let page = PullPage(removalsAfter: 900, shortcuts: PullPosition(version: 905, key: ShortcutID(bundleId: "com.example.soup", identifier: "leek")),
                            voiceShortcuts: PullPosition(version: -1))
        let text = codec.text(cursor(page))
        let parts = text.split(separator: ".")
        #expect(codec.cursor("2.\(parts[1]).\(parts[2])") == nil)  // the format before paging
        var tampered = Array(text)
        tampered[10] = tampered[10] == "A" ? "B" : "A"
        #expect(codec.cursor(String(tampered)) == nil)
        #expect(codec.cursor(text + String(repeating: "A", count: CursorCodec.maximumTextLength)) == nil)
        #expect(CursorCodec(key: Array("another key".utf8)).cursor(text) == nil)
    }

    /// A cursor handed out before cursors named their history (its payload without the field)
    /// still reads, without one: the pull answers it with the whole view, never an error.
    @Test func aCursorWithoutAHistoryReadsWithoutOne() {
        var old = cursor(nil)
        old.history = nil
        let text = codec.text(old)
        #expect(!String(decoding: old.payload, as: UTF8.self).contains(":h"))
        #expect(codec.cursor(text) == old)
        #expect(codec.cursor(text)?.resumption(account: account, device: device, epoch: 3, appsVersion: 2, version: 917,
                                               historyAtCursor: 8_123_456_789_012) == nil)
        #expect(codec.cursor(codec.text(cursor(nil)))?.resumption(account: account, device: device, epoch: 3, appsVersion: 2, version: 917,
                                                                 historyAtCursor: 8_123_456_789_012) == PullPage(completeAt: 917))
    }
}
