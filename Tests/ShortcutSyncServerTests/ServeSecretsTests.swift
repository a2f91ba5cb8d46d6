import Foundation
import NIOHTTP1
import SecretFiles
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What the real `serve` prints and keeps on disk in embedded mode (DESIGN §5, "Secrets stay
/// secret"): neither the database's password nor the admin token it makes is printed; the token
/// is kept in an owner-only file whose path is printed, and it works.
@Suite struct ServeSecretsTests {
    /// A file's type, mode and owner as `lstat` gives them (FileManager does not follow links).
    static func status(_ url: URL) -> (isRegular: Bool, mode: Int, owner: Int)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              let mode = attributes[.posixPermissions] as? Int, let owner = attributes[.ownerAccountID] as? Int else { return nil }
        return (attributes[.type] as? FileAttributeType == .typeRegular, mode, owner)
    }

    @Test func serveKeepsTheAdminTokenItMakesInAnOwnerOnlyFileAndPrintsNoSecret() async throws {
        let directory = ShutdownTests.dataDirectory()
        let serve = try await ServeProcess(dataDirectory: directory, givesAdminToken: false)
        defer { serve.forceStop() }
        try await ShutdownTests.waitUntilReady(serve)

        let tokenFile = try #require(Self.status(serve.adminTokenFile), "serve wrote no token file:\n\(serve.output)")
        #expect(tokenFile.isRegular)
        #expect(tokenFile.mode == 0o600)
        #expect(tokenFile.owner == Int(geteuid()))
        let token = try #require(SecretFile(serve.adminTokenFile).read())
        #expect(token.hasPrefix("ssx_"))

        let passwordFile = directory.appendingPathComponent("embedded-postgres.password")
        #expect(Self.status(passwordFile)?.mode == 0o600)
        let password = try #require(SecretFile(passwordFile).read())

        let output = serve.output
        #expect(!output.contains(token), "serve printed its admin token:\n\(output)")
        #expect(!output.contains(password), "serve printed the database's password:\n\(output)")
        #expect(output.contains("admin token:         in \(serve.adminTokenFile.path)"), "\(output)")
        #expect(output.contains("embedded PostgreSQL: postgres://postgres@127.0.0.1:"), "\(output)")

        // The token in the file is the admin's, and only it is.
        let created = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: token)
        #expect(created.status == 201)
        #expect(created.json["accountToken"] is String)
        let refused = try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: token + "x")
        #expect(refused.status == 401)

        // The next start on the same data directory keeps the token.
        serve.send(SIGTERM)
        #expect(try await serve.waitForExit(timeout: .seconds(15)) != nil)
        let again = try await ServeProcess(dataDirectory: directory, givesAdminToken: false)
        defer { again.forceStop() }
        try await ShutdownTests.waitUntilReady(again)
        #expect(SecretFile(again.adminTokenFile).read() == token)
        #expect(try await ShutdownTests.request(.POST, again.baseURL + "/v1/accounts", token: token).status == 201)
        #expect(!again.output.contains(token) && !again.output.contains(password), "\(again.output)")
    }

    @Test func aGivenAdminTokenIsNeitherPrintedNorWrittenDown() async throws {
        let serve = try await ServeProcess(dataDirectory: ShutdownTests.dataDirectory())
        defer { serve.forceStop() }
        try await ShutdownTests.waitUntilReady(serve)
        #expect(!serve.output.contains(serve.adminToken), "\(serve.output)")
        #expect(serve.output.contains("admin token:         the one given"), "\(serve.output)")
        #expect(Self.status(serve.adminTokenFile) == nil)
        #expect(try await ShutdownTests.request(.POST, serve.baseURL + "/v1/accounts", token: serve.adminToken).status == 201)
    }
}
