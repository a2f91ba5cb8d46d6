import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file that holds a secret (a password, a token): only its owner may read it, from the
/// moment it exists (DESIGN §5, "Secrets stay secret").
///
/// Writing a file and then `chmod`ing it leaves a moment in which anyone may open it, and an
/// opened file stays readable after the `chmod`. So a secret is written into a fresh file
/// opened `O_CREAT | O_EXCL | O_NOFOLLOW` with mode 0600 (never an existing file or a link
/// someone planted), and only the complete file is given its name.
public struct SecretFile: Sendable {
    /// Why a secret could not be stored or read.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// The `errno` of the call that failed.
        public var code: Int32

        init(_ what: String, code: Int32) {
            description = "\(what): \(String(cString: strerror(code)))"
            self.code = code
        }
    }

    public let url: URL

    public init(_ url: URL) {
        self.url = url
    }

    public var path: String { url.path }

    /// The secret stored there (trimmed), or nil when there is none.
    public func read() -> String? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return secret.isEmpty ? nil : secret
    }

    /// Whether the file is a regular file of this process's user that nobody else may read or write.
    public var isOwnerOnly: Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && info.st_mode & 0o077 == 0
    }

    /// The secret stored there if the file is owner-only; else `make()`'s, stored owner-only.
    ///
    /// A file others could read (or a link, or another user's file) is removed, not used: its
    /// secret may be known. Of processes that store one at the same moment, the first wins and
    /// the others get its secret.
    public func readOrCreate(_ make: () -> String) throws -> String {
        if isOwnerOnly, let stored = read() { return stored }
        var info = stat()
        if lstat(path, &info) == 0, unlink(path) != 0, errno != ENOENT {
            throw Failure("cannot replace \(path), which is not this user's alone", code: errno)
        }
        let secret = make()
        let temporary = try Self.createOwnerOnly(nextTo: url, contents: secret + "\n")
        defer { unlink(temporary) }
        // link(2), unlike rename(2), never replaces: a secret another process stored meanwhile stays.
        if link(temporary, path) == 0 { return secret }
        let failure = errno
        if failure == EEXIST, isOwnerOnly, let stored = read() { return stored }
        throw Failure("cannot store a secret at \(path)", code: failure)
    }

    /// Stores `secret` in place of whatever the file held: written into a fresh owner-only file
    /// beside it, which then takes the name (rename(2)): a reader sees the old secret or the new
    /// one, never half of one, and a link planted at the name is replaced, never followed. The
    /// file keeps its owner, whose processes read it (servers run as their own user): root gives
    /// the new file to that owner; another user is refused, since the owner could not read a file
    /// of theirs made owner-only.
    public func replace(with secret: String) throws {
        var info = stat()
        var owner: (uid: uid_t, gid: gid_t)?
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid != geteuid() {
            guard geteuid() == 0 else {
                throw Failure("cannot replace \(path): it belongs to user \(info.st_uid), whose processes read it; run this as that user",
                              code: EPERM)
            }
            owner = (info.st_uid, info.st_gid)
        }
        let temporary = try Self.createOwnerOnly(nextTo: url, contents: secret + "\n", owner: owner)
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw Failure("cannot store a secret at \(path)", code: failure)
        }
    }

    /// Creates a file at `path` that must not exist yet, mode 0600 from the start, owned by
    /// `owner` when given (so that another user, PostgreSQL's, may read it and nobody else), and
    /// writes `contents` into it.
    public static func create(at path: String, contents: String, owner: (uid: uid_t, gid: gid_t)? = nil) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure("cannot create \(path)", code: errno) }
        var failure: Int32 = 0
        if let owner, fchown(fd, owner.uid, owner.gid) != 0 { failure = errno }
        let bytes = Array(contents.utf8)
        var offset = 0
        while failure == 0, offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                offset += count
            } else if count == 0 || errno != EINTR {
                failure = count == 0 ? EIO : errno
            }
        }
        close(fd)
        guard failure == 0 else {
            unlink(path)
            throw Failure("cannot write \(path)", code: failure)
        }
    }

    /// A fresh owner-only file beside `url` holding `contents` (owned by `owner` when given): its path.
    private static func createOwnerOnly(nextTo url: URL, contents: String, owner: (uid: uid_t, gid: gid_t)? = nil) throws -> String {
        let directory = url.deletingLastPathComponent().path
        for _ in 0..<8 {
            let candidate = "\(directory)/.\(url.lastPathComponent).\(UInt64.random(in: 0...UInt64.max)).tmp"
            do {
                try create(at: candidate, contents: contents, owner: owner)
                return candidate
            } catch let failure as Failure where failure.code == EEXIST {
                continue
            }
        }
        throw Failure("cannot create a temporary file in \(directory)", code: EEXIST)
    }
}
