import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// This process's limit on open files.
enum OpenFileLimit {
    /// Many streams need many sockets: the soft limit goes up to the hard one (the service, a
    /// child of this process, inherits it). Returns the soft limit in force afterwards.
    @discardableResult
    static func raise() -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}
