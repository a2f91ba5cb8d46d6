import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

// The requests every push benchmark sends as a device does.

/// A device's push of `body` (JSON text).
func pushRequest(service: URL, token: String, body: String) -> HTTPClientRequest {
    var request = HTTPClientRequest(url: service.absoluteString + "/v1/sync/push")
    request.method = .POST
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: body))
    return request
}

/// Pulls from `cursor` (nil: the whole view), page after page while the answer says `more`,
/// as a device does; returns each upserted shortcut's `donationCount` by identifier (later
/// pages win) and the last page's cursor.
func pullPages(service: URL, token: String, cursor: String?, http: HTTPClient) async throws -> (donations: [String: Int], cursor: String?) {
    var cursor = cursor
    var donations: [String: Int] = [:]
    while true {
        var url = service.absoluteString + "/v1/sync/pull"
        if let cursor { url += "?cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor) }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status.code == 200,
              let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] else {
            throw BenchError("a pull answered \(response.status.code): \(String(buffer: body).prefix(300))")
        }
        let upserted = (json["shortcuts"] as? [String: Any])?["upserted"] as? [[String: Any]] ?? []
        for shortcut in upserted {
            guard let identifier = shortcut["identifier"] as? String else { continue }
            donations[identifier] = shortcut["donationCount"] as? Int ?? 0
        }
        cursor = json["cursor"] as? String
        guard json["more"] as? Bool == true else { return (donations, cursor) }
    }
}

/// Runs `body` with an HTTP client to the service that may hold `connections` connections at
/// once (streams each hold one), shut down afterwards whatever `body` did. Connections wait up
/// to 120 s for their turn: ten thousand streams opening at once take longer than the default 10 s.
func withBenchHTTPClient<Result: Sendable>(
    connections: Int, _ body: (HTTPClient) async throws -> Result
) async throws -> Result {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
    configuration.timeout.connect = .seconds(120)
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let outcome: Swift.Result<Result, any Error>
    do {
        outcome = .success(try await body(http))
    } catch {
        outcome = .failure(error)
    }
    try await http.shutdown()
    return try outcome.get()
}

/// Waits up to 60 s until `url` answers 200; `ended` tells, while it waits, how the server's
/// process ended if it did (nil while it runs), and `what` names the server in the errors.
func waitUntilAnswering(_ url: String, what: String, ended: () -> String?) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
        if let ended = ended() { throw BenchError("\(what) ended at start (\(ended))") }
        if let answer = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(2)), answer.status.code == 200 {
            return
        }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw BenchError("\(what) did not become ready within 60 s")
}
