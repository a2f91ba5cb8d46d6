import EmbeddedPostgres
import Foundation

/// Runs `body` with an embedded cluster of its own, under a fresh folder of /tmp named for
/// `purpose` (short: a socket's path is bounded), for a test that stops, kills or restarts its
/// database. Nothing is left: the cluster is stopped, also when `body` throws, then a postmaster
/// that a failed restart left is quit and the folder removed.
public func withScratchCluster<Result: Sendable>(
    _ purpose: String, isolation: isolated (any Actor)? = #isolation,
    _ body: (EmbeddedPostgres, URL, EmbeddedPostgres.Connection) async throws -> Result
) async throws -> Result {
    let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-\(purpose)-\(UUID().uuidString.prefix(8))")
    defer {
        Postmaster.quit(dataDirectory: directory)
        try? FileManager.default.removeItem(at: directory)
    }
    let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
    let connection = try await cluster.start()
    let result: Swift.Result<Result, any Error>
    do {
        result = .success(try await body(cluster, directory, connection))
    } catch {
        result = .failure(error)
    }
    await cluster.stop()
    return try result.get()
}
