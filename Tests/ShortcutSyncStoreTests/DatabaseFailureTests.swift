import Foundation
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// The store's classification of what went wrong with the database (`DatabaseFailure`), which
/// the command line turns into its one line and exit status.
@Suite struct DatabaseFailureTests {
    static func failure(connecting url: DatabaseURL) async -> DatabaseFailure? {
        do {
            try await url.checkConnection(logger: TestDatabase.shared.logger)
            return nil
        } catch {
            return DatabaseFailure(error)
        }
    }

    @Test func eachWayAConnectionFailsIsToldApart() async throws {
        let url = try await TestDatabase.shared.freshDatabase()
        // The database itself connects. Its connect timeout is the service's 5 s, which the shared
        // test cluster once missed while the run started clusters of its own beside it: what is
        // tested here is how failures are told apart, so a slow moment gets four more tries.
        var lastError: (any Error)?
        for _ in 0..<5 {
            do {
                try await url.checkConnection(logger: TestDatabase.shared.logger)
                lastError = nil
                break
            } catch {
                lastError = error
            }
        }
        if let lastError {
            Issue.record("the database itself connects: \(String(reflecting: lastError))")
        }

        var wrongPassword = url
        wrongPassword.password = "not-the-password"
        guard case .refused(let message, missingDatabase: false)? = await Self.failure(connecting: wrongPassword) else {
            Issue.record("a wrong password is a refusal")
            return
        }
        #expect(message.contains("password authentication failed"), "\(message)")

        var noPassword = url
        noPassword.password = nil
        #expect(await Self.failure(connecting: noPassword) == .passwordRequired)

        var missing = url
        missing.database = "no_such_database_\(UUID().uuidString.prefix(8).lowercased())"
        guard case .refused(_, missingDatabase: true)? = await Self.failure(connecting: missing) else {
            Issue.record("a missing database is a refusal that says so")
            return
        }

        // Nothing listens on port 1 of the loopback address.
        var nowhere = url
        nowhere.port = 1
        #expect(await Self.failure(connecting: nowhere) == .unreachable(reason: "connection refused"))

        #expect(DatabaseFailure(CancellationError()) == nil, "not the database's")
    }

    /// A reason an operator can act on: the operating system's words for an error it gave, and
    /// "the connection closed" for a session that ended under a statement; never a type name.
    @Test func reasonsAreTheOperatingSystemsWords() {
        struct SystemCallFailed: Error, CustomDebugStringConvertible {
            var debugDescription: String { "IOError { write(descriptor:pointer:size:): Broken pipe (errno: 32) }" }
        }
        #expect(DatabaseFailure.reason(SystemCallFailed()) == "broken pipe")
        #expect(DatabaseFailure.reason(StoreError.connectionClosed) == "the connection closed")
        struct Unknown: Error {}
        #expect(DatabaseFailure.reason(Unknown()) == "no connection")
    }
}
