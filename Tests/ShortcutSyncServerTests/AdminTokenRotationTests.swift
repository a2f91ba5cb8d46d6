import Foundation
import NIOHTTP1
import SecretFiles
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The admin token changes without a restart (issue 56, item 5): `admin rotate-admin-token`
/// writes a new one to the token file and announces it, and every server that reads that file
/// refuses the old one within a second; `SIGHUP` makes a server read its file again.
@Suite struct AdminTokenRotationTests {
    /// Whether `token` may create an account on `serve` (201), or is refused (401).
    static func status(_ serve: ServeProcess, _ token: String) async throws -> Int {
        try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: token).status
    }

    @Test func rotateAdminTokenIsTakenByEveryServerOfTheDatabaseWithinASecond() async throws {
        let database = try await TestDatabase.shared.freshDatabase()
        let directory = ShutdownTests.dataDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("admin-token")
        let old = Tokens.make(.admin)
        try SecretFile.create(at: file.path, contents: old + "\n")

        // Two servers on one database, both started with the token file.
        let arguments = ["--admin-token-file", file.path]
        let first = try await ServeProcess(databaseURL: database.urlString, arguments: arguments)
        defer { first.command.forceStop() }
        let second = try await ServeProcess(databaseURL: database.urlString, arguments: arguments + ["--no-worker"])
        defer { second.command.forceStop() }
        for serve in [first, second] {
            try await ShutdownTests.waitUntilReady(serve)
            #expect(try await Self.status(serve, old) == 201)
        }

        let rotated = try await CommandProcess.run(["admin", "rotate-admin-token", "--json", "--admin-token-file", file.path],
                                                   environment: ["DATABASE_URL": database.urlString])
        defer { rotated.forceStop() }
        #expect(rotated.exitStatus == 0, "\(rotated.errorOutput)")
        let new = try #require(SecretFile(file).read())
        #expect(new != old && Tokens.hasShape(new, of: .admin))
        #expect(!rotated.output.contains(new), "the token was printed: \(rotated.output)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(rotated.output.utf8)) as? [String: Any], "\(rotated.output)")
        #expect(answer["adminTokenFile"] as? String == file.path)
        #expect(ServeSecretsTests.status(file)?.mode == 0o600)

        for serve in [first, second] {
            try await eventually("the old admin token is refused within a second", timeout: .seconds(1)) {
                try await Self.status(serve, old) == 401
            }
            #expect(try await Self.status(serve, new) == 201)
            #expect(!serve.output.contains(new), "a server printed the new token")
        }

        // With a database URL and no file, it says which file it needs, and writes nothing.
        let withoutFile = try await CommandProcess.run(["admin", "rotate-admin-token"], environment: ["DATABASE_URL": database.urlString])
        defer { withoutFile.forceStop() }
        #expect(withoutFile.exitStatus == 2)
        #expect(withoutFile.errorOutput.contains("--admin-token-file"), "\(withoutFile.errorOutput)")
        #expect(SecretFile(file).read() == new)
    }

    /// Issue 65, item 10: a SIGHUP that comes before the server's handler is in place (a
    /// secrets manager that writes and signals as the server starts) does not kill it; and a
    /// token file replaced by a symbolic link is not followed: the token in use stays.
    @Test func anEarlySighupAndALinkedTokenFileChangeNothing() async throws {
        // The embedded database takes seconds to create: a SIGHUP as its creation begins comes
        // before the service, and its handler, run. (Not at a fixed time after the process
        // starts: on a loaded machine that can come before the process runs any of its code,
        // when nothing it could do would keep it alive.)
        let directory = ShutdownTests.dataDirectory()
        let serve = try await ServeProcess(dataDirectory: directory, givesAdminToken: false)
        defer { serve.forceStop() }
        try await eventually("serve begins creating its database:\n\(serve.output)", timeout: .seconds(60)) {
            serve.output.contains("creating the embedded PostgreSQL cluster")
        }
        serve.send(SIGHUP)
        try await ShutdownTests.waitUntilReady(serve)
        #expect(serve.isRunning)
        let old = serve.adminToken
        #expect(try await Self.status(serve, old) == 201)

        // Another file's token, linked in at the file's name: not read.
        let elsewhere = URL(fileURLWithPath: serve.adminTokenFile.path + ".elsewhere")
        let planted = Tokens.make(.admin)
        try SecretFile.create(at: elsewhere.path, contents: planted + "\n")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        try FileManager.default.removeItem(at: serve.adminTokenFile)
        try FileManager.default.createSymbolicLink(at: serve.adminTokenFile, withDestinationURL: elsewhere)
        serve.send(SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        #expect(serve.isRunning)
        #expect(try await Self.status(serve, planted) == 401, "the link was followed")
        #expect(try await Self.status(serve, old) == 201, "the token in use stays")
    }

    @Test func sighupMakesAServerReadItsTokenFileAgain() async throws {
        let serve = try await ServeProcess(dataDirectory: ShutdownTests.dataDirectory(), givesAdminToken: false)
        defer { serve.forceStop() }
        try await ShutdownTests.waitUntilReady(serve)
        let old = serve.adminToken
        #expect(try await Self.status(serve, old) == 201)

        // A secrets manager writes the file itself, then sends SIGHUP.
        let new = Tokens.make(.admin)
        try SecretFile(serve.adminTokenFile).replace(with: new)
        #expect(try await Self.status(serve, old) == 201, "the file alone changes nothing before SIGHUP")
        serve.send(SIGHUP)
        try await eventually("the old admin token is refused after SIGHUP", timeout: .seconds(1)) {
            try await Self.status(serve, old) == 401
        }
        #expect(try await Self.status(serve, new) == 201)

        // A file that holds a token too weak to take leaves the one in use.
        try SecretFile(serve.adminTokenFile).replace(with: "short")
        serve.send(SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        #expect(serve.isRunning)
        #expect(try await Self.status(serve, new) == 201)
        #expect(try await Self.status(serve, "short") == 401)
    }
}
