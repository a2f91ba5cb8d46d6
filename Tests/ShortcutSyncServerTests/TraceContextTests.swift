import Foundation
import HTTPTypes
import Instrumentation
import OpenAPIRuntime
import ServiceContextModule
@testable import ShortcutSyncClient
import Synchronization
import Testing

/// The client library's `traceparent` (issue 33): the app's own trace when it has one, else the
/// trace of the change whose poke made the pull, else none. With an instrument of the test's
/// own, so that no tracer is bootstrapped for the whole test process.
@Suite struct TraceContextTests {
    /// An app's trace as its instrument keeps it in the task's context.
    private enum AppTrace: ServiceContextKey {
        typealias Value = String
    }

    /// Writes the app's trace as `traceparent`, as an app's tracer would.
    private struct AppInstrument: Instrument {
        func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
            where Extract.Carrier == Carrier {}

        func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
            where Inject.Carrier == Carrier {
            if let trace = context[AppTrace.self] { injector.inject(trace, forKey: "traceparent", into: &carrier) }
        }
    }

    static let app = "00-\(String(repeating: "a", count: 32))-\(String(repeating: "1", count: 16))-01"
    static let poke = "00-\(String(repeating: "b", count: 32))-\(String(repeating: "2", count: 16))-01"

    /// The `traceparent` the middleware sends with a request.
    static func sent(_ middleware: TraceContext) async throws -> String? {
        let seen = Mutex<String?>(nil)
        _ = try await middleware.intercept(HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/v1/sync/pull"),
                                           body: nil, baseURL: URL(string: "http://example.com")!, operationID: "pull") { request, _, _ in
            seen.withLock { $0 = request.headerFields[HTTPField.Name("traceparent")!] }
            return (HTTPResponse(status: .ok), nil)
        }
        return seen.withLock { $0 }
    }

    @Test func theAppsTraceFirstThenThePokesThenNone() async throws {
        let middleware = TraceContext(instrument: AppInstrument())
        var context = ServiceContext.topLevel
        context[AppTrace.self] = Self.app
        // The app traces: its own trace, even for a pull a poke made.
        try await ServiceContext.$current.withValue(context) {
            #expect(try await Self.sent(middleware) == Self.app)
            let alsoPoked = try await TraceContext.$poke.withValue(Self.poke) { () async throws -> String? in try await Self.sent(middleware) }
            #expect(alsoPoked == Self.app)
        }
        // It does not: the poke's trace, for the pull it made.
        let poked = try await TraceContext.$poke.withValue(Self.poke) { () async throws -> String? in try await Self.sent(middleware) }
        #expect(poked == Self.poke)
        var followed: String?
        try await TraceContext.following(Self.poke) { followed = try await Self.sent(middleware) }
        #expect(followed == Self.poke, "the client's pull after a poke")
        // Neither: nothing.
        #expect(try await Self.sent(middleware) == nil)
        #expect(try await Self.sent(TraceContext()) == nil, "no tracer bootstrapped in this process")
    }

    /// A stream message's trace is taken only when it has the header's shape.
    @Test func aPokesTraceIsReadOnlyWhenWellFormed() {
        #expect(ChangedMessage.poke(in: #"{"version": 7, "traceparent": "\#(Self.poke)"}"#) == Poke(version: 7, traceparent: Self.poke))
        #expect(ChangedMessage.poke(in: #"{"version": 7, "traceparent": "00-xyz-1-01"}"#) == Poke(version: 7))
        #expect(ChangedMessage.poke(in: #"{"version": 7}"#) == Poke(version: 7))
        #expect(ChangedMessage.poke(in: "not json") == Poke(version: 0))
    }
}
