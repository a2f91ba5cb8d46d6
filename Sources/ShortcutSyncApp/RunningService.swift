import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import ShortcutSyncServer

/// Where a running service answers: its public base URL, and its operators' listener's
/// (`/metrics`, `/readyz`).
public struct RunningService: Sendable {
    public var baseURL: URL
    public var operatorURL: URL
}

/// Runs the service (`configuration.server.port` 0 for a free port) while `body` runs with its base
/// URLs, then stops it as SIGTERM stops `serve`: gracefully, bounded, then cancelled, also when
/// `body` throws. For programs that drive a service of their own: the demo, the tests.
public func withRunningService<Result: Sendable>(
    _ configuration: ServeConfiguration,
    logger: Logger,
    clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
    monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (RunningService) async throws -> Result
) async throws -> Result {
    let (ports, portContinuation) = AsyncStream<Int>.makeStream()
    let (operatorPorts, operatorPortContinuation) = AsyncStream<Int>.makeStream()
    let app = try await buildApplication(configuration, logger: logger, clock: clock, monotonic: monotonic, onServerRunning: { channel in
        portContinuation.yield(channel.localAddress?.port ?? 0)
        portContinuation.finish()
    }, onOperatorsListenerRunning: { channel in
        operatorPortContinuation.yield(channel.localAddress?.port ?? 0)
        operatorPortContinuation.finish()
    })
    var groupConfiguration = ServiceGroupConfiguration(services: [app], logger: logger)
    groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
    // Past it, ServiceLifecycle stops the whole process (`fatalError`): a test process with many
    // services at once, on a loaded machine, once took longer than 2 s to cancel one (the pool
    // closing its connections, it seems; not proven). A service that never ends still ends the
    // process, 20 s after the graceful shutdown gave up, rather than hang it.
    groupConfiguration.maximumCancellationDuration = .seconds(20)
    let services = ServiceGroup(configuration: groupConfiguration)
    return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask {
            // A service that ends before it listens (its migrations failed) ends the waits for its
            // ports too: they waited for ever, and a test with them.
            defer {
                portContinuation.finish()
                operatorPortContinuation.finish()
            }
            try await services.run()
        }
        var iterator = ports.makeAsyncIterator()
        var operatorIterator = operatorPorts.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0,
              let operatorPort = await operatorIterator.next(), operatorPort > 0 else {
            // Why it ended, if it failed; else it stopped without ever listening.
            try await group.waitForAll()
            throw CancellationError()
        }
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(RunningService(
                baseURL: URL(string: "http://\(configuration.server.host):\(port)")!,
                operatorURL: URL(string: "http://\(configuration.server.operatorHost):\(operatorPort)")!)))
        } catch {
            outcome = .failure(error)
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return try outcome.get()
    }
}
