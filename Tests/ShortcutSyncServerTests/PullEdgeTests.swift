import AsyncHTTPClient
import Foundation
import NIOHTTP1
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncTestSupport
import Testing

/// The edges of pulls and streams (DESIGN §5): waits that need not wait, cursors bound to their
/// device, streams that end when their device is signed out.
@Suite struct PullEdgeTests {
    /// A pull waiting for a version the view already includes answers at once, whatever its timeout.
    /// Each waits at most 30 s (the longest timeout there is); one that answered within half of
    /// it did not wait (a loaded CI run once took 5.5 s for a fresh server's first pull).
    @Test func waitForAtOrBelowWhatTheViewIncludesAnswersAtOnce() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let started = ContinuousClock.now
            #expect(try await server.raw(.GET, "/v1/sync/pull?waitFor=0&timeout=30000", token: phone.token).status == 200)
            let empty = ContinuousClock.now - started
            #expect(empty < .seconds(15), "waitFor=0 waited \(empty) of its 30 s")

            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            let version = try await phone.push()
            try await phone.pull(waitFor: version)
            #expect(phone.view.shortcuts.count == 1)
            for waitFor in [version, version - 1, 0] {
                let again = ContinuousClock.now
                #expect(try await server.raw(.GET, "/v1/sync/pull?waitFor=\(waitFor)&timeout=30000", token: phone.token).status == 200)
                #expect(ContinuousClock.now - again < .seconds(15), "waitFor=\(waitFor) waited more than 15 s of its 30 s")
            }
        }
    }

    @Test func aNegativeWaitForOrTimeoutIs422() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let cases = [("waitFor=-1", ["/waitFor"]), ("waitFor=1&timeout=-5", ["/timeout"]), ("waitFor=-1&timeout=-1", ["/waitFor", "/timeout"])]
            for (query, pointers) in cases {
                let answer = try await server.raw(.GET, "/v1/sync/pull?\(query)", token: phone.token)
                #expect(answer.status == 422, "\(query)")
                #expect(answer.json.pointers == pointers, "\(query)")
            }
        }
    }

    /// A pull may wait for the account's next version, not past it: one that could only wait in
    /// vain (up to 2^53) is refused at once, and the next version is waited for as before.
    @Test func aWaitForPastTheAccountsNextVersionIs422() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            for waitFor in [2, 9_007_199_254_740_991] {
                let answer = try await server.raw(.GET, "/v1/sync/pull?waitFor=\(waitFor)&timeout=20000", token: phone.token)
                #expect(answer.status == 422, "waitFor=\(waitFor)")
                #expect(answer.json.pointers == ["/waitFor"])
            }
            async let waiting = server.raw(.GET, "/v1/sync/pull?waitFor=1&timeout=20000", token: phone.token)
            try await Task.sleep(for: .milliseconds(200))
            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            #expect(try await phone.push() == 1)
            let answered = try await waiting
            #expect(answered.status == 200)
            #expect((answered.json["shortcuts"] as? [String: Any]).flatMap { $0["upserted"] as? [Any] }?.count == 1)
        }
    }

    /// A cursor is bound to the account and device it was issued to: another device of the same
    /// account (reading the same unfiltered view), a device of another account, and a cursor
    /// changed by hand all get the whole view with `reset: true`, never a diff.
    @Test func aCursorOfAnotherDeviceOrAccountOrAForgedOneGetsTheWholeView() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let pad = try await server.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
            let stranger = try await server.createDevice(accountToken: try await server.createAccount().token)
            phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
            try await phone.pull(waitFor: try await phone.push())
            let cursor = try #require(phone.cursor)

            // Its own device gets a diff (nothing changed).
            let own = try await phone.client.pull(query: .init(cursor: cursor)).ok.body.json
            #expect(!own.reset)
            #expect(own.shortcuts.upserted.isEmpty)

            for device in [pad, stranger] {
                let answer = try await device.client.pull(query: .init(cursor: cursor)).ok.body.json
                #expect(answer.reset, "device \(device.id)")
            }
            let padView = try await pad.client.pull(query: .init(cursor: cursor)).ok.body.json
            #expect(padView.shortcuts.upserted.map(\.identifier) == ["tomato"])
            #expect(try await stranger.client.pull(query: .init(cursor: cursor)).ok.body.json.shortcuts.upserted.isEmpty)

            // A cursor changed by hand, made up, or of another format is unknown.
            var tampered = Array(cursor)
            let index = tampered.index(tampered.startIndex, offsetBy: 5)
            tampered[index] = tampered[index] == "A" ? "B" : "A"
            for forged in [String(tampered), "2.\(cursor.split(separator: ".")[1]).AAAAAAAAAAAAAAAAAAAAAA", "garbage", ""] {
                #expect(try await phone.client.pull(query: .init(cursor: forged)).ok.body.json.reset, "\(forged)")
            }
        }
    }

    /// Signed out through one server, the device's stream on another server of the same
    /// database ends too (the sign-out's NOTIFY reaches every server's LISTEN hub).
    @Test func signingADeviceOutEndsItsStreamsOnOtherServersToo() async throws {
        try await TestServer.with { first in
            try await TestServer.with(database: first.database, sql: first.sql, runsWorker: false) { second in
                let account = try await first.createAccount()
                let phone = try await first.createDevice(accountToken: account.token)
                let stream = try await StreamTests.open(second, token: phone.token)
                let recorder = StreamRecorder()
                try await withThrowingTaskGroup(of: Void.self) { (group: inout ThrowingTaskGroup<Void, any Error>) async throws -> Void in
                    group.addTask { try await recorder.record(stream) }
                    defer { group.cancelAll() }
                    #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                    #expect(try await first.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)
                    try await eventually("the stream on the second server ends", timeout: .seconds(5)) {
                        recorder.hasEnded
                    }
                }
            }
        }
    }

    @Test func signingADeviceOutEndsItsOpenStreamsAtOnce() async throws {
        try await TestServer.with { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let mac = try await server.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
            let phoneStream = try await StreamTests.open(server, token: phone.token)
            let macStream = try await StreamTests.open(server, token: mac.token)
            let phoneRecorder = StreamRecorder(), macRecorder = StreamRecorder()
            try await withThrowingTaskGroup(of: Void.self) { (group: inout ThrowingTaskGroup<Void, any Error>) async throws -> Void in
                group.addTask { try await phoneRecorder.record(phoneStream) }
                group.addTask { try await macRecorder.record(macStream) }
                defer { group.cancelAll() }
                #expect(try await phoneRecorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                #expect(try await server.raw(.DELETE, "/v1/devices/\(phone.id)", token: account.token).status == 204)

                // The phone's stream ends, well before 5 s of keep-alives (one a second in tests) go by.
                try await eventually("the phone's stream ends", timeout: .seconds(5)) { phoneRecorder.hasEnded }
                // The Mac's stream goes on.
                let before = macRecorder.text.components(separatedBy: ": keep-alive").count
                #expect(try await macRecorder.wait { $0.components(separatedBy: ": keep-alive").count > before }
                    .components(separatedBy: ": keep-alive").count > before)
                #expect(!macRecorder.hasEnded)
            }
        }
    }
}
