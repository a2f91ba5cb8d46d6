import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension EmbeddedPostgres {
    /// A loopback TCP port that nothing listens on at this moment: for a new cluster, and for
    /// the services the tests and the benchmarks start.
    ///
    /// It is chosen outside the kernel's range of ports for outgoing connections
    /// (`ip_local_port_range`): a port of that range, free when asked, could be taken by any
    /// connection this machine opens before the server binds it (a test run opens thousands), and
    /// the server then failed to start ("Address already in use"). Never the same port twice in
    /// one process.
    public static func freeLoopbackPort() throws -> Int {
        let candidates = listeningPorts
        let count = candidates.count
        let start = Int.random(in: 0..<count)
        for offset in 0..<count {
            let port = candidates.lowerBound + (start + offset) % count
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if canBind(port) { return port }
        }
        throw Failure.commandFailed("bind(127.0.0.1) on a port of \(candidates)", status: EADDRINUSE, output: "")
    }

    /// Ports handed out by this process.
    private static let handedOut = Mutex<Set<Int>>([])

    /// The larger stretch of ports (1024 and up) outside the range the kernel gives outgoing
    /// connections.
    static var listeningPorts: Range<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? "32768 60999"
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let (low, high) = bounds.count == 2 ? (bounds[0], bounds[1]) : (32768, 60999)
        let below = 1024..<max(1024, low)
        let above = min(65536, high + 1)..<65536
        return below.count >= above.count ? below : above
    }

    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
        }
    }
}
