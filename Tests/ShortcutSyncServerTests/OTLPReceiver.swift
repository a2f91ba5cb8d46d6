import APNsStandIn
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle
import SwiftProtobuf
import Synchronization

/// A span as an OTLP receiver gets it: the fields `TracingTests` reads.
struct ReceivedSpan: Sendable, Hashable, CustomStringConvertible {
    var traceID: String
    var spanID: String
    /// Empty for a trace's root.
    var parentSpanID: String
    var name: String
    /// OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    var kind: Int32
    var attributes: [String: String]
    /// The (trace, span) ids of the spans it links to.
    var links: [String]
    /// The `service.name` of the process that sent it.
    var service: String

    var description: String { "\(name) [\(spanID) ← \(parentSpanID.isEmpty ? "root" : parentSpanID)] of \(service)" }
}

/// An OpenTelemetry collector's OTLP/HTTP trace endpoint, as small as a test needs: on a free
/// loopback port, `POST /v1/traces` takes `application/x-protobuf`, decodes it with
/// swift-protobuf (the messages below are the part of OTLP's `trace.proto` it reads) and keeps
/// the spans. Stopped when `body` ends, also when it throws.
final class OTLPReceiver: Sendable {
    let baseURL: String
    private let received = Mutex<[ReceivedSpan]>([])
    /// Bodies that were not OTLP: none is expected.
    private let refused = Mutex<[String]>([])

    private init(baseURL: String) {
        self.baseURL = baseURL
    }

    var spans: [ReceivedSpan] { received.withLock { $0 } }
    var refusals: [String] { refused.withLock { $0 } }

    static func with<Result>(isolation: isolated (any Actor)? = #isolation, _ body: (OTLPReceiver) async throws -> Result) async throws -> Result {
        let holder = Mutex<OTLPReceiver?>(nil)
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            guard let receiver = holder.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let bytes = try await request.body.collect(upTo: 16 << 20)
            return receiver.take(Data(buffer: bytes), contentType: request.headers[.contentType] ?? "")
        }
        var logger = Logger(label: "otlp-receiver")
        logger.logLevel = .error
        return try await withLoopbackApplication(logger: logger) { onServerRunning in
            Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "otlp-receiver"),
                        onServerRunning: onServerRunning, logger: logger)
        } _: { port in
            let receiver = OTLPReceiver(baseURL: "http://127.0.0.1:\(port)")
            holder.withLock { $0 = receiver }
            return try await body(receiver)
        }
    }

    private func take(_ body: Data, contentType: String) -> Response {
        guard contentType.hasPrefix("application/x-protobuf") else {
            refused.withLock { $0.append("content type \(contentType)") }
            return Response(status: .unsupportedMediaType)
        }
        do {
            let request = try ExportTraceServiceRequest(serializedBytes: body)
            var spans: [ReceivedSpan] = []
            for resourceSpans in request.resourceSpans {
                let service = resourceSpans.resource?.attributes.first { $0.key == "service.name" }?.value?.text ?? ""
                for scope in resourceSpans.scopeSpans {
                    for span in scope.spans {
                        spans.append(ReceivedSpan(
                            traceID: span.traceID.hex, spanID: span.spanID.hex, parentSpanID: span.parentSpanID.hex, name: span.name,
                            kind: span.kind, attributes: Dictionary(span.attributes.map { ($0.key, $0.value?.text ?? "") }) { first, _ in first },
                            links: span.links.map { "\($0.traceID.hex)/\($0.spanID.hex)" }, service: service))
                    }
                }
            }
            received.withLock { $0.append(contentsOf: spans) }
            // An empty ExportTraceServiceResponse: everything was taken.
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"], body: .init(byteBuffer: ByteBuffer()))
        } catch {
            refused.withLock { $0.append("\(error)") }
            return Response(status: .badRequest)
        }
    }
}

extension Data {
    fileprivate var hex: String { map { String(format: "%02x", $0) }.joined() }
}

// The messages of OTLP's `opentelemetry/proto/collector/trace/v1/trace_service.proto` and
// `trace/v1/trace.proto` that the receiver reads, decoded by swift-protobuf's binary decoder:
// fields not read here are skipped as unknown. Written by hand (no protoc here); field numbers
// are OTLP's.

