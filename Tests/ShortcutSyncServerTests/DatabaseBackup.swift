import Foundation
import ShortcutSyncChildProcess
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// A backup of a test's database as an operator makes one (`pg_dump --format=custom`), and its
/// restore after the database was lost (dropped, made again empty, `pg_restore`): what
/// docs/operating.md, "Restoring a backup", tells an operator to do.
struct DatabaseBackup {
    let file: URL

    /// The newest `pg_dump` and `pg_restore`: PATH first, then /usr/lib/postgresql/*/bin.
    static func tool(_ name: String) throws -> String {
        let fm = FileManager.default
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where fm.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        let root = "/usr/lib/postgresql"
        for version in ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        where fm.isExecutableFile(atPath: "\(root)/\(version)/bin/\(name)") {
            return "\(root)/\(version)/bin/\(name)"
        }
        throw Failure("\(name) is not on PATH nor under /usr/lib/postgresql/*/bin")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// `pg_dump` of `url`'s database into a new file of this test process's folder.
    static func dump(_ url: DatabaseURL) async throws -> DatabaseBackup {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shortcut-sync-tests-\(getpid())/backups")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("\(url.database)-\(UUID().uuidString.prefix(8)).dump")
        try await run(tool("pg_dump"), ["--format=custom", "--file=\(file.path)"] + connection(url) + ["--dbname=\(url.database)"], url: url)
        return DatabaseBackup(file: file)
    }

    /// The database lost and restored from this backup: dropped (its sessions ended), made again
    /// empty, and `pg_restore`d.
    func restore(into url: DatabaseURL) async throws {
        let admin = PostgresClient(configuration: try url.with(database: "postgres").clientConfiguration(maximumConnections: 1),
                                   backgroundLogger: TestDatabase.shared.logger)
        try await admin.withRunning {
            try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(url.database) WITH (FORCE)"), logger: TestDatabase.shared.logger)
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(url.database) TEMPLATE template0"), logger: TestDatabase.shared.logger)
        }
        try await Self.run(Self.tool("pg_restore"), ["--exit-on-error", "--no-owner"] + Self.connection(url) + ["--dbname=\(url.database)", file.path],
                           url: url)
    }

    /// The connection options of `url` (its password goes in the environment, never the arguments).
    private static func connection(_ url: DatabaseURL) -> [String] {
        ["--host=\(url.socketDirectory ?? url.host)", "--port=\(url.port)", "--username=\(url.username)", "--no-password"]
    }

    /// Runs `tool` to its end (at most a minute: then it is killed and this throws), and throws
    /// unless it exits with 0. Through `CommandProcess` (swift-subprocess), as every other child
    /// of the tests: its output goes to files, so a tool that says much cannot fill a pipe and
    /// wait, and its end is seen by polling its exit, not by a handler that might never run.
    private static func run(_ tool: String, _ arguments: [String], url: DatabaseURL) async throws {
        let process = try await CommandProcess(executable: URL(fileURLWithPath: tool), arguments: arguments,
                                               environment: ["PGPASSWORD": url.password ?? ""], output: .kept)
        defer { process.forceStop() }
        let name = URL(fileURLWithPath: tool).lastPathComponent
        guard try await process.waitForExit(timeout: .seconds(60)) else {
            throw Failure("\(name) did not end within a minute: \(process.errorOutput)")
        }
        guard process.exitStatus == 0 else {
            throw Failure("\(name) exited with \(process.exitStatus.map(String.init) ?? "?"): \(process.errorOutput)")
        }
    }
}
