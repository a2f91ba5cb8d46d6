/// The shape of W3C's `traceparent` header, version 00: `00-` 32 hex digits `-` 16 hex digits
/// `-` 2 hex digits. The service's stream messages and its notifications to the other servers
/// carry a change's trace in it; the client library and the servers pass on only text of this
/// shape, whatever else arrives.
public enum TraceParentShape {
    public static func isWellFormed(_ text: some StringProtocol) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.map(\.count) == [2, 32, 16, 2] else { return false }
        return parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
