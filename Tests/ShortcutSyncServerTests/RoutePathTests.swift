import Testing
@testable import ShortcutSyncServer

/// A path is read as the router matches it before any token or body is looked at
/// (`Caller.routePath`): the push's checks must find the push however its path is written.
@Suite struct RoutePathTests {
    @Test(arguments: [
        ("/v1/sync/push", "/v1/sync/push"),
        ("/v1/sync/push/", "/v1/sync/push"),
        ("//v1/sync/push", "/v1/sync/push"),
        ("/v1//sync///push//", "/v1/sync/push"),
        ("v1/sync/push", "/v1/sync/push"),
        ("/", "/"),
        ("", "/"),
        ("//", "/"),
        ("/v1/devices/3F2504E0-4F89-11D3-9A0C-0305E82C3301", "/v1/devices/3F2504E0-4F89-11D3-9A0C-0305E82C3301"),
        ("/v1/suggestions/habits?x=1//", "/v1/suggestions/habits?x=1"),
        ("/é//ü/", "/é/ü"),
    ])
    func aPathIsItsNonEmptySegmentsEachAfterOneSlash(path: String, routed: String) {
        #expect(Caller.routePath(path) == routed)
    }

    @Test func everyWayOfWritingThePushsPathNeedsADevicesToken() {
        for path in ["/v1/sync/push", "//v1/sync/push/", "/v1//sync/push", "v1/sync/push"] {
            #expect(Caller.required(method: "POST", path: path) == .device, "\(path)")
        }
        #expect(Caller.required(method: "POST", path: "/v1/sync/pushes") == nil)
    }
}
