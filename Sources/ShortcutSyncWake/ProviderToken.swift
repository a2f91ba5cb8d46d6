import Foundation
import JWTKit

/// The provider token APNs wants in every request: an ES256 JWT of the team's key, with `kid`
/// (the key id), `iss` (the team id) and `iat`.
///
/// Apple refuses a token older than an hour (`ExpiredProviderToken`) and more than one new token
/// per 20 minutes (`TooManyProviderTokenUpdates`): one token is signed and reused by every request
/// until `lifetime` has passed, then the next one.
public actor ProviderToken {
    /// The claims APNs reads.
    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Apple's floor between two new tokens.
    public static let minimumRenewal: Duration = .seconds(20 * 60)

    private let keys: JWTKeyCollection
    private let keyID: String
    private let teamID: String
    private let lifetime: Duration
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?
    /// The token being signed, if one is.
    private var signing: Task<String, any Error>?

    /// Reads the key: a PEM P-256 private key (Apple's `.p8` is PKCS #8). Throws when it is not one.
    public init(keyPEM: String, keyID: String, teamID: String, lifetime: Duration = .seconds(50 * 60),
                now: @escaping @Sendable () -> Date = { Date() }) async throws {
        let key = try ES256PrivateKey(pem: keyPEM)
        keys = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        self.keyID = keyID
        self.teamID = teamID
        // Never more often than Apple allows, never past its hour.
        self.lifetime = min(max(lifetime, Self.minimumRenewal), .seconds(55 * 60))
        self.now = now
    }

    /// The token to send now: the current one while it is young enough, else a new one.
    ///
    /// Signing suspends (the key collection is an actor), and the wakes of one batch ask at once:
    /// while one signs, the others wait for that same token rather than sign their own, which
    /// would change the connection's token several times in a moment (Apple answers
    /// `TooManyProviderTokenUpdates`).
    public func token() async throws -> String {
        let now = now()
        if let current, now.timeIntervalSince(current.issuedAt) < lifetime.timeInterval {
            return current.token
        }
        if let signing { return try await signing.value }
        // `iat` in whole seconds, as Apple's examples have it.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = Claims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: issuedAt))
        let (keys, keyID) = (self.keys, self.keyID)
        // A task of its own only so that the callers meanwhile can await its result; awaited here.
        let task = Task { try await keys.sign(claims, kid: JWKIdentifier(string: keyID)) }
        signing = task
        defer { signing = nil }
        let token = try await task.value
        current = (token, now)
        return token
    }

    /// APNs said the token expired: the next request signs a new one, if Apple allows one yet.
    /// False when the current token is younger than Apple's 20 minutes (then the key or the
    /// clock is wrong, and a new token would not help).
    public func expire() -> Bool {
        guard let current else { return true }
        guard now().timeIntervalSince(current.issuedAt) >= Self.minimumRenewal.timeInterval else { return false }
        self.current = nil
        return true
    }
}

extension Duration {
    /// The duration in seconds, for `Date` arithmetic.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
