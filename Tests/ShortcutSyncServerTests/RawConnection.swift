import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the service, for what no HTTP client will do: stall an upload
/// halfway, stay silent, or hold a stream open while reading it byte by byte.
final class RawConnection {
    private let socket: Int32
    /// Everything read so far.
    private(set) var received: [UInt8] = []

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawConnectionError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw RawConnectionError("connect() failed: errno \(errno)")
        }
    }

    deinit { close(socket) }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw RawConnectionError("send() failed: errno \(errno)") }
            offset += sent
        }
    }

    enum ReadResult: Equatable { case data, closed, nothing }

    /// What the connection has for reading within `timeout`: `.data` (appended to `received`),
    /// `.closed` when the service closed it, `.nothing` when the time ran out. It never blocks a
    /// thread (the service under test runs on the same cooperative pool): it polls and sleeps.
    func read(timeout: Duration) async -> ReadResult {
        let deadline = ContinuousClock.now + timeout
        while true {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) > 0 {
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return .closed }
                received += buffer[..<count]
                return .data
            }
            guard ContinuousClock.now < deadline else { return .nothing }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Reads until `condition` holds for what was received or the connection closes, for at most
    /// `timeout`; whether the condition holds.
    @discardableResult
    func read(until condition: (String) -> Bool, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(text) {
            let left = deadline - ContinuousClock.now
            guard left > .zero, await read(timeout: left) == .data else { return condition(text) }
        }
        return true
    }

    /// Reads until the service closes the connection, for at most `timeout`; whether it did.
    func waitUntilClosed(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            switch await read(timeout: left) {
            case .closed: return true
            case .nothing: return false
            case .data: continue
            }
        }
    }

    var text: String { String(decoding: received, as: UTF8.self) }

    /// The status code of the first response received, if its status line has arrived.
    var status: Int? {
        guard text.hasPrefix("HTTP/1.1 "), text.count >= 12 else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
