import EmbeddedPostgres
import Foundation
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// Every command tells an operator what went wrong in one line that says what to do, without a
/// library's internal description (DESIGN §7); the detail only with `--log-level debug`.
@Suite struct CommandFailureTests {
    /// Words of the libraries' own descriptions that an operator's line must not carry.
    static let internals = ["SingleConnectionFailure", "PSQLError", "NIO", "errno", "Generic description"]

    @Test(arguments: [["admin", "accounts"], ["migrate"], ["worker"], ["admin", "verify"]])
    func anUnreachableDatabaseIsOneLineAndStatusThree(command: [String]) async throws {
        let port = try EmbeddedPostgres.freeLoopbackPort()
        let run = try await CommandProcess.run(command, environment: ["DATABASE_URL": "postgres://nobody:secret@127.0.0.1:\(port)/nothing"])
        defer { run.forceStop() }
        #expect(run.exitStatus == 3)
        let lines = run.errorOutput.split(separator: "\n")
        #expect(lines.count == 1, "\(run.errorOutput)")
        #expect(run.errorOutput.hasPrefix("error: cannot reach PostgreSQL"))
        #expect(run.errorOutput.contains("(connection refused)"))
        #expect(run.errorOutput.contains("start the database, or point --database-url"))
        for word in Self.internals { #expect(!run.errorOutput.contains(word), "\(word) in \(run.errorOutput)") }
        #expect(!run.errorOutput.contains("secret"))
    }

    /// Issue 65, item 7: what an operator's line names from their input (here a value the command
    /// cannot read) reaches the terminal with its control characters escaped: `ESC ] 0 ;` would
    /// retitle the window, BEL ring, U+202E reverse what follows.
    @Test func aLineThatNamesAnInputShowsItsControlCharactersEscaped() async throws {
        let run = try await CommandProcess.run(["admin", "events", "--account", "\u{1B}]0;owned\u{07}\u{202E}txt"],
                                               environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/x"])
        defer { run.forceStop() }
        #expect(run.exitStatus == 2, "\(run.errorOutput)")
        #expect(!run.errorOutput.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" }, "\(run.errorOutput.debugDescription)")
        #expect(run.errorOutput.contains(#"\u{1B}]0;owned\u{7}\u{202E}txt"#), "\(run.errorOutput.debugDescription)")
    }

    /// Issue 65, item 10: a compaction share so small that the task's first rest would be past
    /// what a duration holds (it trapped) is a usage error, as 0, above 1 and not-a-number are.
    @Test(arguments: ["1e-300", "0", "0.0009", "1.5", "nan"])
    func aCompactionShareOutsideItsRangeIsAUsageError(share: String) async throws {
        let run = try await CommandProcess.run(["worker", "--compaction-share", share, "--database-url", "postgres://nobody@127.0.0.1:1/x"])
        defer { run.forceStop() }
        #expect(run.exitStatus == 2, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("--compaction-share must be 0.001 to 1.0"), "\(run.errorOutput)")
    }

    /// Background wakes' options (DESIGN §7): given in part, a usage error; a key that is not one,
    /// `serve` and `worker` refuse to start, saying which option to fix (and never the key),
    /// before they touch the database (here, one that nothing serves).
    @Test(arguments: [["serve", "--port", "0"], ["worker"]])
    func anAPNsKeyThatCannotWorkStopsTheCommandInOneLine(command: [String]) async throws {
        let partial = try await CommandProcess.run(command + ["--apns-key-id", "ABC123DEFG", "--database-url", "postgres://nobody@127.0.0.1:1/x"])
        defer { partial.forceStop() }
        #expect(partial.exitStatus == 2)
        #expect(partial.errorOutput.contains("need all three of --apns-key-file, --apns-key-id and --apns-team-id"), "\(partial.errorOutput)")

        do {
            let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-key-\(UUID().uuidString).p8")
            try Data("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ1dC1ub3QtYS1rZXk=\n-----END PRIVATE KEY-----\n".utf8).write(to: keyFile)
            defer { try? FileManager.default.removeItem(at: keyFile) }
            let run = try await CommandProcess.run(command + ["--apns-key-file", keyFile.path, "--apns-key-id", "ABC123DEFG",
                                                              "--apns-team-id", "DEF123GHIJ", "--apns-topic", "com.example.shortcuts"],
                                                   environment: ["SHORTCUT_SYNC_ADMIN_TOKEN": "admin-\(UUID())", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/x"])
            defer { run.forceStop() }
            #expect(run.exitStatus == 1)
            #expect(run.errorOutput == "error: the APNs key is not a P-256 private key in PEM, as Apple's .p8 files are: check --apns-key-file\n",
                    "\(run.errorOutput)")
            #expect(!run.errorOutput.contains("c2VjcmV0"))
        }
    }

    @Test func theDetailIsForDebugLogsOnly() async throws {
        let port = try EmbeddedPostgres.freeLoopbackPort()
        let run = try await CommandProcess.run(["migrate", "--log-level", "debug", "--database-url", "postgres://nobody:secret@127.0.0.1:\(port)/nothing"])
        defer { run.forceStop() }
        #expect(run.exitStatus == 3)
        #expect(run.errorOutput.contains("\ndetail: PSQLError(code: connectionError"))
        #expect(!run.errorOutput.contains("secret"))
    }

    @Test func aWrongPasswordIsNamedAsTheServerSaysIt() async throws {
        try await TestDatabase.withClient { _, url in
            var wrong = url
            wrong.password = "not-the-password"
            let run = try await CommandProcess.run(["migrate"], environment: ["DATABASE_URL": wrong.urlString])
            defer { run.forceStop() }
            #expect(run.exitStatus == 3)
            #expect(run.errorOutput.split(separator: "\n").count == 1, "\(run.errorOutput)")
            #expect(run.errorOutput.hasPrefix("error: PostgreSQL refused the connection (password authentication failed"), "\(run.errorOutput)")
            #expect(!run.errorOutput.contains("not-the-password"))
        }
    }
}
