import Foundation

/// A device's push token as `PUT /v1/device/push-token` registers it (DESIGN §5, §6): what APNs
/// needs to wake the device in the background.
///
/// The token is kept in lower-case hex, the form APNs takes in its request path.
public struct PushTokenRegistration: Sendable, Hashable {
    /// The only push service there is (APNs); the field exists so that another can be added.
    public static let services: Set<String> = ["apns"]
    public static let environments: Set<String> = ["production", "development"]
    /// APNs issues 32-byte tokens (64 hex digits); longer ones are allowed for the day it
    /// issues them, up to 100 bytes.
    public static let tokenHexDigits = 64...200

    public var token: String
    public var topic: String
    public var environment: String

    public init(token: String, topic: String, environment: String) {
        self.token = token
        self.topic = topic
        self.environment = environment
    }

    /// Whether `value` can be an APNs topic: an app's bundle id, a reverse-DNS name.
    public static func isTopic(_ value: String) -> Bool {
        Limits.bundleIdLength.contains(value.unicodeScalars.count) && EventValidator.isReverseDNS(value)
    }

    /// The registration a request asks for, or every field at fault (pointers into its body).
    /// The token is taken in either case of hex and stored in lower case.
    public static func validated(
        service: String, token: String, topic: String, environment: String
    ) -> Result<PushTokenRegistration, ValidationError> {
        var errors: [FieldError] = []
        if !services.contains(service) {
            errors.append(FieldError(pointer: "/service", detail: "must be \"apns\""))
        }
        let scalars = token.unicodeScalars
        if !tokenHexDigits.contains(scalars.count) || scalars.count % 2 != 0
            || !scalars.allSatisfy({ $0.isASCII && $0.properties.isASCIIHexDigit }) {
            errors.append(FieldError(pointer: "/token",
                                     detail: "must be the device token in hex: an even number of 64 to 200 hex digits"))
        }
        if !isTopic(topic) {
            errors.append(FieldError(pointer: "/topic", detail: "must be the app's bundle id, a reverse-DNS name such as com.example.app"))
        }
        if !environments.contains(environment) {
            errors.append(FieldError(pointer: "/environment", detail: "must be \"production\" or \"development\""))
        }
        guard errors.isEmpty else { return .failure(ValidationError(errors)) }
        return .success(PushTokenRegistration(token: token.lowercased(), topic: topic, environment: environment))
    }

    /// The token as operators may see it: its first 8 hex digits, enough to tell two apart.
    public var abbreviatedToken: String { String(token.prefix(8)) + "…" }
}
