import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import ShortcutSyncDomain
import ShortcutSyncStore

/// Sends background notifications to APNs over HTTP/2 (AsyncHTTPClient negotiates it by ALPN,
/// and keeps one connection per host for all requests), signed with the provider token.
public final class APNsClient: Sendable {
    /// The whole payload of a background wake: no alert, no sound, no badge (DESIGN §6).
    public static let payload = #"{"aps":{"content-available":1}}"#
    /// The most of an answer's body read: APNs' error bodies are a few dozen bytes.
    static let maximumAnswerBytes = 16 * 1024

    public let configuration: APNsConfiguration
    public let providerToken: ProviderToken
    private let http: HTTPClient

    /// Reads the key and the extra trust roots; throws when either is not what it should be.
    public init(configuration: APNsConfiguration) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let pem = configuration.additionalTrustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
        }
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        http.httpVersion = .automatic
        http.timeout = .init(connect: .seconds(5), read: .seconds(Int64(configuration.requestTimeout.timeInterval)))
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
        self.configuration = configuration
        do {
            providerToken = try await ProviderToken(keyPEM: configuration.keyPEM, keyID: configuration.keyID,
                                                    teamID: configuration.teamID, lifetime: configuration.tokenLifetime)
        } catch {
            try? await self.http.shutdown()
            throw error
        }
    }

    /// Sends one background wake for `wake`'s device; never throws: a failure to reach APNs is
    /// an answer to retry later.
    public func send(_ wake: DueWake, logger: Logger) async -> APNsAnswer {
        let registration = wake.registration
        // Registered before the topics were configured, or by another server's looser settings.
        guard configuration.topics.contains(registration.topic) else {
            return .badToken(reason: "TopicNotConfigured")
        }
        let url = configuration.baseURL(environment: registration.environment)
            .appendingPathComponent("3/device/\(registration.token)")
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        do {
            request.headers.add(name: "authorization", value: "bearer \(try await providerToken.token())")
        } catch {
            logger.log(level: .error, "could not sign the APNs provider token", error: error)
            return .keyRefused(reason: "the provider token could not be signed")
        }
        request.headers.add(name: "apns-push-type", value: "background")
        request.headers.add(name: "apns-priority", value: "5")
        request.headers.add(name: "apns-topic", value: registration.topic)
        // One wake per account is enough while the device sleeps: APNs keeps the latest.
        request.headers.add(name: "apns-collapse-id", value: wake.account.uuidString.lowercased())
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.payload))
        do {
            let response = try await http.execute(request, timeout: .seconds(Int64(configuration.requestTimeout.timeInterval)))
            let body = try await response.body.collect(upTo: Self.maximumAnswerBytes)
            return APNsAnswer(status: Int(response.status.code), body: Data(buffer: body))
        } catch {
            logger.log(level: .warning, "APNs could not be reached", error: error)
            return .retryLater(status: 0, reason: "APNs could not be reached")
        }
    }

    public func shutdown() async throws {
        try await http.shutdown()
    }
}
