import Foundation
import SecretFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Files that hold secrets are owner-only from the moment they exist (DESIGN §5), and a file
/// that others could have read, or a link someone planted, never holds a secret that is used.
@Suite struct SecretFileTests {
    /// A fresh directory for one test, removed by the caller.
    static func directory() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shortcut-sync-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Mode bits (permissions only), owner and kind of `path`, not following a link.
    static func status(_ path: String) -> (mode: mode_t, uid: uid_t, isRegularFile: Bool)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_uid, info.st_mode & S_IFMT == S_IFREG)
    }

    @Test func aSecretIsCreatedOwnerOnlyAndReadAgainAfterwards() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = SecretFile(directory.appendingPathComponent("admin-token"))

        let made = try file.readOrCreate { "secret-\(UUID())" }
        let status = try #require(Self.status(file.path))
        #expect(status.mode == 0o600)
        #expect(status.uid == geteuid())
        #expect(status.isRegularFile)
        #expect(file.read() == made)

        var madeAgain = false
        let second = try file.readOrCreate { madeAgain = true; return "another" }
        #expect(second == made)
        #expect(!madeAgain)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["admin-token"])
    }

    @Test func aSecretOthersCouldReadIsReplacedNotUsed() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = SecretFile(directory.appendingPathComponent("admin-token"))
        try "known-to-others\n".write(to: file.url, atomically: false, encoding: .utf8)
        chmod(file.path, 0o644)
        #expect(!file.isOwnerOnly)

        let secret = try file.readOrCreate { "fresh-\(UUID())" }
        #expect(secret != "known-to-others")
        #expect(file.read() == secret)
        #expect(Self.status(file.path)?.mode == 0o600)
    }

    @Test func aLinkPlantedAtTheSecretsPathIsNeitherFollowedNorUsed() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("planted")
        try "planted\n".write(to: target, atomically: false, encoding: .utf8)
        chmod(target.path, 0o600)
        let file = SecretFile(directory.appendingPathComponent("admin-token"))
        symlink(target.path, file.path)

        let secret = try file.readOrCreate { "fresh-\(UUID())" }
        #expect(secret != "planted")
        #expect(Self.status(file.path)?.isRegularFile == true, "the link was replaced by a file of its own")
        #expect(try String(contentsOf: target, encoding: .utf8) == "planted\n", "the link's target is untouched")

        // Creating never opens an existing file or a link either.
        let link = directory.appendingPathComponent("initdb.pw").path
        symlink(target.path, link)
        #expect(throws: SecretFile.Failure.self) { try SecretFile.create(at: link, contents: "password") }
        #expect(throws: SecretFile.Failure.self) { try SecretFile.create(at: file.path, contents: "password") }
        #expect(try String(contentsOf: target, encoding: .utf8) == "planted\n")
        #expect(file.read() == secret)
    }

    /// As root, the file initdb reads is PostgreSQL's user's alone.
    @Test(.enabled(if: getuid() == 0 && getpwnam("postgres") != nil))
    func aSecretForAnotherUserIsThatUsersAloneFromTheStart() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let postgres = try #require(getpwnam("postgres")).pointee
        let path = directory.appendingPathComponent("initdb.pw").path
        try SecretFile.create(at: path, contents: "password\n", owner: (postgres.pw_uid, postgres.pw_gid))
        let status = try #require(Self.status(path))
        #expect(status.mode == 0o600)
        #expect(status.uid == postgres.pw_uid)
    }

    /// Issue 65, item 10: root replacing a secret of another user (`admin rotate-admin-token`
    /// run as root, the servers as their own user) gives the new file to that user, who must
    /// read it; owner-only still.
    @Test(.enabled(if: getuid() == 0 && getpwnam("postgres") != nil))
    func aSecretReplacedByRootKeepsItsOwner() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let postgres = try #require(getpwnam("postgres")).pointee
        let path = directory.appendingPathComponent("admin-token").path
        try SecretFile.create(at: path, contents: "old\n", owner: (postgres.pw_uid, postgres.pw_gid))
        try SecretFile(URL(fileURLWithPath: path)).replace(with: "new")
        let status = try #require(Self.status(path))
        #expect(status.uid == postgres.pw_uid && status.mode == 0o600 && status.isRegularFile)
        #expect(SecretFile(URL(fileURLWithPath: path)).read() == "new")
    }
}
