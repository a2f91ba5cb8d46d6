import EmbeddedPostgres
import Foundation
import ShortcutSyncBench
import ShortcutSyncChildProcess
import ShortcutSyncDatabaseTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bench citus` as a person runs it: the real executable starts one PostgreSQL and a Citus
/// cluster, prints them side by side, and leaves no server of its own running, whether it ends
/// or is interrupted.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled))
struct CitusBenchTests {
    @Test(.timeLimit(.minutes(5)))
    func smokeRunPrintsBothColumnsWithTheirRatioAndStopsEveryServer() async throws {
        let dataDirectory = try Self.dataDirectory()
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        let command = try await CommandProcess(["bench", "citus", "--smoke", "--data-dir", dataDirectory.path])
        defer { command.forceStop() }
        guard try await command.waitForExit(timeout: .seconds(240)) else {
            Issue.record("bench citus --smoke did not end within 240 s")
            return
        }
        #expect(command.exitStatus == 0, "\(command.errorOutput)")
        let lines = command.output.split(separator: "\n").map(String.init)
        // The service on the coordinator, then attached to the first worker as pg_dist_node names it.
        let header = try #require(lines.first { $0.hasPrefix("| | one PostgreSQL |") }, "\(command.output)")
        #expect(header.hasPrefix("| | one PostgreSQL | Citus, a coordinator and 2 workers, the service on the coordinator | Citus / one |"
                                 + " the service attached to "), "\(header)")
        #expect(header.hasSuffix(" | attached / one |"), "\(header)")
        for scenario in ["100-event pushes, 4 devices of 4 accounts", "1-event pushes, 32 devices", "whole-view pulls, 32 devices of as many accounts"] {
            let row = try #require(lines.first { $0.hasPrefix("| \(scenario) |") }, "no row for \(scenario)")
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 6 && [1, 2, 4].allSatisfy { cells[$0].hasSuffix("ms") }, "\(row)")
            #expect(cells.count == 6 && [3, 5].allSatisfy { Double(cells[$0]).map { $0 > 0 } == true }, "no ratio in \(row)")
        }
        let cpu = lines.filter { $0.hasPrefix("| PostgreSQL CPU per push, every node |") }
        let pullCPU = try #require(lines.first { $0.hasPrefix("| PostgreSQL CPU per pull, every node |") }, "\(command.output)")
        #expect(pullCPU.components(separatedBy: "worker1").count == 3 && pullCPU.hasSuffix("× |"), "\(pullCPU)")
        #expect(cpu.count == 2 && cpu.allSatisfy { row in
            row.components(separatedBy: "coordinator").count == 3 && row.components(separatedBy: "worker2").count == 3 && row.hasSuffix("× |")
        }, "\(cpu)")
        // Each worker's own statements, for both push scenarios of both runs (issue 66, item 2):
        // a push's function among them, as each worker ran it.
        let said = (command.output + "\n" + command.errorOutput).split(separator: "\n").map(String.init)
        for worker in ["worker1", "worker2"] {
            let tables = said.indices.filter { said[$0].hasSuffix(")") && said[$0].contains(": \(worker)'s statements over the pushes (") }
            #expect(tables.count == 4, "\(worker): \(tables.map { said[$0] })")
            #expect(tables.contains { start in said[(start + 1)...].prefix { $0.hasPrefix("|") }.contains { $0.contains("push_write_folded") } },
                    "no push function among \(worker)'s statements")
        }
        try await Self.expectNothingLeft(of: command.processIdentifier, dataDirectory: dataDirectory)
    }

    @Test(.timeLimit(.minutes(5)))
    func aSignalWhileTheClusterStartsStopsEveryServer() async throws {
        let dataDirectory = try Self.dataDirectory()
        defer { try? FileManager.default.removeItem(at: dataDirectory) }
        let command = try await CommandProcess(["bench", "citus", "--smoke", "--data-dir", dataDirectory.path])
        defer { command.forceStop() }
        // The first Citus node up: the run on one PostgreSQL is over and the cluster is starting.
        let deadline = ContinuousClock.now + .seconds(180)
        while Self.servers(of: command.processIdentifier, dataDirectory: dataDirectory).citus.isEmpty && command.isRunning {
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(command.isRunning, "bench citus ended before its cluster started: \(command.errorOutput)")
        command.send(SIGINT)
        #expect(try await command.waitForExit(timeout: .seconds(120)), "bench citus did not end within 120 s of SIGINT")
        #expect(command.exitStatus != 0)
        try await Self.expectNothingLeft(of: command.processIdentifier, dataDirectory: dataDirectory)
    }

    /// A run killed with its cluster up leaves every node running (nothing of it can stop them);
    /// the next cluster's start stops them and removes their directory, as the next test run's
    /// start does (`CitusNodes.stopOrphans`).
    @Test(.timeLimit(.minutes(5)))
    func aKilledRunsNodesAreStoppedAndRemovedWhenTheNextClusterStarts() async throws {
        let dataDirectory = try Self.dataDirectory()
        let command = try await CommandProcess(["bench", "citus", "--smoke", "--data-dir", dataDirectory.path])
        defer {
            command.forceStop()
            // The one PostgreSQL the killed run left, the embedded sweep's (and the nodes, should the test fail).
            EmbeddedPostgres.stopOrphans(under: dataDirectory, logger: TestDatabase.shared.logger)
            CitusNodes.stopOrphans(logger: TestDatabase.shared.logger)
            try? FileManager.default.removeItem(at: dataDirectory)
        }
        let nodes = CitusBenchmark.workerCount + 1
        let deadline = ContinuousClock.now + .seconds(180)
        while Self.servers(of: command.processIdentifier, dataDirectory: dataDirectory).citus.count < nodes && command.isRunning {
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(command.isRunning, "bench citus ended before its cluster started: \(command.errorOutput)")
        command.send(SIGKILL)
        #expect(try await command.waitForExit(timeout: .seconds(10)))
        let left = Self.servers(of: command.processIdentifier, dataDirectory: dataDirectory).citus
        try #require(left.count == nodes, "the killed run's nodes run on: \(left)")

        try await CitusNodes.with(workerCount: 1, logger: TestDatabase.shared.logger) { _ in }
        for _ in 0..<100 where left.contains(where: EmbeddedPostgres.isRunning) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!left.contains(where: EmbeddedPostgres.isRunning), "the killed run's nodes were stopped")
        let temporary = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        #expect(!temporary.contains { $0.hasPrefix(Self.citusPrefix(command.processIdentifier)) }, "the killed run's cluster directory was removed")
        // Nor is the output file of a tool (`pg_ctl`) it was running when killed left behind.
        #expect(!temporary.contains { $0.hasPrefix("shortcut-sync-\(command.processIdentifier)-") && $0.hasSuffix(".out") },
                "the killed run left a tool's output file: \(temporary.filter { $0.hasSuffix(".out") })")
    }

    /// A data directory of the test's own for the embedded PostgreSQL of one run.
    static func dataDirectory() throws -> URL {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("citus-bench-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// No postmaster of the run left (waiting a moment for one that is ending), and the
    /// cluster's directory removed.
    static func expectNothingLeft(of pid: pid_t, dataDirectory: URL) async throws {
        for _ in 0..<100 {
            let left = servers(of: pid, dataDirectory: dataDirectory)
            if left.embedded.isEmpty && left.citus.isEmpty { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let left = servers(of: pid, dataDirectory: dataDirectory)
        #expect(left.embedded.isEmpty && left.citus.isEmpty, "postgres processes left: \(left)")
        let temporary = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        #expect(!temporary.contains { $0.hasPrefix(citusPrefix(pid)) }, "the cluster's directory was not removed")
    }

    /// The running postgres processes whose command line names the run's embedded data directory
    /// or its Citus cluster's directory (`CitusNodes`: `shortcut-sync-citus-<pid>-…`).
    static func servers(of pid: pid_t, dataDirectory: URL) -> (embedded: [pid_t], citus: [pid_t]) {
        var embedded: [pid_t] = [], citus: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let process = pid_t(entry), EmbeddedPostgres.isRunning(process),
                  let bytes = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(entry)/cmdline")) else { continue }
            let arguments = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard arguments.first?.hasSuffix("postgres") == true else { continue }
            let line = arguments.joined(separator: " ")
            if line.contains(dataDirectory.path) { embedded.append(process) }
            if line.contains(citusPrefix(pid)) { citus.append(process) }
        }
        return (embedded, citus)
    }

    static func citusPrefix(_ pid: pid_t) -> String { "shortcut-sync-citus-\(pid)-" }
}
