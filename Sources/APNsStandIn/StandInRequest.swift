import Foundation

/// One request the stand-in received, as it saw it, and what it answered.
public struct StandInRequest: Sendable, Hashable {
    /// The device token of the path (`/3/device/<token>`).
    public var deviceToken: String
    /// The request's headers, names in lower case (`authorization` included: the provider token).
    public var headers: [String: String]
    public var body: String
    /// Whether it came over HTTP/2, as APNs requires.
    public var overHTTP2: Bool
    public var receivedAt: Date
    /// The status answered and, unless `200`, APNs' reason.
    public var status: Int
    public var reason: String?
}