/// Decoding only: a receiver never writes one.
private protocol ReadOnlyMessage: SwiftProtobuf.Message {}

extension ReadOnlyMessage {
    func traverse<V: Visitor>(visitor: inout V) throws {}
    func isEqualTo(message: any SwiftProtobuf.Message) -> Bool { false }
}

private struct ExportTraceServiceRequest: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"
    var unknownFields = UnknownStorage()
    var resourceSpans: [ResourceSpans] = []

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            if field == 1 { try decoder.decodeRepeatedMessageField(value: &resourceSpans) }
        }
    }
}

private struct ResourceSpans: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.trace.v1.ResourceSpans"
    var unknownFields = UnknownStorage()
    var resource: Resource?
    var scopeSpans: [ScopeSpans] = []

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            switch field {
            case 1: try decoder.decodeSingularMessageField(value: &resource)
            case 2: try decoder.decodeRepeatedMessageField(value: &scopeSpans)
            default: break
            }
        }
    }
}

private struct Resource: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.resource.v1.Resource"
    var unknownFields = UnknownStorage()
    var attributes: [KeyValue] = []

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            if field == 1 { try decoder.decodeRepeatedMessageField(value: &attributes) }
        }
    }
}

private struct ScopeSpans: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.trace.v1.ScopeSpans"
    var unknownFields = UnknownStorage()
    var spans: [Span] = []

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            if field == 2 { try decoder.decodeRepeatedMessageField(value: &spans) }
        }
    }
}

private struct Span: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.trace.v1.Span"
    var unknownFields = UnknownStorage()
    var traceID = Data()
    var spanID = Data()
    var parentSpanID = Data()
    var name = ""
    var kind: Int32 = 0
    var attributes: [KeyValue] = []
    var links: [Link] = []

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            switch field {
            case 1: try decoder.decodeSingularBytesField(value: &traceID)
            case 2: try decoder.decodeSingularBytesField(value: &spanID)
            case 4: try decoder.decodeSingularBytesField(value: &parentSpanID)
            case 5: try decoder.decodeSingularStringField(value: &name)
            // An enum on the wire is a varint.
            case 6: try decoder.decodeSingularInt32Field(value: &kind)
            case 9: try decoder.decodeRepeatedMessageField(value: &attributes)
            case 13: try decoder.decodeRepeatedMessageField(value: &links)
            default: break
            }
        }
    }
}

private struct Link: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.trace.v1.Span.Link"
    var unknownFields = UnknownStorage()
    var traceID = Data()
    var spanID = Data()

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            switch field {
            case 1: try decoder.decodeSingularBytesField(value: &traceID)
            case 2: try decoder.decodeSingularBytesField(value: &spanID)
            default: break
            }
        }
    }
}

private struct KeyValue: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.common.v1.KeyValue"
    var unknownFields = UnknownStorage()
    var key = ""
    var value: AnyValue?

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            switch field {
            case 1: try decoder.decodeSingularStringField(value: &key)
            case 2: try decoder.decodeSingularMessageField(value: &value)
            default: break
            }
        }
    }
}

/// OTLP's `AnyValue`, its scalar cases read as text.
private struct AnyValue: ReadOnlyMessage {
    static let protoMessageName = "opentelemetry.proto.common.v1.AnyValue"
    var unknownFields = UnknownStorage()
    var text = ""

    mutating func decodeMessage<D: SwiftProtobuf.Decoder>(decoder: inout D) throws {
        while let field = try decoder.nextFieldNumber() {
            switch field {
            case 1:
                try decoder.decodeSingularStringField(value: &text)
            case 2:
                var value = false
                try decoder.decodeSingularBoolField(value: &value)
                text = "\(value)"
            case 3:
                var value: Int64 = 0
                try decoder.decodeSingularInt64Field(value: &value)
                text = "\(value)"
            case 4:
                var value = 0.0
                try decoder.decodeSingularDoubleField(value: &value)
                text = "\(value)"
            default: break
            }
        }
    }
}
