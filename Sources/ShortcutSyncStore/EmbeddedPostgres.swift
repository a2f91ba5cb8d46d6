import Foundation
import Logging
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
///
/// Its secrets stay secret (DESIGN §5): the password files are owner-only from the moment they
/// exist (`SecretFile`), each start makes its socket directory afresh with `mkdtemp` (never a
/// predictable one someone else could have made first), and a cluster home outside the data
/// directory is used only if it is a real directory of the cluster's user that nobody else may
/// write to.
public final class EmbeddedPostgres: Sendable {
    /// How to reach a running cluster.
    public struct Connection: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String
        public var socketDirectory: String

        /// A `postgres://` URL of one database of the cluster.
        public func url(database: String) -> String {
            let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
            let pass = password.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? password
            return "postgres://\(user):\(pass)@\(host):\(port)/\(database)?sslmode=disable"
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        case binariesNotFound
        case commandFailed(String, status: Int32, output: String)
        case noPostgresUser
        case unsafeDirectory(String, why: String)

        public var description: String {
            switch self {
            case .binariesNotFound:
                "initdb and pg_ctl were not found on PATH nor under /usr/lib/postgresql/*/bin; install PostgreSQL (apt-get install postgresql) or give --database-url"
            case .commandFailed(let command, let status, let output):
                "\(command) exited with status \(status): \(output)"
            case .noPostgresUser:
                "running as root needs a 'postgres' user to run the embedded cluster as; install PostgreSQL or give --database-url"
            case .unsafeDirectory(let path, let why):
                "refusing to use \(path) for the embedded PostgreSQL: \(why); remove it, or give another --data-dir"
            }
        }
    }

    public let dataDirectory: URL
    let logger: Logger
    private let state = Mutex<Connection?>(nil)
    private let startedHere = Mutex(false)

