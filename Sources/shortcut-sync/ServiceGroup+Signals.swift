import Logging
import ServiceLifecycle
import UnixSignals

extension ServiceGroup {
    /// Runs `services` until SIGTERM or SIGINT, then shuts them down in reverse order within a
    /// bound: each gets its graceful shutdown, and whatever still runs after
    /// `gracefulShutdownLimit` is cancelled, so the process ends within about 10 s whatever is open.
    static func runUntilSignalled(
        _ services: [any Service], logger: Logger, gracefulShutdownLimit: Duration = .seconds(8)
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = gracefulShutdownLimit
        configuration.maximumCancellationDuration = .seconds(1)
        try await ServiceGroup(configuration: configuration).run()
    }
}

/// Runs `body`, cancelling it at the first SIGTERM or SIGINT, and returns or throws what it does:
/// a command that is not a service (`bench`) still reaches its cleanup, such as stopping the
/// embedded PostgreSQL it started, when it is interrupted.
func cancellingOnSignal<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) { return nil }
            return nil
        }
        defer { group.cancelAll() }
        while let outcome = try await group.next() {
            if let result = outcome { return result }
            throw Interrupted()  // a signal came first
        }
        throw Interrupted()
    }
}

/// What an interrupted command says as it ends.
struct Interrupted: Error, CustomStringConvertible {
    var description: String { "interrupted by a signal" }
}
