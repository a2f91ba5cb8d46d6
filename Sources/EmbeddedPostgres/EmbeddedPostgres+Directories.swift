import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the cluster lives, and the checks that keep others out of it (DESIGN §5).
extension EmbeddedPostgres {
    /// The cluster's home: under the data directory, unless that is out of the `postgres`
    /// user's reach (a checkout under /root), in which case it lives in /var/tmp.
    func clusterHome(asRoot: Bool) -> URL {
        let inside = dataDirectory.appendingPathComponent("postgres")
        guard asRoot, !Self.reachableByOthers(dataDirectory.path) else { return inside }
        return URL(fileURLWithPath: "/var/tmp/shortcut-sync-\(Self.shortHash(dataDirectory.path))")
    }

    /// Makes the cluster's home. Out of the data directory, where everyone may create files
    /// (/var/tmp), it makes it, or uses it only if it is already the cluster user's and nobody
    /// else may write to it.
    func prepareHome(_ home: URL, owner: (uid: uid_t, gid: gid_t)?) throws {
        if home.path.hasPrefix(dataDirectory.path + "/") {
            // Inside the data directory: made owner-only (one an earlier version made open to
            // others is closed), then checked as the one outside is — a link, another user's
            // directory, or one others may write to is refused.
            try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
            var info = stat()
            if lstat(home.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                if let owner, info.st_uid == geteuid() { lchown(home.path, owner.uid, owner.gid) }
                chmod(home.path, 0o700)
            }
            try Self.checkPrivateDirectory(home.path, owner: owner?.uid ?? geteuid())
            return
        }
        if mkdir(home.path, 0o700) == 0 {
            if let owner { lchown(home.path, owner.uid, owner.gid) }
        } else if errno != EEXIST {
            let failure = errno
            throw Failure.commandFailed("mkdir \(home.path)", status: failure, output: String(cString: strerror(failure)))
        }
        try Self.checkPrivateDirectory(home.path, owner: owner?.uid ?? geteuid())
    }

    /// The user the cluster runs as when this process is root.
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

    /// A stable 8-hex-digit name for a path (FNV-1a), short enough for socket paths.
    static func shortHash(_ text: String) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return String(format: "%08x", hash)
    }
}
