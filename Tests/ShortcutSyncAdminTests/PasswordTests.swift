import Foundation
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// The database URL that `serve` prints has no password: the operator gives it the ways libpq's
/// tools take one (`PGPASSWORD`, `PGPASSFILE` or `~/.pgpass`), and without one is told that the
/// server wants a password and where the embedded cluster keeps it — not that it cannot be reached.
@Suite struct PasswordTests {
    /// A new owner-only password file holding `text`, in a new directory that the caller removes.
    static func passwordFile(_ text: String) throws -> (directory: URL, file: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shortcut-sync-pgpass-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("pgpass")
        try text.write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return (directory, file)
    }

    @Test func aPasswordFileLineMatchesByFieldsWithWildcardsAndEscapes() {
        let file = PasswordFile(text: """
            # comment
            db.example:5432:shortcut_sync:app:first
            *:5433:*:app:sec\\:ond
            127.0.0.1:*:*:*:third\\\\
            short:line
            """)
        #expect(file.password(host: "db.example", port: 5432, database: "shortcut_sync", username: "app") == "first")
        #expect(file.password(host: "db.example", port: 5432, database: "other", username: "app") == nil)
        #expect(file.password(host: "anywhere", port: 5433, database: "x", username: "app") == "sec:ond")
        #expect(file.password(host: "127.0.0.1", port: 1, database: "x", username: "postgres") == "third\\")
        #expect(file.password(host: "short", port: 5432, database: "x", username: "line") == nil)
    }

    @Test func aURLWithoutPasswordTakesPGPASSWORDThenThePasswordFile() throws {
        let url = try DatabaseURL("postgres://app@db.example:5432/shortcut_sync")
        let (directory, file) = try Self.passwordFile("db.example:5432:shortcut_sync:app:from-file\n")
        defer { try? FileManager.default.removeItem(at: directory) }

        #expect(url.withPassword(environment: ["PGPASSWORD": "from-env", "PGPASSFILE": file.path]).password == "from-env")
        #expect(url.withPassword(environment: ["PGPASSFILE": file.path]).password == "from-file")
        #expect(try DatabaseURL("postgres://app:given@db.example/shortcut_sync").withPassword(environment: ["PGPASSWORD": "x"]).password == "given")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(url.withPassword(environment: ["PGPASSFILE": file.path]).password == nil, "a file others may read is ignored, as libpq does")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("home"), withIntermediateDirectories: true)
        #expect(url.withPassword(environment: ["HOME": directory.appendingPathComponent("home").path]).password == nil)
    }

