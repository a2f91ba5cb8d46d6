import EmbeddedPostgres
import Foundation
import Testing

/// The ports handed to clusters and services: outside the range the kernel gives outgoing
/// connections (one of those took a service's port before it bound it, and the service did not
/// start), and never the same twice in a process.
@Suite struct FreePortTests {
    @Test func portsComeFromOutsideTheOutgoingRangeAndNeverTwice() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(bounds.count == 2)
        let outgoing = bounds[0]...bounds[1]
        var seen: Set<Int> = []
        for _ in 0..<200 {
            let port = try EmbeddedPostgres.freeLoopbackPort()
            #expect(!outgoing.contains(port), "\(port) is in the outgoing range \(outgoing)")
            #expect(port >= 1024 && port < 65536)
            #expect(seen.insert(port).inserted, "\(port) handed out twice")
        }
    }
}
