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
