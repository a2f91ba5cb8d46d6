import ArgumentParser
import Foundation
import ServiceLifecycle
import ShortcutSyncApp

/// `--otel-endpoint`: where the process sends its traces (`TraceExport`), for `serve` and `worker`.
struct TracingOptions: ParsableArguments {
    @Option(name: .customLong("otel-endpoint"),
            help: "Send traces over OTLP/HTTP to this collector (a base URL such as http://127.0.0.1:4318; spans go to its /v1/traces). OTEL_EXPORTER_OTLP_ENDPOINT does the same; with neither, nothing is traced.")
    var otelEndpoint: String?

    func validate() throws {
        do {
            _ = try TraceExport(endpoint: otelEndpoint, environment: [:])
        } catch {
            throw ValidationError(error.detail)
        }
    }

    /// The export asked for, made the process's tracer; its service (run first, stopped last), or
    /// nil when nothing is traced.
    func bootstrap(serviceName: String) throws -> (any Service)? {
        guard let export = try TraceExport(endpoint: otelEndpoint, environment: ProcessInfo.processInfo.environment) else { return nil }
        return try export.bootstrap(serviceName: serviceName)
    }
}
