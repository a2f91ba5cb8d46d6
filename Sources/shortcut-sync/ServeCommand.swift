import ArgumentParser
import EmbeddedPostgres
import Foundation
import Hummingbird
import Logging
import SecretFiles
import ServiceLifecycle
import ShortcutSyncApp
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake

/// `shortcut-sync serve`: the HTTP API, and the maintenance tasks in the same process.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the HTTP API and run the maintenance tasks.")

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port: Int = 8080

    @Option(help: "Address of the operators' listener: /metrics and /readyz, which strangers must not reach (loopback unless Prometheus scrapes from elsewhere).")
    var operatorHost: String = "127.0.0.1"

    @Option(help: "Port of the operators' listener (/metrics, /readyz); /healthz stays on --port.")
    var operatorPort: Int = 8081

    @Option(help: "A file that holds the admin token that may create accounts (or env SHORTCUT_SYNC_ADMIN_TOKEN; never an argument, which any user can list). At least 32 characters. In embedded mode without one, serve makes one, keeps it in <data-dir>/admin-token (owner-only) and prints that file's path. The file is read again on SIGHUP and when `admin rotate-admin-token` writes a new token.")
    var adminTokenFile: String?

    @Flag(help: "Do not run the maintenance tasks in this process (run `shortcut-sync worker` elsewhere).")
    var noWorker = false

    @Option(help: "Maintenance tasks in this process: they fold accounts behind their version (after an import, or a push whose fold failed); any number of processes may run them.")
    var workerTasks = 1

    @OptionGroup var keepHistory: KeepHistoryOption

    @Option(help: "/readyz reports degraded while more events than this wait to be folded.")
    var degradedLag: Int64 = 10_000

    @Option(help: "Events each account may push per second, over time (beyond: 429 with Retry-After).")
    var pushEventsPerSecond: Double = PushBudgetConfiguration().eventsPerSecond

    @Option(help: "Events each account may push at once before --push-events-per-second applies.")
    var pushBurst: Int = PushBudgetConfiguration().burst

    @Option(help: "The most pushes of one account answered at once (beyond: 429 with Retry-After, before the body is read).")
    var maxPushesInFlightPerAccount: Int = 4

    @Option(help: "The most pushes run against the database at once; the others wait up to a second, then 503 with Retry-After. The database pool holds 40 connections: the rest stay for pulls, streams and token lookups.")
    var maxPushesRunning: Int = 24

    @Option(help: "Accounts whose last pushes' rows this process keeps, so that their next push of shortcuts among those is one statement instead of a read and a write (0: every push reads its rows).")
    var pushRowsKept: Int = FoldReadCache.defaultCapacity

    @Option(help: "The sums of devices' last suggestions requests this process keeps until their account changes, counted in shortcuts, devices and sums, so that a device asking again reads no sums (0: every request reads them).")
    var suggestionSumsKept: Int = SuggestionCandidateCache.defaultCapacity

    @Option(help: "Pulls and suggestion requests each device may make per second, over time (beyond: 429 with Retry-After, before any query).")
    var deviceReadsPerSecond: Double = 10

    @Option(help: "Pulls and suggestion requests each device may make at once before --device-reads-per-second applies.")
    var deviceReadBurst: Int = 60

    @Option(help: "Devices each account may sign in per hour over time, and apart from them sign out (beyond: 429 with Retry-After, nothing stored).")
    var deviceSignInsPerHour: Double = 30

    @Option(help: "Devices each account may sign in at once, and sign out, before --device-sign-ins-per-hour applies.")
    var deviceSignInBurst: Int = 30

    @Option(help: "The most open connections from one client address (beyond: closed as it opens). Behind a proxy every connection comes from its address: raise this to the service's whole cap (16384).")
    var maxConnectionsPerAddress: Int = 1_024

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var node: NodeOption
    @OptionGroup var apns: APNsOptions
    @OptionGroup var tracing: TracingOptions

    func validate() throws {
        // Before anything starts: a token that could be guessed is a usage error.
        _ = try AdminTokenSource.given(file: adminTokenFile, environment: ProcessInfo.processInfo.environment)
        if !(1...16_384).contains(maxConnectionsPerAddress) { throw ValidationError("--max-connections-per-address must be 1 to 16384") }
        if !(1...256).contains(workerTasks) { throw ValidationError("--worker-tasks must be 1 to 256") }
        if !(0...65_535).contains(port) || !(0...65_535).contains(operatorPort) { throw ValidationError("--port and --operator-port must be 0 to 65535") }
        if port == operatorPort, port != 0 { throw ValidationError("--operator-port must differ from --port: the operators' endpoints are not for the public listener") }
        if !(1...1_000).contains(maxPushesInFlightPerAccount) { throw ValidationError("--max-pushes-in-flight-per-account must be 1 to 1000") }
        if !(1...1_000).contains(maxPushesRunning) { throw ValidationError("--max-pushes-running must be 1 to 1000") }
        if !deviceReadsPerSecond.isFinite || deviceReadsPerSecond <= 0 { throw ValidationError("--device-reads-per-second must be above 0") }
        if deviceReadBurst < 1 { throw ValidationError("--device-read-burst must be at least 1") }
        if !deviceSignInsPerHour.isFinite || deviceSignInsPerHour <= 0 { throw ValidationError("--device-sign-ins-per-hour must be above 0") }
        if deviceSignInBurst < 1 { throw ValidationError("--device-sign-in-burst must be at least 1") }
        if !(0...1_000_000).contains(pushRowsKept) { throw ValidationError("--push-rows-kept must be 0 to 1000000") }
        if !(0...100_000_000).contains(suggestionSumsKept) { throw ValidationError("--suggestion-sums-kept must be 0 to 100000000") }
        if let problem = PushBudgetConfiguration(eventsPerSecond: pushEventsPerSecond, burst: pushBurst).problem {
            throw ValidationError(problem)
        }
    }

    func run() async throws {
        // SIGHUP means "read the admin token file again" (`AdminTokenReloader`), whose handler is
        // in place only once the service runs: one that comes before (a secrets manager that
        // writes and signals as the server starts) must not end the process, as its default would.
        signal(SIGHUP, SIG_IGN)
        let logger = database.logger
        // A key that cannot work is refused before the database is touched (started, created, migrated).
        try await apns.configuration()?.validate()
        try await database.withDatabase { location in
            try await serve(on: location, logger: logger)
        }
    }

    /// The service on `location`'s database, until SIGTERM or SIGINT; the embedded cluster, if
    /// this process started it, stops last.
    private func serve(on location: DatabaseLocation, logger: Logger) async throws {
        let environment = ProcessInfo.processInfo.environment
        let given = try AdminTokenSource.given(file: adminTokenFile, environment: environment)
        // DESIGN §5: a token the service makes is never printed, only the owner-only file that holds it.
        var tokenFile: SecretFile?
        let token: String
        if let given {
            token = given
        } else if let embedded = location.embedded {
            let file = SecretFile(embedded.dataDirectory.appendingPathComponent("admin-token"))
            token = try file.readOrCreate { Tokens.make(.admin) }
            tokenFile = file
        } else {
            throw ValidationError("an admin token is required with an external database: give SHORTCUT_SYNC_ADMIN_TOKEN or --admin-token-file")
        }

        var server = ServerConfiguration(host: host, port: port, adminToken: token, degradedLag: degradedLag)
        server.operatorHost = operatorHost
        server.operatorPort = operatorPort
        server.maximumConnectionsPerAddress = maxConnectionsPerAddress
        server.maximumPushesInFlightPerAccount = maxPushesInFlightPerAccount
        server.maximumPushesRunning = maxPushesRunning
        server.deviceReadsPerSecond = deviceReadsPerSecond
        server.deviceReadBurst = deviceReadBurst
        server.deviceSignInsPerHour = deviceSignInsPerHour
        server.deviceSignInBurst = deviceSignInBurst
        server.pushBudget = PushBudgetConfiguration(eventsPerSecond: pushEventsPerSecond, burst: pushBurst)
        var configuration = ServeConfiguration(server: server, database: location.url, runsWorker: !noWorker)
        configuration.node = try node.url(of: location.url)
        configuration.routesByAccount = node.routesByAccount()
        configuration.workerTasks = workerTasks
        configuration.compaction = try keepHistory.schedule()
        configuration.pushRowsKept = pushRowsKept
        configuration.suggestionSumsKept = suggestionSumsKept
        configuration.apns = try apns.configuration()
        configuration.apnsTopics = try apns.topics()
        configuration.wake = apns.wake
        // Read again on SIGHUP and when `admin rotate-admin-token` announces a new token.
        configuration.adminTokenFile = adminTokenFile.map { URL(fileURLWithPath: $0) } ?? tokenFile?.url
        configuration.readsAdminTokenOnHangUp = true
        let traces = try tracing.bootstrap(serviceName: "shortcut-sync")
        configuration.server.traced = traces != nil
        let app = try await buildApplication(configuration, logger: logger)
        if let embedded = location.embedded {
            let banner = """
                ShortcutSync is serving on http://\(host):\(port)
                  operators' listener: http://\(operatorHost):\(operatorPort) (/metrics, /readyz)
                  embedded PostgreSQL: \(location.url.redactedURLString)
                  its password is in:  \(embedded.passwordFile.path)
                  admin token:         \(tokenFile.map { "in \($0.path)" } ?? "the one given")

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        // The spans' exporter stops last, to send what the others ended with.
        try await ServiceGroup.runUntilSignalled((traces.map { [$0] } ?? []) + location.services + [app], logger: logger)
    }
}
