import Foundation

/// The OpenAPI document this module is generated from, shipped as its resource so that the
/// service can serve the contract it implements (`GET /openapi.yaml`).
public enum OpenAPIDocument {
    /// The text of `openapi.yaml`.
    public static func yaml() throws -> String {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "openapi.yaml is missing from the ShortcutSyncAPI resources"])
        }
        return try String(contentsOf: url, encoding: .utf8)
    }
}
