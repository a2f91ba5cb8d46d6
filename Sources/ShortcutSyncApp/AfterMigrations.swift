import ServiceLifecycle

/// A service that starts once the schema is migrated.
///
/// `buildApplication` migrates in Hummingbird's `beforeServerStarts`, on the running pool, while
/// the other services start: the sync worker, which reads the tables the migrations make, waits
/// for them here. A shutdown or cancellation before they end leaves it unstarted.
struct AfterMigrations: Service {
    let service: any Service
    /// Yields once the migrations are applied.
    let migrated: AsyncStream<Void>

    func run() async throws {
        let ready = await cancelWhenGracefulShutdown { [migrated] in
            for await _ in migrated { return true }
            return false
        }
        guard ready else { return }
        try await service.run()
    }
}