    public init(dataDirectory: URL, logger: Logger) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.logger = logger
    }

    /// Starts the cluster (creating it the first time) or joins it if it already runs; a cluster
    /// it starts listens on `preferredPort` if given (to come back where clients expect it), else
    /// on a free one.
    public func start(preferredPort: Int? = nil) throws -> Connection {
        if let running = state.withLock({ $0 }) { return running }
        let bin = try Self.binDirectory()
        let asRoot = getuid() == 0
        let owner: (uid: uid_t, gid: gid_t)? = asRoot ? try Self.postgresUser() : nil
        let fm = FileManager.default
        try fm.createDirectory(at: dataDirectory, withIntermediateDirectories: true)

        let home = clusterHome(asRoot: asRoot)
        let cluster = home.appendingPathComponent("cluster")
        if home.path.hasPrefix(dataDirectory.path + "/") {
            try fm.createDirectory(atPath: home.path, withIntermediateDirectories: true)
            if let owner { chown(home.path, owner.uid, owner.gid) }
        } else {
            // Out of the data directory, where everyone may create files (/var/tmp): make it,
            // or use it only if it is already the cluster user's and nobody else may write to it.
            if mkdir(home.path, 0o700) == 0 {
                if let owner { lchown(home.path, owner.uid, owner.gid) }
            } else if errno != EEXIST {
                let failure = errno
                throw Failure.commandFailed("mkdir \(home.path)", status: failure, output: String(cString: strerror(failure)))
            }
            try Self.checkPrivateDirectory(home.path, owner: owner?.uid ?? geteuid())
        }

        let password: String
        let secret = SecretFile(passwordFile)
        if let stored = secret.read() {
            password = stored
            if !secret.isOwnerOnly {
                logger.warning("the embedded PostgreSQL's password file may be read by others: make it owner-only (chmod 600)",
                               metadata: ["path": "\(passwordFile.path)"])
            }
        } else {
            password = try secret.readOrCreate(Self.randomPassword)
        }

        if !fm.fileExists(atPath: cluster.appendingPathComponent("PG_VERSION").path) {
            logger.info("creating the embedded PostgreSQL cluster", metadata: ["path": "\(cluster.path)"])
            try? fm.removeItem(at: cluster)
            let pwfile = home.appendingPathComponent("initdb.pw")
            unlink(pwfile.path)  // one a killed start left behind
            // Only the cluster's user (PostgreSQL's, as root) may read it, from the start.
            try SecretFile.create(at: pwfile.path, contents: password + "\n", owner: owner)
            defer { unlink(pwfile.path) }
            try run(bin + "/initdb", ["-D", cluster.path, "-U", "postgres", "--pwfile=\(pwfile.path)",
                                      "--auth=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync"], asPostgres: asRoot)
        }

        let ownerFile = home.appendingPathComponent("owner.pid")
        if let (port, socketDirectory) = try running(bin: bin, cluster: cluster, asRoot: asRoot) {
            let connection = Connection(host: "127.0.0.1", port: port, username: "postgres", password: password, socketDirectory: socketDirectory)
            state.withLock { $0 = connection }
            if let owner = Self.livingOwner(ownerFile) {
                // Another process started it and still runs: share it, and leave it to that process to stop.
                logger.info("joining the running embedded PostgreSQL", metadata: ["port": "\(port)", "owner_pid": "\(owner)"])
            } else {
                // The process that started it ended without stopping it (it was killed): this one takes it over.
                logger.notice("taking over the embedded PostgreSQL that an ended process left running", metadata: ["port": "\(port)"])
                try Self.claim(ownerFile)
                startedHere.withLock { $0 = true }
                Self.register(self)
            }
            return connection
        }

        let port = try preferredPort ?? Self.freeLoopbackPort()
        let socketDirectory = try Self.makeSocketDirectory(owner: owner)
        let options = "-c port=\(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(socketDirectory) -c max_connections=400"
        do {
            try run(bin + "/pg_ctl", ["-D", cluster.path, "-l", home.appendingPathComponent("postgres.log").path,
                                      "-w", "-t", "120", "-o", options, "start"], asPostgres: asRoot)
        } catch {
            rmdir(socketDirectory)
            throw error
        }
        let connection = Connection(host: "127.0.0.1", port: port, username: "postgres", password: password, socketDirectory: socketDirectory)
        state.withLock { $0 = connection }
        try Self.claim(ownerFile)
        startedHere.withLock { $0 = true }
        Self.register(self)
        logger.info("embedded PostgreSQL started", metadata: ["port": "\(port)", "cluster": "\(cluster.path)"])
        return connection
    }

    /// Stops the cluster if this process started it. Safe to call more than once.
    public func stop() {
        let wasStarted = startedHere.withLock { started in
            defer { started = false }
            return started
        }
        let connection = state.withLock { state in
            defer { state = nil }
            return state
        }
        guard wasStarted, let bin = try? Self.binDirectory() else { return }
        let asRoot = getuid() == 0
        let cluster = clusterHome(asRoot: asRoot).appendingPathComponent("cluster")
        do {
            try run(bin + "/pg_ctl", ["-D", cluster.path, "-m", "fast", "-w", "stop"], asPostgres: asRoot)
            try? FileManager.default.removeItem(at: clusterHome(asRoot: asRoot).appendingPathComponent("owner.pid"))
            // Empty once the server is gone; rmdir leaves anything else alone.
            if let connection { rmdir(connection.socketDirectory) }
            logger.info("embedded PostgreSQL stopped")
        } catch {
            logger.error("stopping the embedded PostgreSQL failed", metadata: ["error": "\(error)"])
        }
    }

    /// The file that holds the cluster's password (owner-only).
    public var passwordFile: URL {
        dataDirectory.appendingPathComponent("embedded-postgres.password")
    }

    /// The cluster's own directory (PostgreSQL's data directory, with its `postmaster.pid`).
    public var clusterDirectory: URL {
        clusterHome(asRoot: getuid() == 0).appendingPathComponent("cluster")
    }

    /// Where the cluster lives: under the data directory, unless that is out of the `postgres`
    /// user's reach (a checkout under /root), in which case it lives in /var/tmp.
    func clusterHome(asRoot: Bool) -> URL {
        let inside = dataDirectory.appendingPathComponent("postgres")
        guard asRoot, !Self.reachableByOthers(dataDirectory.path) else { return inside }
        return URL(fileURLWithPath: "/var/tmp/shortcut-sync-\(Self.shortHash(dataDirectory.path))")
    }

    /// The port and socket directory of the cluster if a postmaster already serves it (lines 4
    /// and 5 of its `postmaster.pid`).
    private func running(bin: String, cluster: URL, asRoot: Bool) throws -> (port: Int, socketDirectory: String)? {
        let pidFile = cluster.appendingPathComponent("postmaster.pid")
        guard let contents = try? String(contentsOf: pidFile, encoding: .utf8) else { return nil }
        guard (try? run(bin + "/pg_ctl", ["-D", cluster.path, "status"], asPostgres: asRoot)) != nil else { return nil }
        let lines = contents.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count > 4, let port = Int(lines[3]) else { return nil }
        return (port, lines[4])
    }

    /// Runs a PostgreSQL tool to completion (as `postgres` when asked) and returns its output.
    ///
    /// Output goes to a file rather than a pipe: `pg_ctl start` leaves a server running, and
    /// nothing may wait for a pipe that the server could keep open.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool) throws -> String {
        let command = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = NSTemporaryDirectory() + "shortcut-sync-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(outputPath) }
        let status = try Self.spawnAndWait(command, outputPath: outputPath)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure.commandFailed(command.joined(separator: " "), status: status, output: output)
        }
        return output
    }

    /// posix_spawn and waitpid: independent of run loops, safe to call from any thread.
    static func spawnAndWait(_ command: [String], outputPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // `pg_ctl start` leaves a postmaster running (as another user, as root): it must hold
        // none of this process's descriptors (its sockets and files, or the socket a parent
        // process watches to learn that this one ended).
        for fd in inheritedDescriptors() where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure.commandFailed(command.joined(separator: " "), status: spawned, output: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, spelled out: Glibc's macros are not imported into Swift.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// The descriptors this process has open (none where /proc does not tell). Closing one that
    /// was closed meanwhile in the child is harmless: glibc ignores EBADF there.
    static func inheritedDescriptors() -> [Int32] {
        #if os(Linux)
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap(Int32.init)
        #else
        []
        #endif
    }

    // MARK: Helpers

    /// The pid in `ownerFile` if that process still runs (and is not this one).
    static func livingOwner(_ ownerFile: URL) -> pid_t? {
        guard let text = try? String(contentsOf: ownerFile, encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, pid != getpid() else { return nil }
        return isRunning(pid) ? pid : nil
    }

    /// Whether `pid` runs: it exists and, where /proc tells, is not a zombie (a killed process
    /// its parent has not reaped yet is no owner).
    public static func isRunning(_ pid: pid_t) -> Bool {
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") {
            let state = stat[stat.index(after: close)...].split(separator: " ").first ?? ""
            return state != "Z" && state != "X"
        }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// Records this process as the one that stops the cluster.
    static func claim(_ ownerFile: URL) throws {
        try "\(getpid())\n".write(to: ownerFile, atomically: true, encoding: .utf8)
    }

    /// The newest PostgreSQL `bin` directory: PATH first, then /usr/lib/postgresql/*/bin.
    static func binDirectory() throws -> String {
        let fm = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init)
        where fm.isExecutableFile(atPath: directory + "/initdb") && fm.isExecutableFile(atPath: directory + "/pg_ctl") {
            return directory
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where fm.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw Failure.binariesNotFound
    }

    static func postgresUser() throws -> (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam("postgres") else { throw Failure.noPostgresUser }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// A new socket directory, `/tmp/shortcut-sync-XXXXXX` made by `mkdtemp` (mode 0700, a name
    /// nobody could take first; short, since socket paths are limited to ~107 bytes), handed to
    /// the cluster's user when that is another.
    static func makeSocketDirectory(owner: (uid: uid_t, gid: gid_t)?) throws -> String {
        var template = Array("/tmp/shortcut-sync-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure.commandFailed("mkdtemp /tmp/shortcut-sync-XXXXXX", status: errno, output: String(cString: strerror(errno)))
        }
        let path = String(cString: made)
        if let owner, chown(path, owner.uid, owner.gid) != 0 {
            let failure = errno
            rmdir(path)
            throw Failure.commandFailed("chown \(path)", status: failure, output: String(cString: strerror(failure)))
        }
        return path
    }

    /// Throws unless `path` is a directory (not a link) owned by `owner` that no one else may write to.
    public static func checkPrivateDirectory(_ path: String, owner: uid_t) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw Failure.unsafeDirectory(path, why: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Failure.unsafeDirectory(path, why: "it is not a directory (a link, or a file)")
        }
        guard info.st_uid == owner else {
            throw Failure.unsafeDirectory(path, why: "it belongs to uid \(info.st_uid), not to uid \(owner) that the cluster runs as")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw Failure.unsafeDirectory(path, why: "others may write to it (mode \(String(info.st_mode & 0o7777, radix: 8)))")
        }
    }

    /// Whether every directory on the way to `path` lets other users through.
    static func reachableByOthers(_ path: String) -> Bool {
        var url = URL(fileURLWithPath: path)
        while url.path != "/" {
            var info = stat()
            if stat(url.path, &info) == 0, info.st_mode & 0o001 == 0 { return false }
            url.deleteLastPathComponent()
        }
        return true
    }

    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.commandFailed("socket()", status: errno, output: "") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure.commandFailed("bind(127.0.0.1:0)", status: errno, output: "") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A stable 8-hex-digit name for a path (FNV-1a), short enough for socket paths.
    static func shortHash(_ text: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return String(format: "%08x", hash)
    }

    // MARK: Stopping at exit

    private static let started = Mutex<[EmbeddedPostgres]>([])

    private static func register(_ cluster: EmbeddedPostgres) {
        let first = started.withLock { list in
            list.append(cluster)
            return list.count == 1
        }
        if first {
            atexit { EmbeddedPostgres.stopAll() }
        }
    }

    /// Stops every cluster this process started; runs at exit.
    public static func stopAll() {
        let clusters = started.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for cluster in clusters { cluster.stop() }
    }
}
