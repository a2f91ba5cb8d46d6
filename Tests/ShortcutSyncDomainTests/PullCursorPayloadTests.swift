import Foundation
import PropertyBased
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// The payload a pull cursor is signed as (`PullCursor.payload`, read by `PullCursor(payload:)`):
/// what is written reads back the same, and what was not written by it is refused, never trapped
/// on. `.ci/fuzz` fuzzes the reader from `Fuzz/corpus/cursor-payload`; these replay that corpus.
@Suite struct PullCursorPayloadTests {
    static let account = UUID(uuidString: "0E3A1C2B-4D5E-4F60-8A9B-0C1D2E3F4A5B")!
    static let device = UUID(uuidString: "9F8E7D6C-5B4A-4392-8170-6F5E4D3C2B1A")!

    @Test func everyCursorReadsBackAsItWasWritten() async {
        let keys = Gen.int(in: 0...Int(Int32.max)).array(of: 1...12)
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int(Int32.max)), keys) { seed, scalars in
            var rng = SeededGenerator(seed: UInt64(seed))
            let version = Int64.random(in: 0...Int64.max, using: &rng)
            // A history most of the time; none, as cursors made before histories, now and then.
            let history = Int.random(in: 0..<4, using: &rng) == 0 ? nil : Int64.random(in: Int64.min...Int64.max, using: &rng)
            var cursor = PullCursor(epoch: Int64.random(in: Int64.min...Int64.max, using: &rng), account: UUID(), device: UUID(),
                                    appsVersion: Int64.random(in: 0...1_000, using: &rng), version: version, history: history)
            if Bool.random(using: &rng) {
                // An identifier of 1 to 12 characters, colons included, and an emoji; a bundle id with a colon.
                let identifier = String(String.UnicodeScalarView(scalars.map { Unicode.Scalar(UInt32($0 % 0xD7FF) + 1)! })) + "🍅"
                let key: ShortcutID? = Bool.random(using: &rng) ? ShortcutID(bundleId: "com.example.a:b", identifier: identifier) : nil
                cursor.page = PullPage(removalsAfter: Int64.random(in: Int64.min...version, using: &rng),
                                       shortcuts: PullPosition(version: Int64.random(in: 0...version, using: &rng), key: key),
                                       voiceShortcuts: PullPosition(version: Int64.random(in: 0...version, using: &rng),
                                                                    key: Bool.random(using: &rng) ? UUID() : nil))
            }
            #expect(PullCursor(payload: cursor.payload) == cursor)
        }
    }

    @Test func bytesItDidNotWriteAreRefused() {
        let head = "7:\(Self.account):\(Self.device):0:42"
        let refused = [
            "", ":", "7:\(Self.account):\(Self.device):0", head + ":", head + ":1:2:3:4:5",
            "x:\(Self.account):\(Self.device):0:42", "7:not-a-uuid:\(Self.device):0:42", "7:\(Self.account):\(Self.device):0:-1",
            "7:\(Self.account):\(Self.device):0:99999999999999999999",
            head + ":43:0::0::", head + ":0:43::0::", head + ":0:0::43::",      // a page past its cursor
            head + ":0:0:nope:0::", head + ":0:0::0::leftover",               // a key that is not one
            head + ":0:0::0:0:com.example", head + ":0:0::0:11:com.example",    // the bundle id's length outside the key
            head + ":0:0::0:-1:com.example", head + ":0:0::0:x:com.example",
            head + ":0:0::0:1:",                                                // a length with no key: the fuzzer's first find, a trap before
            head + ":h", head + ":hx", head + ":h1:", head + ":h1:2:3:4:5",      // a history that is not one, or no layout after it
            head + ":h1:h2", head + ":h99999999999999999999",
            head + ":h1:43:0::0::",                                             // a page past its cursor, with a history
        ]
        for text in refused { #expect(PullCursor(payload: Array(text.utf8)) == nil, "\(text)") }
        let paged = PullCursor(payload: Array((head + ":40:12::41:16:com.example.soupleek:🍅").utf8))
        #expect(paged?.page?.shortcuts.key == ShortcutID(bundleId: "com.example.soup", identifier: "leek:🍅"))
        #expect(paged?.version == 42 && paged?.page?.removalsAfter == 40 && paged?.page?.voiceShortcuts.key == nil)
        #expect(paged?.history == nil)
        let withHistory = PullCursor(payload: Array((head + ":h-77:40:12::41:16:com.example.soupleek:h🍅").utf8))
        #expect(withHistory?.history == -77 && withHistory?.page?.removalsAfter == 40)
        #expect(withHistory?.page?.shortcuts.key == ShortcutID(bundleId: "com.example.soup", identifier: "leek:h🍅"))
        #expect(PullCursor(payload: Array((head + ":h5").utf8))?.history == 5)
    }

    /// Every input of the fuzzer's corpus: refused, or read back the same once written.
    @Test func theFuzzCorpusReadsBackTheSame() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Fuzz/corpus/cursor-payload").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count >= 5)
        var read = 0
        for file in files {
            guard let cursor = PullCursor(payload: Array(try Data(contentsOf: folder.appending(path: file)))) else { continue }
            read += 1
            #expect(PullCursor(payload: cursor.payload) == cursor, "\(file)")
        }
        #expect(read >= 3, "the corpus holds cursors, not only refusals")
    }
}
