import EmbeddedPostgres
import Foundation
import PostgresNIO
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// `shortcut-sync admin` as operators run it: the real executable, its output and exit status.
@Suite struct AdminCommandLineTests {
    @Test func exitStatusesSayWhatWentWrong() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100)])
            let database = ["--database-url", url.urlString]

            let accounts = try await CommandProcess.run(["admin", "accounts", "--json"] + database)
            defer { accounts.forceStop() }
            #expect(accounts.exitStatus == 0)
            let listed = try JSONSerialization.jsonObject(with: Data(accounts.output.utf8)) as? [String: [[String: Any]]]
            #expect((listed?["accounts"]?.first?["accountId"] as? String).flatMap(UUID.init(uuidString:)) == phone.account)
            #expect(listed?["accounts"]?.first?["events"] as? Int == 1)

            let badId = try await CommandProcess.run(["admin", "devices", "--account", "nope"] + database)
            defer { badId.forceStop() }
            #expect(badId.exitStatus == 2)
            #expect(badId.errorOutput.contains("'nope' is invalid"))

            // Given in the environment, a password draws no warning: standard error is the error alone.
            let unknown = try await CommandProcess.run(["admin", "devices", "--account", UUID().uuidString], environment: ["DATABASE_URL": url.urlString])
            defer { unknown.forceStop() }
            #expect(unknown.exitStatus == 2)
            #expect(unknown.errorOutput.hasPrefix("error: there is no account"))

            let port = try EmbeddedPostgres.freeLoopbackPort()
            let unreachable = try await CommandProcess.run(["admin", "accounts"], environment: ["DATABASE_URL": "postgres://nobody:secret@127.0.0.1:\(port)/nothing"])
            defer { unreachable.forceStop() }
            #expect(unreachable.exitStatus == 3)
            #expect(unreachable.errorOutput.hasPrefix("error: cannot reach PostgreSQL at 127.0.0.1:\(port)"))
            #expect(!unreachable.errorOutput.contains("secret"))

            let clean = try await CommandProcess.run(["admin", "verify"] + database)
            defer { clean.forceStop() }
            #expect(clean.exitStatus == 0)
            #expect(clean.output.contains("of 1 account equal a replay of their log"))
            try await client.query("UPDATE projection_shortcuts SET view = jsonb_set(view, '{title}', '\"Tampered\"')", logger: logger)
            let tampered = try await CommandProcess.run(["admin", "verify"] + database)
            defer { tampered.forceStop() }
            #expect(tampered.exitStatus == 1)
            #expect(tampered.output.contains("com.example.soup/tomato") && tampered.output.contains("Tampered"))

            let unconfirmed = try await CommandProcess.run(["admin", "erase", "--account", phone.account.uuidString] + database)
            defer { unconfirmed.forceStop() }
            #expect(unconfirmed.exitStatus == 2)
            #expect(try await eventCount(client) == 1)
        }
    }

    /// `admin suggestions --explain` (issue 34): what was learned of one shortcut, as a week grid
    /// and each device's share; bad arguments are usage errors.
    @Test func suggestionsExplainPrintsTheWeekGridOfOneShortcut() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            // Fridays at 18:30 UTC, three weeks running (2026-01-09 on).
            let friday: Int64 = 1_767_571_200_000 + 4 * 86_400_000 + 18 * 3_600_000 + 1_800_000
            try await log.push(phone, (0..<3).map { phone.donate("tomato", at: friday + Int64($0) * 7 * 86_400_000) })
            let database = ["--database-url", url.urlString]
            let device = ["--device", phone.deviceId.uuidString]

            let explained = try await CommandProcess.run(["admin", "suggestions", "--explain", "com.example.soup/tomato", "--at", "2026-02-01T00:00:00Z"] + device + database)
            defer { explained.forceStop() }
            #expect(explained.exitStatus == 0, "\(explained.errorOutput)")
            let lines = explained.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let fridayRow = try #require(lines.first { $0.hasPrefix("Fri") }, "\(explained.output)")
            // Two columns an hour after "Fri  ": 18:00 is the heaviest hour, the only one.
            let cells = Array(fridayRow.dropFirst(5))
            #expect(cells.count == 48 && String(cells[36...37]) == "██" && cells.enumerated().allSatisfy { $0.offset / 2 == 18 || $0.element == "·" },
                    "\(fridayRow)")
            #expect(lines.filter { ["Mon", "Tue", "Wed", "Thu", "Sat", "Sun"].contains(String($0.prefix(3))) }.allSatisfy { $0.dropFirst(5).allSatisfy { $0 == "·" } })
            #expect(explained.output.contains(phone.deviceId.uuidString.lowercased()) && explained.output.contains("Fri 18:00"))
            #expect(lines[1] == "learning: on", "\(explained.output)")
            // Paused on the phone (issue 34): the report says so, and what was learned stays.
            try await log.push(phone, [phone.pause(.device(phone.deviceId), at: friday + 4 * 7 * 86_400_000)])
            let paused = try await CommandProcess.run(["admin", "suggestions", "--explain", "com.example.soup/tomato"] + device + database)
            defer { paused.forceStop() }
            #expect(paused.output.split(separator: "\n")[1] == "learning: on, paused on \(phone.deviceId.uuidString.lowercased())", "\(paused.output)")
            #expect(paused.output.contains("Fri 18:00"))

            let json = try await CommandProcess.run(["admin", "suggestions", "--explain", "com.example.soup/tomato", "--json"] + device + database)
            defer { json.forceStop() }
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect((report["hours"] as? [[String: Any]])?.map { $0["hourOfWeek"] as? Int } == [4 * 24 + 18])
            #expect((report["devices"] as? [[String: Any]])?.first?["donations"] as? Int == 3)
            #expect(report["learningPaused"] as? Bool == false && (report["devicesPaused"] as? [String])?.count == 1)

            let notAShortcut = try await CommandProcess.run(["admin", "suggestions", "--explain", "tomato"] + device + database)
            defer { notAShortcut.forceStop() }
            #expect(notAShortcut.exitStatus != 0 && notAShortcut.errorOutput.contains("--explain must be BUNDLE-ID/IDENTIFIER"))
            let notInView = try await CommandProcess.run(["admin", "suggestions", "--explain", "com.example.soup/leek"] + device + database)
            defer { notInView.forceStop() }
            #expect(notInView.exitStatus == 2 && notInView.errorOutput.contains("has no shortcut com.example.soup/leek"), "\(notInView.errorOutput)")
            // A place that is not a token, and more places than a request may name, are usage errors (issue 67).
            let notAToken = try await CommandProcess.run(["admin", "suggestions", "--place", "3F"] + device + database)
            #expect(notAToken.exitStatus == 64 || notAToken.exitStatus == 2, "\(notAToken.exitStatus)")
            #expect(notAToken.errorOutput.contains("--place/0 \(PlaceToken.notAToken)"), "\(notAToken.errorOutput)")
            let token = String(repeating: "0", count: PlaceToken.length)
            let tooMany = try await CommandProcess.run(["admin", "suggestions"] + Array(repeating: ["--place", token], count: PlaceToken.maxPerRequest + 1).flatMap { $0 }
                                                       + device + database)
            #expect(tooMany.exitStatus != 0 && tooMany.errorOutput.contains("at most \(PlaceToken.maxPerRequest) are allowed"), "\(tooMany.errorOutput)")
        }
    }

    @Test func aBrokenImportFromStandardInputNamesItsLineAndStoresNothing() async throws {
        try await TestDatabase.withClient { source, sourceURL in
            try await TestDatabase.withClient { target, targetURL in
                var phone = DeviceScript()
                try await register([phone], client: source)
                var log = PushLog(client: source)
                try await log.push(phone, [phone.donate("tomato", at: 100), phone.donate("leek", at: 110)])
                let export = try await CommandProcess.run(["admin", "export", "--account", phone.account.uuidString, "--database-url", sourceURL.urlString])
                defer { export.forceStop() }
                #expect(export.exitStatus == 0)
                var lines = export.output.split(separator: "\n").map(String.init)
                // The account, the device, two events, the learning (on, nothing forgotten), and what each donation taught.
                #expect(lines.count == 7)
                #expect(lines[4] == #"{"account":"on","devices":[{"deviceId":"\#(phone.deviceId.uuidString)","learning":"on"}],"forgotten":[],"kind":"learning","signedOutDevices":[]}"#,
                        "\(lines[4])")
                #expect(lines.suffix(2).allSatisfy { $0.contains(#""kind":"learned""#) }, "\(lines)")

                // To a file: owner-only, like the secrets (it holds every event and the token hashes).
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-export-\(UUID()).ndjson")
                defer { try? FileManager.default.removeItem(at: file) }
                FileManager.default.createFile(atPath: file.path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644])
                let toFile = try await CommandProcess.run(["admin", "export", "--account", phone.account.uuidString, "--output", file.path,
                                                           "--database-url", sourceURL.urlString])
                defer { toFile.forceStop() }
                #expect(toFile.exitStatus == 0, "\(toFile.errorOutput)")
                #expect(try String(contentsOf: file, encoding: .utf8) == export.output)
                #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)

                lines[3] = String(lines[3].dropLast(5))  // cut short
                let broken = try await CommandProcess.run(["admin", "import", "--database-url", targetURL.urlString],
                                                          standardInput: lines.joined(separator: "\n"))
                defer { broken.forceStop() }
                #expect(broken.exitStatus == 1)
                #expect(broken.errorOutput.contains("line 4"))
                #expect(try await eventCount(target) == 0)

                let whole = try await CommandProcess.run(["admin", "import", "-", "--json", "--database-url", targetURL.urlString],
                                                         standardInput: export.output)
                defer { whole.forceStop() }
                #expect(whole.exitStatus == 0)
                #expect(whole.output.contains("\"eventsAdded\" : 2"))
                #expect(try await eventCount(target) == 2)
            }
        }
    }

    /// `events --follow` prints events as they are committed, and Ctrl-C ends it with status 0.
    @Test func followingEventsPrintsNewOnesUntilInterrupted() async throws {
        try await TestDatabase.withClient { client, url in
            var phone = DeviceScript()
            try await register([phone], client: client)
            var log = PushLog(client: client)
            try await log.push(phone, [phone.donate("tomato", at: 100)])
            let follow = try await CommandProcess(["admin", "events", "--account", phone.account.uuidString, "--after", "0", "--follow", "--json",
                                                   "--database-url", url.urlString])
            defer { follow.forceStop() }
            try await eventually("the first event is printed") { follow.output.contains("\"identifier\":\"tomato\"") }
            try await log.push(phone, [phone.donate("leek", at: 110)])
            try await eventually("the new event is printed") { follow.output.contains("\"identifier\":\"leek\"") }
            #expect(follow.output.split(separator: "\n").count == 2)

            // A page of `admin events` says on its last line how to ask for the next one.
            let page = try await CommandProcess.run(["admin", "events", "--account", phone.account.uuidString, "--limit", "1",
                                                     "--database-url", url.urlString])
            defer { page.forceStop() }
            #expect(page.exitStatus == 0)
            #expect(page.output.hasSuffix("more events follow: --after 1\n"))
            let next = try await CommandProcess.run(["admin", "events", "--account", phone.account.uuidString, "--after", "1", "--json",
                                                     "--database-url", url.urlString])
            defer { next.forceStop() }
            #expect(next.output.contains("leek") && !next.output.contains("tomato"))
            #expect(!next.output.contains("nextAfter"))
            let json = try await CommandProcess.run(["admin", "events", "--account", phone.account.uuidString, "--limit", "1", "--json",
                                                     "--database-url", url.urlString])
            defer { json.forceStop() }
            #expect(json.output.contains("\"nextAfter\" : 1"))

            follow.send(SIGINT)
            #expect(try await follow.waitForExit(timeout: .seconds(10)))
            #expect(follow.exitStatus == 0)
        }
    }
}
