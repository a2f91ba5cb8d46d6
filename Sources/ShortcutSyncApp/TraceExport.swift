import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Where a process sends its traces: OpenTelemetry's OTLP over HTTP (protobuf), to a collector
/// (`deploy/otel-collector.yaml`) or any backend that takes it. Given by `--otel-endpoint` or by
/// OpenTelemetry's own environment (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); with neither, the process makes no spans worth the
/// name: the tracer stays the no-op one and `ServerConfiguration.traced` is off.
///
/// Only traces are exported this way: the metrics stay on `/metrics` for Prometheus, the logs
/// on standard error.
public struct TraceExport: Sendable, Equatable {
    /// The URL spans are posted to; nil: the one OpenTelemetry's environment names.
    public var tracesURL: String?

    /// The export `endpoint` asks for (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to
    /// its `/v1/traces`), or the environment's; nil when neither asks for one.
    public init?(endpoint: String?, environment: [String: String]) throws(TraceExportError) {
        if let endpoint {
            guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  let host = url.host, !host.isEmpty, url.query == nil else {
                throw TraceExportError(detail: "--otel-endpoint must be an http or https URL without a query, such as http://127.0.0.1:4318, not \(endpoint)")
            }
            var base = endpoint
            while base.hasSuffix("/") { base.removeLast() }
            tracesURL = base + "/v1/traces"
        } else if Self.environmentKeys.contains(where: { environment[$0].map { !$0.isEmpty } ?? false }) {
            tracesURL = nil
        } else {
            return nil
        }
    }

    /// OpenTelemetry's variables that turn the export on.
    static let environmentKeys = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]

    /// Makes OpenTelemetry's tracer the process's (once per process: a second call traps) and
    /// returns the service that batches and sends the spans. Run it in the process's service
    /// group before the others, so that it stops last and sends what they ended with.
    /// OpenTelemetry's other `OTEL_*` variables (`OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`,
    /// `OTEL_TRACES_SAMPLER`…) apply, and win over what is set here.
    public func bootstrap(serviceName: String) throws -> any Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        if let tracesURL { configuration.traces.otlpExporter.endpoint = tracesURL }
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        return backend.service
    }
}

/// `--otel-endpoint` was not a URL spans can be sent to.
public struct TraceExportError: Error, CustomStringConvertible {
    public var detail: String
    public var description: String { detail }
}
