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
        let run = try await CommandProcess.run(command + ["--database-url", "postgres://nobody:secret@127.0.0.1:\(port)/nothing"])
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
            let run = try await CommandProcess.run(["migrate", "--database-url", wrong.urlString])
            defer { run.forceStop() }
            #expect(run.exitStatus == 3)
            #expect(run.errorOutput.split(separator: "\n").count == 1, "\(run.errorOutput)")
            #expect(run.errorOutput.hasPrefix("error: PostgreSQL refused the connection (password authentication failed"), "\(run.errorOutput)")
            #expect(!run.errorOutput.contains("not-the-password"))
        }
    }
}
