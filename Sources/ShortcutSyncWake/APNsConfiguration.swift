import Foundation
import NIOSSL

/// How to reach APNs and sign for it (DESIGN §7): the team's `.p8` key with its id, and, for a
/// stand-in (tests, staging), another address and a certificate to trust besides the system's.
public struct APNsConfiguration: Sendable {
    /// Apple's addresses for each environment a device token belongs to.
    public static let production = URL(string: "https://api.push.apple.com")!
    public static let development = URL(string: "https://api.sandbox.push.apple.com")!

    /// The `.p8` key's PEM text (PKCS #8, P-256). A secret: never logged.
    public var keyPEM: String
    /// The key's 10-character id (the provider token's `kid`).
    public var keyID: String
    /// The team's 10-character id (the provider token's `iss`).
    public var teamID: String
    /// The apps whose devices are woken (`--apns-topic`): their bundle ids, each an `apns-topic`
    /// the key may send to. A token registered for any other topic is never sent to: the waker
    /// drops it, so that the service's key cannot be made to wake another app.
    public var topics: Set<String>
    /// One address for every environment instead of Apple's (`--apns-url`): a stand-in.
    public var url: URL?
    /// PEM certificates to trust besides the system's roots (`--apns-ca-file`).
    public var additionalTrustRootsPEM: String?
    /// How long a provider token is used before a new one is signed. Apple refuses tokens older
    /// than an hour and more than one new token per 20 minutes: anything in between.
    public var tokenLifetime: Duration = .seconds(50 * 60)
    /// How long one request to APNs may take.
    public var requestTimeout: Duration = .seconds(10)

    public init(keyPEM: String, keyID: String, teamID: String, topics: Set<String>, url: URL? = nil, additionalTrustRootsPEM: String? = nil) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topics = topics
        self.url = url
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
    }

    /// Throws when the key is not a P-256 PEM key or the extra trust roots are not PEM
    /// certificates: what `serve` checks before it starts.
    public func validate() async throws {
        do {
            _ = try await ProviderToken(keyPEM: keyPEM, keyID: keyID, teamID: teamID)
        } catch {
            throw APNsConfigurationError(description: "the APNs key is not a P-256 private key in PEM, as Apple's .p8 files are: check --apns-key-file")
        }
        if let additionalTrustRootsPEM {
            guard let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(additionalTrustRootsPEM.utf8)), !certificates.isEmpty else {
                throw APNsConfigurationError(description: "--apns-ca-file holds no PEM certificate")
            }
        }
    }

    /// Where a token of `environment` is sent.
    public func baseURL(environment: String) -> URL {
        url ?? (environment == "development" ? Self.development : Self.production)
    }
}
