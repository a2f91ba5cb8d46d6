import Logging
import NIOCore
import ServiceLifecycle

/// Runs an HTTP application made by `make` (which hands it the `onServerRunning` it is given) on
/// a free loopback port for as long as `body` runs with that port, and shuts it down gracefully
/// afterwards (open connections closed cleanly), also when `body` throws: for the stand-ins of
/// the services the tests and benchmarks talk to (APNs, an OpenTelemetry collector).
public func withLoopbackApplication<Result>(
    logger: Logger,
    isolation: isolated (any Actor)? = #isolation,
    make: (_ onServerRunning: @escaping @Sendable (any Channel) async -> Void) throws -> any Service,
    _ body: (_ port: Int) async throws -> Result
) async throws -> Result {
    let (running, runningContinuation) = AsyncStream<Int>.makeStream()
    let app = try make { channel in
        runningContinuation.yield(channel.localAddress?.port ?? 0)
        runningContinuation.finish()
    }
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask {
            try await services.run()
            runningContinuation.finish()  // ended before it listened: no port comes
        }
        let outcome: Swift.Result<Result, any Error>
        var ports = running.makeAsyncIterator()
        if let port = await ports.next(), port > 0 {
            do { outcome = .success(try await body(port)) } catch { outcome = .failure(error) }
        } else {
            outcome = .failure(LoopbackApplicationError())
        }
        await services.triggerGracefulShutdown()
        try? await group.waitForAll()
        return try outcome.get()
    }
}

/// The application did not start listening.
public struct LoopbackApplicationError: Error, CustomStringConvertible {
    public var description: String { "the application did not start listening on a loopback port" }
}
