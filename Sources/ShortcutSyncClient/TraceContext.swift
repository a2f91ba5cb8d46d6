import Foundation
import HTTPTypes
import Instrumentation
import OpenAPIRuntime
import ServiceContextModule
import Tracing

/// Sends W3C's `traceparent` (and whatever else the app's instrument writes) with every request,
/// so that the service's spans of it join the trace the app is in: the app's own, when it
/// bootstrapped a tracer (`InstrumentationSystem`); else, for a pull the stream's poke made, the
/// trace of the change that poked it (`Poke.traceparent`), so that one change is one trace from
/// the device that pushed it to the devices that pulled it. Without either, nothing is sent.
public struct TraceContext: ClientMiddleware {
    /// The instrument that writes the app's context; nil: the one the app bootstrapped, read at
    /// each request.
    let instrument: (any Instrument)?

    public init(instrument: (any Instrument)? = nil) {
        self.instrument = instrument
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let context = ServiceContext.current {
            (instrument ?? InstrumentationSystem.instrument).inject(context, into: &request.headerFields, using: HeaderInjector())
        }
        if request.headerFields[Self.traceparent] == nil, let poke = Self.poke {
            request.headerFields[Self.traceparent] = poke
        }
        return try await next(request, body, baseURL)
    }

    static let traceparent = HTTPField.Name("traceparent")!

    /// The trace of the change whose poke the current task is pulling for.
    @TaskLocal static var poke: String?

    /// Runs `pull`, made by a poke of the change `traceparent` names: as a span of that trace
    /// when the app traces, and with that trace's `traceparent` on its requests in any case.
    static func following(
        _ traceparent: String?, isolation: isolated (any Actor)? = #isolation, _ pull: () async throws -> Void
    ) async throws {
        guard let traceparent else { return try await pull() }
        var context = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(["traceparent": traceparent], into: &context, using: DictionaryExtractor())
        try await withSpan("pull after a poke", context: context, ofKind: .internal, isolation: isolation) { _ in
            try await $poke.withValue(traceparent, operation: { try await pull() }, isolation: isolation)
        }
    }
}

private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        if let name = HTTPField.Name(key) { carrier[name] = value }
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
