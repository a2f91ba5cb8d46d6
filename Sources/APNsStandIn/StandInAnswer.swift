import Foundation

/// What the stand-in can be told to answer instead of `200`, with the body APNs sends for it.
public enum StandInAnswer: Sendable, Hashable {
    /// 410 `Unregistered`, with the time APNs last knew the token valid.
    case unregistered(since: Date)
    /// 400 `BadDeviceToken`.
    case badDeviceToken
    /// 400 `DeviceTokenNotForTopic`.
    case deviceTokenNotForTopic
    /// 429 `TooManyRequests`.
    case tooManyRequests
    /// 500 `InternalServerError`.
    case internalServerError
    /// 403 `InvalidProviderToken`, whatever the token.
    case invalidProviderToken

    var status: Int {
        switch self {
        case .unregistered: 410
        case .badDeviceToken, .deviceTokenNotForTopic: 400
        case .tooManyRequests: 429
        case .internalServerError: 500
        case .invalidProviderToken: 403
        }
    }

    var reason: String {
        switch self {
        case .unregistered: "Unregistered"
        case .badDeviceToken: "BadDeviceToken"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .invalidProviderToken: "InvalidProviderToken"
        }
    }

    var body: String {
        if case .unregistered(let since) = self {
            return #"{"reason":"Unregistered","timestamp":\#(Int64(since.timeIntervalSince1970 * 1000))}"#
        }
        return #"{"reason":"\#(reason)"}"#
    }
}
