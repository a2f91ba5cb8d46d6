import Crypto
import Logging

/// An APNs signing key like the one Apple gives a team (a P-256 key in a `.p8` file, PKCS #8
/// PEM), made at run time: the service signs with the private half, the stand-in checks with the
/// public half, as Apple does with the key it keeps.
public struct StandInKey: Sendable {
    public let keyID: String
    public let teamID: String
    /// What goes in the `.p8` file.
    public let privateKeyPEM: String
    public let publicKeyPEM: String

    public init(keyID: String = "STANDIN001", teamID: String = "TEAMSTAND1") {
        let key = P256.Signing.PrivateKey()
        self.keyID = keyID
        self.teamID = teamID
        privateKeyPEM = key.pemRepresentation
        publicKeyPEM = key.publicKey.pemRepresentation
    }

    /// The stand-in's own logger unless given one: warnings and worse only (it is a test fixture).
    public static var quietLogger: Logger {
        var logger = Logger(label: "apns-stand-in")
        logger.logLevel = .warning
        return logger
    }
}
