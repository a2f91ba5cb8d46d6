import Foundation
import PostgresNIO
import ShortcutSyncAdmin
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// What a client wrote reaches an operator's terminal as text, never as control characters
/// (issue 56): a device's name holding `ESC ] 0 ;` retitled the terminal, BEL rang it. Rows
/// written before the API refused them still hold them: every table escapes them, `--json`
/// keeps them exact.
@Suite struct AdminControlCharacterTests {
    /// A name that retitles an xterm and rings its bell, with a C1 CSI and a DEL.
    static let name = "Kitchen \u{1B}]0;owned\u{07}iPad\u{9B}2J\u{7F}"
    static let title = "Tomato\u{1B}[31m soup\r\u{08}"
    static let phrase = "order\u{1B}[2J soup"

    /// Every C0 and C1 control character but the line break, which separates the lines.
    static func controls(in output: String) -> [Unicode.Scalar] {
        output.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
    }

    @Test func devicesAndShortcutsShowControlCharactersEscapedAndJSONKeepsThemExact() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            try await register([phone], client: client)
            try await client.query("UPDATE devices SET name = \(Self.name) WHERE device_id = \(phone.deviceId)", logger: logger)
            var log = PushLog(client: client)
            let voice = UUID()
            try await log.push(phone, [phone.donate("tomato", group: "soups\u{07}", title: Self.title, at: 100),
                                       phone.addVoice(voice, phrase: Self.phrase, to: "tomato", at: 110)])

            let admin = Operator(client: client, logger: logger)
            let devices = try await admin.devices(account: phone.account)
            let shortcuts = try await admin.shortcuts(device: phone.deviceId)
            let voices = try await admin.voiceShortcuts(account: phone.account, conflictsOnly: false)
            for (command, text) in [("devices", devices.text), ("shortcuts", shortcuts.text), ("voice-shortcuts", voices.text)] {
                #expect(Self.controls(in: text).isEmpty, "admin \(command): \(text.debugDescription)")
            }
            #expect(devices.text.contains(#"Kitchen \u{1B}]0;owned"#), "\(devices.text)")
            #expect(shortcuts.text.contains(#"Tomato\u{1B}[31m soup"#), "\(shortcuts.text)")
            #expect(voices.text.contains(#"order\u{1B}[2J soup"#), "\(voices.text)")

            // The real executable: tables escaped, JSON exact.
            let database = ["--database-url", url.urlString]
            let commands = [["admin", "devices", "--account", phone.account.uuidString], ["admin", "shortcuts", "--device", phone.deviceId.uuidString],
                            ["admin", "voice-shortcuts", "--account", phone.account.uuidString],
                            ["admin", "events", "--account", phone.account.uuidString]]
            for command in commands {
                let run = try await CommandProcess.run(command + database)
                defer { run.forceStop() }
                #expect(run.exitStatus == 0, "\(command): \(run.errorOutput)")
                #expect(Self.controls(in: run.output).isEmpty, "\(command): \(run.output.debugDescription)")
                #expect(run.output.contains(#"\u{1B}"#), "\(command): \(run.output)")
            }
            let json = try await CommandProcess.run(["admin", "devices", "--account", phone.account.uuidString, "--json"] + database)
            defer { json.forceStop() }
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect((listed["devices"] as? [[String: Any]])?.first?["name"] as? String == Self.name)
            #expect(try JSONDecoder().decode(ShortcutsJSON.self, from: Data(ScriptJSON.encode(shortcuts).utf8)).shortcuts.first?.title == Self.title)
        }
    }

    /// The part of `admin shortcuts --json` this suite reads.
    private struct ShortcutsJSON: Decodable {
        struct Shortcut: Decodable { var title: String }
        var shortcuts: [Shortcut]
    }
}
