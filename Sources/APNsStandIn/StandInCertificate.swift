import Crypto
import Foundation
import SwiftASN1
import X509

/// The stand-in's TLS identity, made at run time: a certificate authority that exists only in
/// this process, and a server certificate for 127.0.0.1 and localhost that it signed. Clients
/// trust the authority's PEM (`--apns-ca-file`), as they would trust Apple's.
public struct StandInCertificate: Sendable {
    /// The authority's certificate, PEM: what a client trusts.
    public let authorityPEM: String
    /// The server's certificate and private key, PEM.
    public let serverCertificatePEM: String
    public let serverKeyPEM: String

    public init(validFor lifetime: TimeInterval = 24 * 60 * 60) throws {
        let now = Date()
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName {
            OrganizationName("ShortcutSync")
            CommonName("ShortcutSync APNs stand-in authority")
        }
        let authority = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(authorityKey.publicKey),
            notValidBefore: now - 60, notValidAfter: now + lifetime,
            issuer: authorityName, subject: authorityName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(authorityKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 60, notValidAfter: now + lifetime,
            issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(authorityKey))
        authorityPEM = try authority.serializeAsPEM().pemString
        serverCertificatePEM = try server.serializeAsPEM().pemString
        serverKeyPEM = serverKey.pemRepresentation
    }
}
