import Foundation
import Logging
import SecretFiles
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL cluster of its own, for running without a database server (DESIGN §7).
///
/// Made with the machine's `initdb` and `pg_ctl` under a data directory, listening on a Unix
/// socket and a free loopback port, password-protected, stopped when the process ends and
/// reused on the next start. PostgreSQL refuses to run as root, so as root the cluster runs as
/// the `postgres` user, in a directory that user can reach, with its socket on a short path.
/// The tools run as child processes that no thread waits for (`PostgresTools`).
///
/// Its secrets stay secret (DESIGN §5): the password files are owner-only from the moment they
/// exist (`SecretFile`), each start makes its socket directory afresh with `mkdtemp` (never a
/// predictable one someone else could have made first), and a cluster home outside the data
/// directory is used only if it is a real directory of the cluster's user that nobody else may
/// write to.
///
/// As a `Service` it keeps the cluster it started until the graceful shutdown, then stops it:
/// first in a `ServiceGroup`, it stops last, once everything that used it has ended.
public final class EmbeddedPostgres: Service, Sendable {
    public let dataDirectory: URL
    let logger: Logger
    private let state = Mutex(State())

    private struct State {
        /// The running cluster, once started or joined.
        var connection: Connection?
        /// Whether this process stops it (it started it, or took it over).
        var startedHere = false
        /// The stop under way, which every caller of `stop()` waits for.
        var stopping: Task<Void, Never>?
    }

    /// Server settings of a cluster this process starts, beside its own (`-c name=value`): for a
    /// cluster that loads an extension (`shared_preload_libraries`), a Citus node for instance.
    public let settings: [(name: String, value: String)]

