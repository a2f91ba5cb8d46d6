import ArgumentParser
import Logging
import ServiceLifecycle
import ShortcutSyncApp
import ShortcutSyncWake

/// `shortcut-sync worker`: the maintenance tasks alone (DESIGN §6, §7). Any number of processes
/// may run, beside the servers' own tasks: each task takes accounts behind their head from the
/// queue with `SKIP LOCKED`, so none is special. With an APNs key it also wakes sleeping devices,
/// beside the servers' wakers (DESIGN §6).
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "worker", abstract: "Run maintenance worker tasks alone.")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var node: NodeOption
    @OptionGroup var apns: APNsOptions
    @OptionGroup var tracing: TracingOptions
    @Option(help: "How many maintenance tasks fold accounts side by side.") var tasks = 1
    @OptionGroup var keepHistory: KeepHistoryOption

    func validate() throws {
        guard (1...256).contains(tasks) else { throw ValidationError("--tasks must be 1 to 256") }
    }

    func run() async throws {
        let logger = database.logger
        // A key that cannot work is refused before the database is touched (started, created, migrated).
        let settings = try apns.configuration()
        try await settings?.validate()
        try await database.withDatabase { location in
            // Before the services are made: the APNs client takes the process's tracer when it is made.
            let traces = try tracing.bootstrap(serviceName: "shortcut-sync-worker")
            let services = try await buildWorkerServices(database: location.url, node: try node.url(of: location.url), tasks: tasks, apns: settings, wake: apns.wake,
                                                         compaction: try keepHistory.schedule(), logger: logger)
            // The spans' exporter stops last, to send what the others ended with.
            try await ServiceGroup.runUntilSignalled((traces.map { [$0] } ?? []) + location.services + services, logger: logger)
        }
    }
}
