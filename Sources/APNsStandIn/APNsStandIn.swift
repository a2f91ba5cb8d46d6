import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A local stand-in for APNs (Apple cannot be reached from here), for the tests, the demo and
/// the bench: HTTP/2 over TLS on loopback, with a certificate made at run time.
///
/// It checks each request as Apple does — HTTP/2, the path's device token, an ES256 provider
/// token signed by the team's key (verified with the key's public half), with the right `kid`,
/// `iss` and an `iat` less than an hour old, not changed on a connection more often than every 20 minutes — and,
/// for the background wakes this project sends, the headers and the payload; it records what it
/// got, and answers `200` or what it was told to answer next.
public final class APNsStandIn: Sendable {
    /// Where the service sends (`--apns-url`).
    public let url: URL
    /// The authority a client trusts (`--apns-ca-file`'s content).
    public let authorityPEM: String
    public let key: StandInKey
    private let state: Mutex<State>

    struct State {
        var received: [StandInRequest] = []
        /// Answers to give instead of `200`, first told first answered.
        var planned: [StandInAnswer] = []
        /// Every provider token seen, with when it was first seen.
        var providerTokens: [String: Date] = [:]
        /// Per connection, its provider token and when it last changed.
        var connectionTokens: [String: (token: String, since: Date)] = [:]
    }

    init(url: URL, authorityPEM: String, key: StandInKey) {
        self.url = url
        self.authorityPEM = authorityPEM
        self.key = key
        state = Mutex(State())
    }

    /// Every request received so far, oldest first.
    public var received: [StandInRequest] { state.withLock { $0.received } }

    /// The distinct provider tokens seen so far.
    public var providerTokenCount: Int { state.withLock { $0.providerTokens.count } }

    /// Waits until at least `count` requests were received (looking every 10 ms) and returns
    /// them all; throws, saying how many came, when `limit` passes first: a bounded wait.
    public func waitForRequests(_ count: Int, within limit: Duration) async throws -> [StandInRequest] {
        let deadline = ContinuousClock.now + limit
        while true {
            let received = self.received
            if received.count >= count { return received }
            guard ContinuousClock.now < deadline else { throw StandInError.tooFewRequests(expected: count, received: received.count, within: limit) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The next requests are answered with `answers`, in order, then `200` again.
    public func answerNext(_ answers: StandInAnswer...) {
        state.withLock { $0.planned.append(contentsOf: answers) }
    }

    /// Runs a stand-in on a free loopback port for as long as `body` runs, and stops it after,
    /// also when `body` throws.
    public static func withStandIn<Result>(
        key: StandInKey = StandInKey(), logger: Logger = StandInKey.quietLogger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (APNsStandIn) async throws -> Result
    ) async throws -> Result {
        let certificate = try StandInCertificate()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificate.serverCertificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificate.serverKeyPEM.utf8), format: .pem)))
        tls.minimumTLSVersion = .tlsv12
        let verifier = try await StandInVerifier(key: key)
        // The routes are made before the port is known; the stand-in they answer for, after.
        let holder = Mutex<APNsStandIn?>(nil)
        let router = Router(context: StandInContext.self)
        router.post("/3/device/:token") { request, context -> Response in
            guard let standIn = holder.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await standIn.handle(request, context: context, verifier: verifier)
        }
        let tlsServer: HTTPServerBuilder = try .http2Upgrade(tlsConfiguration: tls)
        return try await withLoopbackApplication(logger: logger) { onServerRunning in
            Application(router: router, server: tlsServer,
                        configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "apns-stand-in"),
                        onServerRunning: onServerRunning, logger: logger)
        } _: { port in
            let standIn = APNsStandIn(url: URL(string: "https://127.0.0.1:\(port)")!, authorityPEM: certificate.authorityPEM, key: key)
            holder.withLock { $0 = standIn }
            return try await body(standIn)
        }
    }

    /// Checks one request as APNs would and answers it.
    private func handle(_ request: Request, context: StandInContext, verifier: StandInVerifier) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let overHTTP2 = request.head.scheme != nil
        let body = try await request.body.collect(upTo: 64 * 1024)
        let text = String(buffer: body)
        let now = Date()
        let verdict: (status: Int, reason: String?, body: String?)
        if let refusal = await check(token: token, headers: headers, body: text, overHTTP2: overHTTP2, connection: context.connection,
                                     verifier: verifier, now: now) {
            verdict = (refusal.status, refusal.reason, #"{"reason":"\#(refusal.reason)"}"#)
        } else if let planned = state.withLock({ $0.planned.isEmpty ? nil : $0.planned.removeFirst() }) {
            verdict = (planned.status, planned.reason, planned.body)
        } else {
            verdict = (200, nil, nil)
        }
        state.withLock {
            $0.received.append(StandInRequest(deviceToken: token, headers: headers, body: text, overHTTP2: overHTTP2,
                                              receivedAt: now, status: verdict.status, reason: verdict.reason))
        }
        var responseHeaders = HTTPFields()
        responseHeaders[HTTPField.Name("apns-id")!] = UUID().uuidString
        guard let answer = verdict.body else { return Response(status: .ok, headers: responseHeaders) }
        responseHeaders[.contentType] = "application/json"
        return Response(status: .init(code: verdict.status), headers: responseHeaders,
                        body: .init(byteBuffer: ByteBuffer(string: answer)))
    }

    /// What Apple would refuse in this request, as its status and reason; nil when it is good.
    private func check(token: String, headers: [String: String], body: String, overHTTP2: Bool, connection: String,
                       verifier: StandInVerifier, now: Date) async -> (status: Int, reason: String)? {
        guard overHTTP2 else { return (405, "MethodNotAllowed") }
        guard (64...200).contains(token.count), token.allSatisfy(\.isHexDigit) else { return (400, "BadDeviceToken") }
        guard let authorization = headers["authorization"], authorization.lowercased().hasPrefix("bearer ") else {
            return (403, "MissingProviderToken")
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        switch await verifier.verify(jwt, now: now) {
        case .valid: break
        case .expired: return (403, "ExpiredProviderToken")
        case .invalid: return (403, "InvalidProviderToken")
        }
        // A connection may change its token once per 20 minutes, not more often.
        let tooSoon = state.withLock { state -> Bool in
            if state.providerTokens[jwt] == nil { state.providerTokens[jwt] = now }
            guard let current = state.connectionTokens[connection] else {
                state.connectionTokens[connection] = (jwt, now)
                return false
            }
            guard current.token != jwt else { return false }
            guard now.timeIntervalSince(current.since) >= 20 * 60 else { return true }
            state.connectionTokens[connection] = (jwt, now)
            return false
        }
        if tooSoon { return (429, "TooManyProviderTokenUpdates") }
        guard let topic = headers["apns-topic"], !topic.isEmpty else { return (400, "MissingTopic") }
        _ = topic
        guard headers["apns-push-type"] == "background" else { return (400, "InvalidPushType") }
        // A background notification must have priority 5: Apple refuses 10 for it.
        guard headers["apns-priority"] == "5" else { return (400, "BadPriority") }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > 64 { return (400, "BadCollapseId") }
        guard body.utf8.count <= 4096 else { return (413, "PayloadTooLarge") }
        guard Self.isBackgroundPayload(body) else { return (400, "BadPayload") }
        return nil
    }

    /// `{"aps":{"content-available":1}}` and nothing else (no alert, sound or badge: a silent wake).
    static func isBackgroundPayload(_ body: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              object.count == 1, let aps = object["aps"] as? [String: Any], aps.count == 1,
              let available = aps["content-available"] as? Int, available == 1 else { return false }
        return true
    }
}
