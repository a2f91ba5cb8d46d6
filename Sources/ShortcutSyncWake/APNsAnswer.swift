import Foundation

/// What APNs answered to one notification, as the waker acts on it (Apple's "Handling
/// notification responses from APNs").
public enum APNsAnswer: Sendable, Hashable {
    /// 200: APNs took it.
    case delivered
    /// 410 `Unregistered` (or `ExpiredToken`): the token is no longer valid since `timestamp`
    /// (APNs' milliseconds); dropped unless the device registered it again after that.
    case unregistered(since: Date?)
    /// 400 `BadDeviceToken` or `DeviceTokenNotForTopic`: this token will never work for this topic.
    /// Also, never sent, a token whose topic is not among the configured ones (`TopicNotConfigured`).
    case badToken(reason: String)
    /// 403: the provider token was refused (wrong key, key id or team id, or expired).
    case keyRefused(reason: String)
    /// 429 or 5xx (or no answer at all): try again later, after a pause.
    case retryLater(status: Int, reason: String)
    /// Anything else (a 400 for a reason that is this server's fault, 413…): logged, not retried.
    case refused(status: Int, reason: String)

    /// The answer of a status and the `reason` and `timestamp` of APNs' JSON body.
    public init(status: Int, body: Data) {
        struct Body: Decodable {
            var reason: String?
            var timestamp: Int64?
        }
        let decoded = try? JSONDecoder().decode(Body.self, from: body)
        let reason = decoded?.reason ?? ""
        switch status {
        case 200:
            self = .delivered
        case 410:
            self = .unregistered(since: decoded?.timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
            self = .badToken(reason: reason)
        case 403:
            self = .keyRefused(reason: reason)
        case 429, 500...599:
            self = .retryLater(status: status, reason: reason)
        default:
            self = .refused(status: status, reason: reason)
        }
    }

    /// A short label for metrics and logs.
    public var label: String {
        switch self {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        case .badToken(let reason): reason
        case .keyRefused(let reason): "key refused (\(reason))"
        case .retryLater(let status, let reason): "\(status) \(reason)"
        case .refused(let status, let reason): "\(status) \(reason)"
        }
    }
}
