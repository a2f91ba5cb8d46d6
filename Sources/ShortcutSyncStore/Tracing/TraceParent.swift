import Instrumentation
import ShortcutSyncDomain
import ServiceContextModule
import Tracing

/// A trace's context as W3C's `traceparent` header writes it, for the places a change's trace
/// crosses that are not HTTP requests: a poke handed to a stream, a `NOTIFY` to the other servers,
/// the stream's message that a device's next pull carries back.
///
/// It is written and read by the process's instrument (OpenTelemetry's when `serve` exports
/// traces), so without one there is none: `of` is nil, nothing is carried, nothing is spent.
public enum TraceParent {
    /// The header's name.
    public static let header = "traceparent"

    /// The `traceparent` of `context` (the task's current one by default); nil without an
    /// instrument that writes one.
    public static func of(_ context: ServiceContext? = .current) -> String? {
        guard let context else { return nil }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryInjector())
        return carrier[header]
    }

    /// The context a `traceparent` names, for a span to continue its trace; nil for nil, or when
    /// the instrument reads nothing from it.
    public static func context(_ traceparent: String?) -> ServiceContext? {
        guard let traceparent else { return nil }
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract([header: traceparent], into: &context, using: DictionaryExtractor())
        return of(context) == nil ? nil : context
    }
}

private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
