#if canImport(Glibc)
import Glibc
#endif

extension EmbeddedPostgres {
    /// A loopback TCP port that nothing listens on at this moment: for a new cluster, and for
    /// the services the tests and the benchmarks start.
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
}