    @Test func anOperatorWithoutThePasswordIsToldWhereItIsAndMayGiveItTheLibpqWays() async throws {
        let url = try await TestDatabase.shared.freshDatabase()
        let password = try #require(url.password)
        var printed = url
        printed.password = nil
        let database = ["--database-url", printed.urlString]
        let noPasswordFile = ["PGPASSWORD": String?.none, "PGPASSFILE": "/nonexistent/pgpass"]

        let refused = try await CommandProcess.run(["admin", "accounts", "--data-dir", "/srv/sync"] + database, environment: noPasswordFile)
        #expect(refused.exitStatus == 3)
        let line = refused.errorOutput
        #expect(line.hasPrefix("error: PostgreSQL at \(url.host):\(url.port) asks for user postgres's password and none was given"), "\(line)")
        #expect(line.contains("PGPASSWORD") && line.contains("~/.pgpass") && line.contains("/srv/sync/embedded-postgres.password"), "\(line)")
        #expect(!line.contains("cannot reach"))

        let fromEnvironment = try await CommandProcess.run(["admin", "accounts"] + database, environment: ["PGPASSWORD": password])
        #expect(fromEnvironment.exitStatus == 0, "\(fromEnvironment.errorOutput)")
        #expect(!fromEnvironment.errorOutput.contains("warning"), "\(fromEnvironment.errorOutput)")

        // On the command line it is used, and the operator is warned that `ps` shows it.
        let inArgument = try await CommandProcess.run(["admin", "accounts", "--database-url", url.urlString], environment: noPasswordFile)
        #expect(inArgument.exitStatus == 0, "\(inArgument.errorOutput)")
        #expect(inArgument.errorOutput.hasPrefix("warning: --database-url carries a password"), "\(inArgument.errorOutput)")
        #expect(!inArgument.errorOutput.contains(password) && !inArgument.output.contains(password))

        let (directory, file) = try Self.passwordFile("\(url.host):\(url.port):*:postgres:\(password)\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fromFile = try await CommandProcess.run(["admin", "accounts"] + database, environment: ["PGPASSWORD": nil, "PGPASSFILE": file.path])
        #expect(fromFile.exitStatus == 0, "\(fromFile.errorOutput)")

        let wrong = try await CommandProcess.run(["admin", "accounts"] + database, environment: ["PGPASSWORD": "wrong"])
        #expect(wrong.exitStatus == 3)
        #expect(wrong.errorOutput.hasPrefix("error: PostgreSQL refused the connection (password authentication failed"), "\(wrong.errorOutput)")
        #expect(!wrong.errorOutput.contains("wrong\n"))
    }
}

/// What operators give on the command line: the admin token never as an argument, and a token
/// that could be guessed is refused; an sslmode libpq does not know is refused, not taken for none.
@Suite struct OperatorSecretsTests {
    @Test func anUnknownSSLModeIsRefusedAndTheKnownOnesAreTaken() throws {
        #expect(throws: DatabaseURL.ParseError.self) { try DatabaseURL("postgres://u@h/db?sslmode=requir") }
        #expect(try DatabaseURL("postgres://u@h/db?sslmode=verify-full").requireTLS)
        #expect(try !DatabaseURL("postgres://u@h/db?sslmode=prefer").requireTLS)
        #expect(try !DatabaseURL("postgres://u@h/db").requireTLS)
    }

    /// A key without the apps it may wake is a usage error, and so is a topic that is no bundle id:
    /// the service's key must not be made to wake any app a device names.
    @Test func backgroundWakesNeedTheirTopics() async throws {
        let key = ["--apns-key-file", "/nonexistent/key.p8", "--apns-key-id", "ABCDEFGHIJ", "--apns-team-id", "ABCDEFGHIJ"]
        for (command, arguments) in [("serve", ["--port", "1"]), ("worker", [])] {
            let missing = try await CommandProcess.run([command] + arguments + key, environment: ["SHORTCUT_SYNC_APNS_TOPICS": nil])
            defer { missing.forceStop() }
            #expect(missing.exitStatus == 2)
            #expect(missing.errorOutput.hasPrefix("error: background wakes need --apns-topic"), "\(command): \(missing.errorOutput)")

            let wrong = try await CommandProcess.run([command] + arguments + key + ["--apns-topic", "not a bundle id"])
            defer { wrong.forceStop() }
            #expect(wrong.exitStatus == 2)
            #expect(wrong.errorOutput.hasPrefix("error: --apns-topic must be an app's bundle id"), "\(command): \(wrong.errorOutput)")
        }
    }

    @Test func serveTakesNoAdminTokenArgumentAndRefusesAShortToken() async throws {
        let argument = try await CommandProcess.run(["serve", "--admin-token", String(repeating: "ab01", count: 10)])
        defer { argument.forceStop() }
        #expect(argument.exitStatus == 2)
        #expect(argument.errorOutput.hasPrefix("error: Unknown option '--admin-token'"), "\(argument.errorOutput)")

        let short = try await CommandProcess.run(["serve", "--port", "1"], environment: ["SHORTCUT_SYNC_ADMIN_TOKEN": "password123"])
        defer { short.forceStop() }
        #expect(short.exitStatus == 2)
        #expect(short.errorOutput.hasPrefix("error: the admin token must carry at least 128 bits"), "\(short.errorOutput)")

        let (directory, file) = try PasswordTests.passwordFile("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let repeated = try await CommandProcess.run(["serve", "--port", "1", "--admin-token-file", file.path])
        defer { repeated.forceStop() }
        #expect(repeated.exitStatus == 2)
        #expect(repeated.errorOutput.contains("at least 128 bits"), "\(repeated.errorOutput)")
    }
}
