import Foundation

/// Whose token a request carries, as `AuthenticationMiddleware` found it before reading the body.
enum Caller: Sendable, Hashable {
    case admin
    case account(UUID)
    case device(device: UUID, account: UUID)

    /// The caller of the request being handled; nil on routes that need no token.
    @TaskLocal static var current: Caller?

    /// The hash of the account token the request carried (nil for any other kind): a sign-in
    /// records a device under that token only while it is still the account's (issue 56), even
    /// if it was rotated between this server's check and the sign-in.
    @TaskLocal static var accountTokenHash: [UInt8]?

    /// The kind of token a route needs, by method and path (DESIGN §5's table); nil when it needs
    /// none. The path is read as the router reads it (`routePath`): `//v1/sync/push/` reaches the
    /// push, so it needs the push's token, checked before its body as any push's. A route that
    /// takes either an account's token or a device's (`GET /v1/devices`) needs the kind `token`
    /// has the shape of.
    static func required(method: String, path: String, token: String? = nil) -> Tokens.Kind? {
        let path = routePath(path)
        return switch (method, path) {
        case ("POST", "/v1/accounts"): .admin
        case ("POST", "/v1/devices"): .account
        case ("GET", "/v1/devices"): token.map { Tokens.hasShape($0, of: .account) } == true ? .account : .device
        case ("DELETE", _) where path.hasPrefix("/v1/devices/"): .account
        case ("POST", "/v1/sync/push"), ("GET", "/v1/sync/pull"), ("GET", "/v1/sync/stream"), ("GET", "/v1/suggestions"),
             ("GET", "/v1/suggestions/habits"): .device
        case ("PUT", "/v1/device/push-token"), ("DELETE", "/v1/device/push-token"): .device
        // Any other method or path is answered 404 or 405 by the router, with no token needed.
        default: nil
        }
    }

    /// `path` as the router matches it: its non-empty segments, each after one slash.
    ///
    /// Read as bytes: every request asks this two or three times, and Foundation's `contains`
    /// on a `String` goes through `NSString` (0.9 % of the service's CPU in a profile of 1-event
    /// pushes), `count` through grapheme breaking.
    static func routePath(_ path: String) -> String {
        let bytes = path.utf8, slash = UInt8(ascii: "/")
        let doubled = zip(bytes, bytes.dropFirst()).contains { $0 == slash && $1 == slash }
        guard doubled || (bytes.count > 1 && bytes.last == slash) || bytes.first != slash else { return path }
        return "/" + path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
    }
}
