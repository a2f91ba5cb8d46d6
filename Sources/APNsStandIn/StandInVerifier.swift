import Foundation
import JWTKit

/// Checks a provider token as APNs does: an ES256 signature by the team's key (its public half),
/// the key's id as `kid`, the team as `iss`, and an `iat` no more than an hour old.
actor StandInVerifier {
    enum Verdict {
        case valid, expired, invalid
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The header fields read before the signature is checked.
    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    private let keys: JWTKeyCollection
    private let key: StandInKey

    init(key: StandInKey) async throws {
        keys = await JWTKeyCollection().add(ecdsa: try ES256PublicKey(pem: key.publicKeyPEM), kid: JWKIdentifier(string: key.keyID))
        self.key = key
    }

    func verify(_ token: String, now: Date) async -> Verdict {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecoded(String(parts[0])),
              let header = try? JSONDecoder().decode(Header.self, from: headerData),
              header.alg == "ES256", header.kid == key.keyID else { return .invalid }
        guard let claims = try? await keys.verify(token, as: Claims.self), claims.iss.value == key.teamID else { return .invalid }
        let age = now.timeIntervalSince(claims.iat.value)
        // A token from the future by more than a little is as wrong as one too old.
        guard age < 60 * 60 else { return .expired }
        guard age > -60 else { return .invalid }
        return .valid
    }

    static func base64URLDecoded(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
