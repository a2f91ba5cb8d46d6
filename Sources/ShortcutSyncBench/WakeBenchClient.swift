import APNsStandIn
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncStore

/// The few requests `bench wake` makes, as a device and an admin do.
struct WakeBenchClient {
    let service: URL
    let http: HTTPClient

    func post(_ path: String, token: String, body: String?) async throws -> [String: Any] {
        let (status, answer) = try await send(.POST, path, token: token, body: body)
        guard (200..<300).contains(status), let json = try? JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            throw BenchError("POST \(path) answered \(status)")
        }
        return json
    }

    func put(_ path: String, token: String, body: String) async throws {
        let (status, _) = try await send(.PUT, path, token: token, body: body)
        guard status == 204 else { throw BenchError("PUT \(path) answered \(status)") }
    }

    func pushDonation(token: String, seq: Int64) async throws {
        let response = try await http.execute(pushRequest(service: service, token: token, body: BenchEvents.pushBody(from: seq, count: 1)),
                                              timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 200 else { throw BenchError("a push answered \(response.status.code)") }
    }

    /// Any request: its status and body (`bench churn` sends its own through it too).
    func send(_ method: HTTPMethod, _ path: String, token: String, body: String?) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: service.absoluteString + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 20)))
    }
}
