import Foundation
import SecretFiles
#if canImport(Glibc)
import Glibc
#endif

/// A file that holds the admin token (`serve --admin-token-file`, or the one `serve` makes in
/// its data directory), read the same way at start, on `SIGHUP` and when a rotation is announced:
/// at most 4 KiB, without the blanks around it, and refused when it could be guessed (fewer than
/// 32 characters, 128 bits of hex, or fewer than 8 different ones).
public struct AdminTokenFile: Sendable {
    /// Why a token file cannot be used; its description is the message an operator reads.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
        /// The file could not be read (else its token is too weak).
        public var unreadable = false
    }

    public static let minimumLength = 32

    public let url: URL

    public init(_ url: URL) {
        self.url = url
    }

    public var path: String { url.path }

    /// Whether only this user may read the file (a token others can read may be known).
    public var isOwnerOnly: Bool { SecretFile(url).isOwnerOnly }

    /// The token the file holds; throws a `Problem` when it cannot be read, is not a regular
    /// file (a symbolic link is not followed: one planted at the path would name another file
    /// to the servers), or is too weak.
    public func read() throws -> String {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let failure = errno
            throw Problem(description: failure == ELOOP ? "\(path) is a symbolic link: give the file itself" : "cannot read \(path)",
                          unreadable: true)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Problem(description: "\(path) is not a regular file", unreadable: true)
        }
        var bytes = [UInt8](repeating: 0, count: 4097)
        var count = 0
        while count < bytes.count {
            let got = bytes[count...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got > 0 {
                count += got
            } else if got == 0 {
                break
            } else if errno != EINTR {
                throw Problem(description: "cannot read \(path)", unreadable: true)
            }
        }
        guard count <= 4096 else { throw Problem(description: "cannot read \(path): more than 4 KiB", unreadable: true) }
        let token = String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.check(token)
        return token
    }

    /// Refuses a token shorter than `minimumLength` characters, or one made of fewer than 8 different ones.
    public static func check(_ token: String) throws {
        guard token.count >= minimumLength, Set(token).count >= 8 else {
            throw Problem(description:
                "the admin token must carry at least 128 bits: \(minimumLength) or more random characters (openssl rand -hex 32 makes one)")
        }
    }
}