    public init(dataDirectory: URL, logger: Logger, settings: [(name: String, value: String)] = []) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.logger = logger
        self.settings = settings
    }

    /// The file that holds the cluster's password (owner-only).
    public var passwordFile: URL {
        dataDirectory.appendingPathComponent("embedded-postgres.password")
    }

    /// The cluster's own directory (PostgreSQL's data directory, with its `postmaster.pid`).
    public var clusterDirectory: URL {
        clusterHome(asRoot: getuid() == 0).appendingPathComponent("cluster")
    }

    /// Starts the cluster (creating it the first time) or joins it if it already runs; a cluster
    /// it starts listens on `preferredPort` if given (to come back where clients expect it), else
    /// on a free one.
    public func start(preferredPort: Int? = nil) async throws -> Connection {
        await state.withLock { $0.stopping }?.value
        if let running = state.withLock({ $0.connection }) { return running }
        let asRoot = getuid() == 0
        let tools = try PostgresTools.find(asPostgres: asRoot)
        let owner: (uid: uid_t, gid: gid_t)? = asRoot ? try Self.postgresUser() : nil
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let home = clusterHome(asRoot: asRoot)
        try prepareHome(home, owner: owner)
        // Clusters that an ended process left running under this data directory (a killed run's).
        Self.stopOrphans(under: dataDirectory, keeping: home, logger: logger)
        let password = try storedPassword()
        let cluster = home.appendingPathComponent("cluster")
        if !FileManager.default.fileExists(atPath: cluster.appendingPathComponent("PG_VERSION").path) {
            try await create(cluster, in: home, password: password, owner: owner, tools: tools)
        }

        let ownerFile = home.appendingPathComponent("owner.pid")
        if let (port, socketDirectory) = await running(cluster, tools: tools) {
            let connection = Connection(host: "127.0.0.1", port: port, username: "postgres", password: password, socketDirectory: socketDirectory)
            if let owner = Self.livingOwner(ownerFile) {
                // Another process started it and still runs: share it, and leave it to that process to stop.
                state.withLock { $0.connection = connection }
                logger.info("joining the running embedded PostgreSQL", metadata: ["port": "\(port)", "owner_pid": "\(owner)"])
            } else {
                // The process that started it ended without stopping it (it was killed): this one takes it over.
                logger.notice("taking over the embedded PostgreSQL that an ended process left running", metadata: ["port": "\(port)"])
                try Self.claim(ownerFile)
                startedHere(connection)
            }
            return connection
        }

        let port = try preferredPort ?? Self.freeLoopbackPort()
        let socketDirectory = try Self.makeSocketDirectory(owner: owner)
        let options = (["-c port=\(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(socketDirectory) -c max_connections=400"]
            + settings.map { "-c \($0.name)=\($0.value)" }).joined(separator: " ")
        do {
            try await tools.run("pg_ctl", ["-D", cluster.path, "-l", home.appendingPathComponent("postgres.log").path,
                                           "-w", "-t", "120", "-o", options, "start"])
        } catch {
            rmdir(socketDirectory)
            throw error
        }
        let connection = Connection(host: "127.0.0.1", port: port, username: "postgres", password: password, socketDirectory: socketDirectory)
        try Self.claim(ownerFile)
        startedHere(connection)
        logger.info("embedded PostgreSQL started", metadata: ["port": "\(port)", "cluster": "\(cluster.path)"])
        return connection
    }

    /// `pg_ctl restart -m fast` of a cluster this process started: every session ends, and the
    /// server comes back on the same port and socket. For fault tests and operators' drills.
    public func restart() async throws {
        guard state.withLock({ $0.startedHere }) else { return }
        let asRoot = getuid() == 0
        let tools = try PostgresTools.find(asPostgres: asRoot)
        let home = clusterHome(asRoot: asRoot)
        try await tools.run("pg_ctl", ["-D", home.appendingPathComponent("cluster").path, "-l", home.appendingPathComponent("postgres.log").path,
                                       "-m", "fast", "-w", "-t", "120", "restart"])
    }

    /// `pg_ctl stop -m immediate` of a cluster this process started: no checkpoint, every session
    /// cut, as a lost machine leaves it (its next start recovers from the WAL). For fault tests:
    /// `start(preferredPort:)` brings it back, where its clients expect it with the old port.
    public func stopImmediately() async throws {
        guard let connection = state.withLock({ $0.startedHere ? $0.connection : nil }) else { return }
        let asRoot = getuid() == 0
        let tools = try PostgresTools.find(asPostgres: asRoot)
        try await tools.run("pg_ctl", ["-D", clusterHome(asRoot: asRoot).appendingPathComponent("cluster").path, "-m", "immediate", "-w", "stop"])
        state.withLock { $0.connection = nil }
        rmdir(connection.socketDirectory)
    }

    /// Stops the cluster if this process started it, and waits until it has stopped. Safe to
    /// call more than once, and at the same time: every caller waits for the one stop.
    public func stop() async {
        await beginStopping()?.value
    }

    /// Keeps the cluster until the graceful shutdown, then stops it. Cancelled (the group gave
    /// up waiting), it returns at once: the stop goes on, and `stop()` waits for it.
    public func run() async throws {
        try? await gracefulShutdown()
        guard beginStopping() != nil else { return }
        while state.withLock({ $0.stopping }) != nil {
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { return }
        }
    }

    // MARK: Starting

    /// The password in the owner-only file, made the first time.
    private func storedPassword() throws -> String {
        let secret = SecretFile(passwordFile)
        guard let stored = secret.read() else { return try secret.readOrCreate(Self.randomPassword) }
        if !secret.isOwnerOnly {
            logger.warning("the embedded PostgreSQL's password file may be read by others: make it owner-only (chmod 600)",
                           metadata: ["path": "\(passwordFile.path)"])
        }
        return stored
    }

    /// Makes the cluster with `initdb`, protected by `password`.
    private func create(_ cluster: URL, in home: URL, password: String, owner: (uid: uid_t, gid: gid_t)?, tools: PostgresTools) async throws {
        logger.info("creating the embedded PostgreSQL cluster", metadata: ["path": "\(cluster.path)"])
        try? FileManager.default.removeItem(at: cluster)
        let pwfile = home.appendingPathComponent("initdb.pw")
        unlink(pwfile.path)  // one a killed start left behind
        // Only the cluster's user (PostgreSQL's, as root) may read it, from the start.
        try SecretFile.create(at: pwfile.path, contents: password + "\n", owner: owner)
        defer { unlink(pwfile.path) }
        try await tools.run("initdb", ["-D", cluster.path, "-U", "postgres", "--pwfile=\(pwfile.path)",
                                       "--auth=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"])
    }

    /// The port and socket directory of the cluster if a postmaster already serves it (lines 4
    /// and 5 of its `postmaster.pid`).
    private func running(_ cluster: URL, tools: PostgresTools) async -> (port: Int, socketDirectory: String)? {
        guard let lines = Self.postmasterFile(cluster) else { return nil }
        guard (try? await tools.run("pg_ctl", ["-D", cluster.path, "status"])) != nil else { return nil }
        guard lines.count > 4, let port = Int(lines[3]) else { return nil }
        return (port, lines[4])
    }

    /// Records that this process stops the cluster, at the latest when it exits.
    private func startedHere(_ connection: Connection) {
        state.withLock { state in
            state.connection = connection
            state.startedHere = true
        }
        Self.register(self)
    }

    static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    // MARK: Stopping

    /// The stop under way, begun here if this process started the cluster and nothing stops it
    /// yet; nil when there is nothing to stop.
    ///
    /// The stop runs in a task of its own, so that a caller that is cancelled (a service group
    /// that gave up waiting) never leaves it half-done; `stop()` waits for it.
    private func beginStopping() -> Task<Void, Never>? {
        state.withLock { state in
            if let stopping = state.stopping { return stopping }
            let socketDirectory = state.connection?.socketDirectory
            defer {
                state.connection = nil
                state.startedHere = false
            }
            guard state.startedHere else { return nil }
            let stopping = Task { await self.shutDown(socketDirectory: socketDirectory) }
            state.stopping = stopping
            return stopping
        }
    }

    /// `pg_ctl stop -m fast`, then the owner file and the (then empty) socket directory go.
    private func shutDown(socketDirectory: String?) async {
        defer { state.withLock { $0.stopping = nil } }
        let asRoot = getuid() == 0
        guard let tools = try? PostgresTools.find(asPostgres: asRoot) else { return }
        let home = clusterHome(asRoot: asRoot)
        do {
            try await tools.run("pg_ctl", ["-D", home.appendingPathComponent("cluster").path, "-m", "fast", "-w", "stop"])
            try? FileManager.default.removeItem(at: home.appendingPathComponent("owner.pid"))
            // Empty once the server is gone; rmdir leaves anything else alone.
            if let socketDirectory { rmdir(socketDirectory) }
            logger.info("embedded PostgreSQL stopped")
        } catch {
            logger.error("stopping the embedded PostgreSQL failed", metadata: ["error": "\(error)"])
            // A server that was gone already (killed) left its socket and lock files behind: with
            // no server running on the cluster, they go, and the directory with them.
            let running = (try? await tools.run("pg_ctl", ["-D", home.appendingPathComponent("cluster").path, "status"])) != nil
            if let socketDirectory, !running {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: socketDirectory)) ?? [] where name.hasPrefix(".s.PGSQL.") {
                    unlink(socketDirectory + "/" + name)
                }
                rmdir(socketDirectory)
            }
        }
    }

    // MARK: Stopping at exit

    private static let started = Mutex<[EmbeddedPostgres]>([])

    private static func register(_ cluster: EmbeddedPostgres) {
        let first = started.withLock { list in
            guard !list.contains(where: { $0 === cluster }) else { return false }
            list.append(cluster)
            return list.count == 1
        }
        if first {
            atexit { EmbeddedPostgres.stopAllAtExit() }
        }
    }

    /// Stops every cluster this process started and did not stop (or was still stopping); runs
    /// at exit.
    static func stopAllAtExit() {
        let clusters = started.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for cluster in clusters {
            let (due, socketDirectory) = cluster.state.withLock { state in
                defer {
                    state.connection = nil
                    state.startedHere = false
                }
                return (state.startedHere || state.stopping != nil, state.connection?.socketDirectory)
            }
            guard due else { continue }
            let home = cluster.clusterHome(asRoot: getuid() == 0)
            stopAtExit(cluster: home.appendingPathComponent("cluster"), ownerFile: home.appendingPathComponent("owner.pid"),
                       socketDirectory: socketDirectory)
        }
    }
}
