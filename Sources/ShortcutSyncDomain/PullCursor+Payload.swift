import Foundation

extension PullCursor {
    /// The cursor as the bytes the HTTP layer signs (`CursorCodec`): its fields joined by `:`,
    /// `epoch:account:device:appsVersion:version:h<history>`, and for a page that stopped short, then
    /// `removalsAfter:voiceVersion:voiceKey:shortcutVersion:bundleIdLength:bundleId+identifier`.
    /// The shortcut's key comes last, its bundle id's length (in UTF-8 bytes) first, so that
    /// neither needs escaping. The history's field is told by its `h` (no other field there
    /// starts with one); a cursor without a history (made before cursors named one) has none,
    /// and reads back so: a reset at the pull, never an error.
    public var payload: [UInt8] {
        var fields = [String(epoch), account.uuidString.lowercased(), device.uuidString.lowercased(),
                      String(appsVersion), String(version)]
        if let history { fields.append("h" + String(history)) }
        if let page {
            let shortcut = page.shortcuts.key
            fields += [String(page.removalsAfter),
                       String(page.voiceShortcuts.version), page.voiceShortcuts.key?.uuidString.lowercased() ?? "",
                       String(page.shortcuts.version), shortcut.map { String($0.bundleId.utf8.count) } ?? "",
                       shortcut.map { $0.bundleId + $0.identifier } ?? ""]
        }
        return Array(fields.joined(separator: ":").utf8)
    }

    /// The cursor of `payload`, or nil for bytes that are not one (what `payload` makes, read
    /// back: the fields it names, the history's when there is one, a page's versions not past
    /// the cursor's, a bundle id's length inside the key). Only signed payloads reach it, but it is written, and fuzzed
    /// (`Fuzz/ClientBytesFuzz`), as a reader of a stranger's bytes.
    public init?(payload: [UInt8]) {
        func split(_ maxSplits: Int) -> [String] {
            payload.split(separator: UInt8(ascii: ":"), maxSplits: maxSplits, omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
        }
        // With a history the key is the twelfth field, without one the eleventh.
        var fields = split(11)
        var history: Int64?
        if fields.count >= 6, fields[5].hasPrefix("h") {
            guard let value = Int64(fields[5].dropFirst()) else { return nil }
            history = value
            fields.remove(at: 5)
        } else {
            fields = split(10)
        }
        guard fields.count == 5 || fields.count == 11, let epoch = Int64(fields[0]),
              let account = UUID(canonical: fields[1]), let device = UUID(canonical: fields[2]),
              let appsVersion = Int64(fields[3]), let version = Int64(fields[4]), version >= 0 else { return nil }
        self.init(epoch: epoch, account: account, device: device, appsVersion: appsVersion, version: version, history: history)
        guard fields.count == 11 else { return }
        guard let removalsAfter = Int64(fields[5]), let voiceVersion = Int64(fields[6]), let shortcutVersion = Int64(fields[8]),
              voiceVersion <= version, shortcutVersion <= version, removalsAfter <= version else { return nil }
        let voiceKey: UUID?
        if fields[7].isEmpty {
            voiceKey = nil
        } else {
            guard let id = UUID(canonical: fields[7]) else { return nil }
            voiceKey = id
        }
        let shortcutKey: ShortcutID?
        if fields[9].isEmpty {
            guard fields[10].isEmpty else { return nil }
            shortcutKey = nil
        } else {
            let key = Array(fields[10].utf8)
            // Compared one bound at a time: `1..<key.count` would trap for an empty key.
            guard let bundleLength = Int(fields[9]), bundleLength >= 1, bundleLength < key.count else { return nil }
            shortcutKey = ShortcutID(bundleId: String(decoding: key[..<bundleLength], as: UTF8.self),
                                     identifier: String(decoding: key[bundleLength...], as: UTF8.self))
        }
        page = PullPage(removalsAfter: removalsAfter,
                        shortcuts: PullPosition(version: shortcutVersion, key: shortcutKey),
                        voiceShortcuts: PullPosition(version: voiceVersion, key: voiceKey))
    }
}
