@testable import EmbeddedPostgres
import Foundation
import Logging
import PostgresNIO
import SecretFiles
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The embedded cluster's secrets (DESIGN §5): its password file is owner-only, its socket
/// directory is made fresh by each start (a directory at the predictable path of old is not
/// used), and a cluster home outside the data directory that others could have made is refused.
@Suite struct EmbeddedPostgresSecretsTests {
    /// The user the cluster runs as: `postgres` as root, else this one.
    static var clusterUser: uid_t {
        getuid() == 0 ? getpwnam("postgres")!.pointee.pw_uid : geteuid()
    }

    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    @Test func thePasswordFileIsOwnerOnlyAndEachStartMakesAFreshSocketDirectory() async throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-secrets-\(UUID().uuidString.prefix(8))")
        // Where the socket directory used to be, made beforehand by someone else, open to all.
        let predictable = "/tmp/.shortcut-sync-\(EmbeddedPostgres.shortHash(directory.standardizedFileURL.path))"
        mkdir(predictable, 0o777)
        chmod(predictable, 0o777)
        defer {
            Postmaster.quit(dataDirectory: directory)
            try? FileManager.default.removeItem(at: directory)
            rmdir(predictable)
        }
        // Postmaster.quit above stops it when the test ends early.
        let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
        let first = try await cluster.start()

        let password = try #require(Self.status(cluster.passwordFile.path))
        #expect(password.st_mode & 0o7777 == 0o600)
        #expect(password.st_uid == geteuid())
        #expect(SecretFile(cluster.passwordFile).read() == first.password)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cluster.clusterDirectory.deletingLastPathComponent().path)
        #expect(!leftovers.contains("initdb.pw"), "initdb's password file is removed once the cluster exists")

        #expect(first.socketDirectory != predictable)
        #expect(first.socketDirectory.hasPrefix("/tmp/shortcut-sync-"))
        let socketDirectory = try #require(Self.status(first.socketDirectory))
        #expect(socketDirectory.st_mode & S_IFMT == S_IFDIR)
        #expect(socketDirectory.st_mode & 0o7777 == 0o700)
        #expect(socketDirectory.st_uid == Self.clusterUser)
        #expect(FileManager.default.fileExists(atPath: "\(first.socketDirectory)/.s.PGSQL.\(first.port)"), "the server listens there")
        #expect(try FileManager.default.contentsOfDirectory(atPath: predictable).isEmpty, "the predictable directory is not used")

        // The password in the file is the one the cluster asks for.
        let client = PostgresClient(configuration: try DatabaseURL(first.url(database: "postgres")).clientConfiguration(maximumConnections: 1),
                                    backgroundLogger: TestDatabase.shared.logger)
        let one = try await client.withRunning {
            try await client.query("SELECT 1").decode(Int.self).collectAll()
        }
        #expect(one == [1])

        await cluster.stop()
        #expect(Self.status(first.socketDirectory) == nil, "stopping removes the socket directory")

        let second = try await cluster.start()
        #expect(second.socketDirectory != first.socketDirectory)
        #expect(second.socketDirectory != predictable)
        #expect(second.password == first.password)
        #expect(Self.status(second.socketDirectory).map { $0.st_mode & 0o7777 } == 0o700)
        await cluster.stop()
    }

    @Test func aDirectoryThatIsALinkOrOthersMayWriteToOrOfAnotherUserIsRefused() throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shortcut-sync-private-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let good = base.appendingPathComponent("good").path
        mkdir(good, 0o700)
        try EmbeddedPostgres.checkPrivateDirectory(good, owner: geteuid())

        #expect(throws: EmbeddedPostgres.Failure.self, "another user's") {
            try EmbeddedPostgres.checkPrivateDirectory(good, owner: geteuid() &+ 1)
        }
        let open = base.appendingPathComponent("open").path
        mkdir(open, 0o700)
        chmod(open, 0o777)
        #expect(throws: EmbeddedPostgres.Failure.self, "one everybody may write to") {
            try EmbeddedPostgres.checkPrivateDirectory(open, owner: geteuid())
        }
        let link = base.appendingPathComponent("link").path
        symlink(good, link)
        #expect(throws: EmbeddedPostgres.Failure.self, "a link, even to a good one") {
            try EmbeddedPostgres.checkPrivateDirectory(link, owner: geteuid())
        }
    }

    /// As root, with a data directory the `postgres` user cannot reach, the cluster lives in
    /// /var/tmp under a name anyone can predict: one made there beforehand by another user, or
    /// open to all, is refused.
    @Test(.enabled(if: getuid() == 0 && getpwnam("postgres") != nil))
    func aClusterHomeSomeoneElseMadeInVarTmpIsRefused() async throws {
        let parent = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-closed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        chmod(parent.path, 0o700)
        defer { try? FileManager.default.removeItem(at: parent) }
        let dataDirectory = parent.appendingPathComponent("data")
        let cluster = EmbeddedPostgres(dataDirectory: dataDirectory, logger: TestDatabase.shared.logger)
        let home = cluster.clusterDirectory.deletingLastPathComponent().path
        #expect(home.hasPrefix("/var/tmp/shortcut-sync-"))
        mkdir(home, 0o700)
        defer { rmdir(home) }
        let nobody: uid_t = 65534
        chown(home, nobody, gid_t(nobody))
        await #expect {
            _ = try await cluster.start()
        } throws: { error in
            "\(error)".contains("refusing to use \(home)") && "\(error)".contains("belongs to uid \(nobody)")
        }

        chown(home, Self.clusterUser, 0)
        chmod(home, 0o777)
        await #expect {
            _ = try await cluster.start()
        } throws: { error in
            "\(error)".contains("refusing to use \(home)") && "\(error)".contains("others may write to it")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty, "nothing was put in it")
    }

    /// Inside the data directory, the cluster's home is made owner-only (one an earlier version
    /// left open to others is closed) and checked as the one in /var/tmp is: a link is refused.
    @Test func theClusterHomeInsideTheDataDirectoryIsOwnerOnlyAndNoLink() async throws {
        let dataDirectory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-home-\(UUID().uuidString.prefix(8))")
        let elsewhere = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-elsewhere-\(UUID().uuidString.prefix(8))")
        defer {
            Postmaster.quit(dataDirectory: dataDirectory)
            try? FileManager.default.removeItem(at: dataDirectory)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        let cluster = EmbeddedPostgres(dataDirectory: dataDirectory, logger: TestDatabase.shared.logger)
        let home = cluster.clusterDirectory.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: home, withDestinationURL: elsewhere)
        await #expect {
            _ = try await cluster.start()
        } throws: { error in
            "\(error)".contains("refusing to use \(home.path)") && "\(error)".contains("not a directory")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing was put where the link points")

        try FileManager.default.removeItem(at: home)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        chmod(home.path, 0o777)
        _ = try await cluster.start()
        var info = stat()
        #expect(lstat(home.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        await cluster.stop()
    }
}
