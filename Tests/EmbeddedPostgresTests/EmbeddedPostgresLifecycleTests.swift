import EmbeddedPostgres
import Foundation
import ServiceLifecycle
import ShortcutSyncDatabaseTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The cluster as a process sees it: the postmaster holds none of the starter's descriptors,
/// and as a `Service` the cluster that was started is stopped at the graceful shutdown.
@Suite struct EmbeddedPostgresLifecycleTests {
    /// A fresh data directory, short enough for socket paths; removed by the caller.
    static func directory() -> URL {
        URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-life-\(UUID().uuidString.prefix(8))")
    }

    @Test func thePostmasterHoldsNoneOfTheStartingProcesssDescriptors() async throws {
        let directory = Self.directory()
        // A file this process holds open without close-on-exec: a child inherits it unless it is closed for it.
        let marker = "/tmp/shortcut-sync-marker-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: marker, contents: Data("open".utf8))
        let fd = open(marker, O_RDONLY)
        #expect(fd >= 0)
        defer {
            close(fd)
            unlink(marker)
            Postmaster.quit(dataDirectory: directory)
            try? FileManager.default.removeItem(at: directory)
        }
        let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
        _ = try await cluster.start()
        let postmaster = try #require(Postmaster.running(dataDirectory: directory))
        let descriptors = "/proc/\(postmaster)/fd"
        let targets = try FileManager.default.contentsOfDirectory(atPath: descriptors)
            .compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/\($0)") }
        #expect(targets.contains { $0.hasSuffix("postgres.log") }, "its log is open: the listing can be read")
        #expect(!targets.contains(marker))
        await cluster.stop()
    }

    @Test func asAServiceItStopsTheClusterItStartedAtTheGracefulShutdown() async throws {
        let directory = Self.directory()
        defer {
            Postmaster.quit(dataDirectory: directory)
            try? FileManager.default.removeItem(at: directory)
        }
        let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
        let connection = try await cluster.start()
        let postmaster = try #require(Postmaster.running(dataDirectory: directory))

        let group = ServiceGroup(configuration: .init(services: [cluster], logger: TestDatabase.shared.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(100))
            #expect(EmbeddedPostgres.isRunning(postmaster), "it runs until the shutdown")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(!EmbeddedPostgres.isRunning(postmaster))
        #expect(!FileManager.default.fileExists(atPath: connection.socketDirectory), "its socket directory is removed")
        #expect(!FileManager.default.fileExists(atPath: cluster.clusterDirectory.deletingLastPathComponent().appendingPathComponent("owner.pid").path))
    }
}
