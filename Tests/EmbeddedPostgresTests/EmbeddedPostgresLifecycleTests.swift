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

/// A cluster must not outlive its owner: one that a killed process left running is found and
/// stopped, and one whose owner still runs is left alone.
@Suite struct OrphanedClusterTests {
    /// The pid of a process that has ended (and been reaped).
    static func endedPid() throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Starts a cluster under `directory`, then records `owner` as the process that stops it.
    static func cluster(at directory: URL, ownedBy owner: pid_t) async throws -> (EmbeddedPostgres, pid_t) {
        let cluster = EmbeddedPostgres(dataDirectory: directory, logger: TestDatabase.shared.logger)
        _ = try await cluster.start()
        let postmaster = try #require(Postmaster.running(dataDirectory: directory))
        let ownerFile = cluster.clusterDirectory.deletingLastPathComponent().appendingPathComponent("owner.pid")
        try "\(owner)\n".write(to: ownerFile, atomically: true, encoding: .utf8)
        return (cluster, postmaster)
    }

    /// A fresh directory that the test support's own sweep of `shortcut-sync-*` directories does
    /// not look into: this suite's orphans are its own to find.
    static func directory() -> URL {
        URL(fileURLWithPath: "/tmp").appendingPathComponent("ssync-orphans-\(UUID().uuidString.prefix(8))")
    }

    @Test func aClusterWhoseOwnerEndedIsStoppedAndOneWhoseOwnerRunsIsNot() async throws {
        let parent = Self.directory()
        let orphaned = parent.appendingPathComponent("a"), owned = parent.appendingPathComponent("b")
        defer {
            Postmaster.quit(dataDirectory: orphaned)
            Postmaster.quit(dataDirectory: owned)
            try? FileManager.default.removeItem(at: parent)
        }
        let (first, orphan) = try await Self.cluster(at: orphaned, ownedBy: try Self.endedPid())
        let (second, kept) = try await Self.cluster(at: owned, ownedBy: getppid())

        #expect(EmbeddedPostgres.stopOrphans(under: parent, ownedBefore: .distantPast, logger: TestDatabase.shared.logger).isEmpty,
                "an owner that recorded itself after the moment given is not swept")
        #expect(EmbeddedPostgres.isRunning(orphan))
        let stopped = EmbeddedPostgres.stopOrphans(under: parent, logger: TestDatabase.shared.logger)
        #expect(stopped.map(\.lastPathComponent) == ["postgres"])
        #expect(stopped.first?.deletingLastPathComponent().lastPathComponent == "a")
        #expect(!EmbeddedPostgres.isRunning(orphan), "the orphan's postmaster has ended")
        #expect(EmbeddedPostgres.isRunning(kept), "a cluster whose owner runs is left alone")
        #expect(EmbeddedPostgres.stopOrphans(under: parent, logger: TestDatabase.shared.logger).isEmpty)
        await first.stop()
        await second.stop()
    }

    /// The moment a test run sweeps from: this process's start, not the date of /proc's `self`
    /// link (the mount's, days old), before which no owner had recorded itself.
    @Test func theProcesssStartIsWhenThisProcessBegan() throws {
        let start = try #require(EmbeddedPostgres.processStart)
        let executable = CommandLine.arguments[0]
        let built = try #require(try FileManager.default.attributesOfItem(atPath: executable)[.modificationDate] as? Date)
        #expect(start <= Date().addingTimeInterval(1), "not in the future")
        // To the second (the boot's time is), and after the test executable was made.
        #expect(start >= built.addingTimeInterval(-2), "\(start): before \(executable) was built at \(built)")
    }

    @Test func startingAClusterStopsTheOrphansUnderItsDataDirectory() async throws {
        let parent = Self.directory()
        let nested = parent.appendingPathComponent("bench-run")
        defer {
            Postmaster.quit(dataDirectory: nested)
            Postmaster.quit(dataDirectory: parent)
            try? FileManager.default.removeItem(at: parent)
        }
        let (left, orphan) = try await Self.cluster(at: nested, ownedBy: try Self.endedPid())
        let outer = EmbeddedPostgres(dataDirectory: parent, logger: TestDatabase.shared.logger)
        _ = try await outer.start()
        #expect(!EmbeddedPostgres.isRunning(orphan), "the nested cluster a dead owner left was stopped")
        #expect(Postmaster.running(dataDirectory: parent) != nil)
        await outer.stop()
        await left.stop()
    }
}
