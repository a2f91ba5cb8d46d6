import Hummingbird
import ShortcutSyncAPI

/// Serves the contract: `GET /openapi.yaml` answers the document the API is generated from, so
/// that a client or a tester (schemathesis in CI) reads the spec of the build it talks to.
///
/// The document is read once, here: a build that lost its resources fails at start, not later.
public func addOpenAPIDocumentRoute<Context: RequestContext>(to router: Router<Context>) throws {
    let document = ByteBuffer(string: try OpenAPIDocument.yaml())
    router.get("openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: document))
    }
}
