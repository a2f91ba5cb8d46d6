import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PostgresNIO
import ShortcutSyncStore

/// `bench push`: pushes over HTTP to a running service beside raw inserts of the same rows into
/// a copy of the events table on the same database (DESIGN §8), the end-to-end latency from one
/// device's push to another's pull woken by its stream with many streams open, and the
/// service's resident memory with them open.
public struct PushBenchmark: Sendable {
    /// One push scenario: `devices` devices pushing `batch`-event batches at once, each of its own
    /// account or all of one, beside `rawClients` connections inserting `batch`-row transactions.
    public struct Scenario: Sendable, Hashable, Codable {
        /// A short name for the command line.
        public var key: String
        public var name: String
        public var devices: Int
        public var batch: Int
        public var oneAccount: Bool
        /// Whether each push donates a shortcut its account does not hold yet (else the same one
        /// again): the account's view grows all through the run.
        public var newShortcuts = false
        public var rawClients: Int
        /// DESIGN §8's least ratio to raw inserts, where it sets one.
        public var target: Double?

        public init(key: String, name: String, devices: Int, batch: Int, oneAccount: Bool, newShortcuts: Bool = false, rawClients: Int,
                    target: Double?) {
            self.key = key
            self.name = name
            self.devices = devices
            self.batch = batch
            self.oneAccount = oneAccount
            self.newShortcuts = newShortcuts
            self.rawClients = rawClients
            self.target = target
        }

        /// The scenarios of DESIGN §8 and the issue's table.
        public static let all = [
            Scenario(key: "batches", name: "100-event pushes, 4 devices of 4 accounts", devices: 4, batch: 100, oneAccount: false, rawClients: 4,
                     target: 0.5),
            Scenario(key: "batches-one-account", name: "100-event pushes, 4 devices of 1 account", devices: 4, batch: 100, oneAccount: true, rawClients: 4,
                     target: nil),
            Scenario(key: "single-events", name: "1-event pushes, 32 devices", devices: 32, batch: 1, oneAccount: false, rawClients: 8,
                     target: 0.4),
            Scenario(key: "new-shortcuts", name: "1-event pushes of new shortcuts, 32 devices", devices: 32, batch: 1, oneAccount: false,
                     newShortcuts: true, rawClients: 8, target: nil),
        ]
    }

    public struct Throughput: Sendable, Hashable, Codable {
        public var scenario: Scenario
        public var oursEventsPerSecond: Double
        /// The raw inserts made through PostgresNIO from this process (`RawAppend`): DESIGN §8's
        /// targets are ratios to these.
        public var rawRowsPerSecond: Double
        public var ratio: Double { rawRowsPerSecond > 0 ? oursEventsPerSecond / rawRowsPerSecond : 0 }
        /// The same inserts made by pgbench (`PgbenchAppend`), where it is installed: the
        /// database's own limit, beside the stack's.
        public var pgbenchRowsPerSecond: Double?
        public var pgbenchRatio: Double? { pgbenchRowsPerSecond.flatMap { $0 > 0 ? oursEventsPerSecond / $0 : nil } }
        public var pushP50Milliseconds: Double
        public var pushP99Milliseconds: Double
        public var failedPushes: Int
        /// The service's CPU time (user and system) per event pushed, in microseconds (nil where unknown):
        /// steadier than throughput on a machine whose speed varies from run to run.
        public var serviceCPUMicrosecondsPerEvent: Double?
        /// The worker's CPU time per event pushed, when it runs as a process of its own.
        public var workerCPUMicrosecondsPerEvent: Double?
        /// What PostgreSQL spent per event, on the pushes and on the raw inserts.
        public var database: DatabaseCostPerEvent?
        /// The same with one device pushing one push at a time beside one raw connection inserting
        /// one transaction at a time (`oneAtATime`): no statement waits for a core, but each of
        /// ours comes after the service's own work while the raw inserts come back to back.
        public var databaseOneAtATime: DatabaseCostPerEvent?
        /// For 1-event pushes: the CPU per push of the stack's floor (`StackFloor`) under the same
        /// load, in microseconds, and its pushes a second.
        public var floorCPUMicrosecondsPerPush: Double?
        public var floorPushesPerSecond: Double?
        /// For 1-event pushes: the service and the floor pushed at the same time, each by as many
        /// devices as the scenario's, over the same seconds.
        public var sideBySide: SideBySide?
        /// Each PostgreSQL node's CPU per push over the pushes, where `nodes` names them (`bench citus`).
        public var nodesCPU: [NodeCPU]?

        /// The service's CPU per event over the floor's per push (1-event pushes).
        public var serviceCPUOverFloor: Double? {
            guard let ours = serviceCPUMicrosecondsPerEvent, let floor = floorCPUMicrosecondsPerPush, floor > 0 else { return nil }
            return ours / floor
        }
    }

    /// The service's and the stack's floor's CPU per 1-event push, both under load at once.
    ///
    /// Measured one after the other, the two figures move apart by as much as this machine's
    /// speed moves between runs (the service's over the floor's, 1.77 to 2.79 in seven runs,
    /// docs/benchmarks.md); measured at once, whatever slows the machine slows both, and their
    /// ratio is what the service adds to its stack.
    public struct SideBySide: Sendable, Hashable, Codable {
        public var oursCPUMicrosecondsPerPush: Double
        public var floorCPUMicrosecondsPerPush: Double

        public var oursOverFloor: Double? {
            floorCPUMicrosecondsPerPush > 0 ? oursCPUMicrosecondsPerPush / floorCPUMicrosecondsPerPush : nil
        }

        public init(oursCPUMicrosecondsPerPush: Double, floorCPUMicrosecondsPerPush: Double) {
            self.oursCPUMicrosecondsPerPush = oursCPUMicrosecondsPerPush
            self.floorCPUMicrosecondsPerPush = floorCPUMicrosecondsPerPush
        }
    }

    public struct Latency: Sendable, Hashable, Codable {
        public var streams: Int
        public var samples: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        /// The service's resident memory with every stream open, in bytes (nil where unknown).
        public var serviceResidentBytes: Int?
        /// The same before the streams opened (the devices registered), in bytes.
        public var serviceIdleResidentBytes: Int?
        /// The open-file limit this process raised and the service inherited.
        public var openFileLimit: Int?

        /// What each open stream adds to the service's resident memory, in bytes.
        public var residentBytesPerStream: Double? {
            guard let open = serviceResidentBytes, let idle = serviceIdleResidentBytes, streams > 0 else { return nil }
            return Double(open - idle) / Double(streams)
        }

        /// The table's rows for DESIGN §8's latency and memory targets, with `verdict` for each.
        func rows(verdict: (Bool) -> String) -> [String] {
            var rows = ["| push → another device's pull, woken by its stream, \(streams) streams open | "
                + String(format: "p50 %.1f ms, p99 %.1f ms", p50Milliseconds, p99Milliseconds)
                + " | — | — | p99 ≤ 50 ms | \(verdict(p99Milliseconds <= 50)) |"]
            if let open = serviceResidentBytes {
                let idle = serviceIdleResidentBytes.map { String(format: "; %.0f MB idle", Double($0) / 1_000_000) } ?? ""
                let perStream = residentBytesPerStream.map { String(format: ", %.1f KB per stream", $0 / 1000) } ?? ""
                let limit = openFileLimit.map { "; open-file limit \($0)" } ?? ""
                let met = open <= 400_000_000 && (residentBytesPerStream ?? 0) <= 25_000
                rows.append("| service resident memory, \(streams) streams open | "
                    + String(format: "%.0f MB", Double(open) / 1_000_000) + "\(perStream)\(idle)\(limit) | — | — | "
                    + "≤ 400 MB at 10,000 streams, ≤ 25 KB per stream | \(verdict(met)) |")
            }
            return rows
        }
    }

    public let service: URL
    /// The service's operators' listener (`/readyz`).
    public let operators: URL
    public let adminToken: String
    public let database: DatabaseURL
    /// The service's process, for its resident memory (Linux /proc).
    public let servicePID: Int32?
    /// The worker's process, when it is not the service's.
    public let workerPID: Int32?
    public let duration: Duration
    public let logger: Logger
    public var report: @Sendable (String) -> Void = { _ in }
    /// The database's servers on this machine, by name and postmaster (a Citus cluster's every
    /// node): each one's CPU over the pushes (`Throughput.nodesCPU`).
    public var nodes: [(name: String, postmaster: Int32)] = []
    /// Nodes whose own statements each push scenario lists beside the database's (`bench citus`:
    /// the workers, where an attached service's pushes run): their `pg_stat_statements`.
    public var statementNodes: [(name: String, url: DatabaseURL)] = []
    /// Whether 1-event pushes are also measured against the stack's floor (`StackFloor`), twice
    /// the scenario's time again: `bench citus`, which compares engines, not the service with its
    /// stack, leaves it out.
    public var measuresStackFloor = true
    /// Whether the raw inserts are also made by pgbench where it is installed (`PgbenchAppend`):
    /// `bench citus`, whose table shows the PostgresNIO raw alone, leaves it out.
    public var measuresPgbench = true
    /// Devices of the pull part (`pullThroughput`), run after the push scenarios; 0: none
    /// (`bench citus` runs it).
    public var pullDevices = 0

    public init(service: URL, operators: URL, adminToken: String, database: DatabaseURL, servicePID: Int32?, workerPID: Int32? = nil,
                duration: Duration, logger: Logger) {
        self.service = service
        self.operators = operators
        self.workerPID = workerPID
        self.adminToken = adminToken
        self.database = database
        self.servicePID = servicePID
        self.duration = duration
        self.logger = logger
    }

    // MARK: Push throughput

    public func throughput(_ scenario: Scenario, http: HTTPClient) async throws -> Throughput {
        let devices = try await register(devices: scenario.devices, accounts: scenario.oneAccount ? 1 : scenario.devices, http: http)
        // The database's meter first: on Citus it makes the extension on every node.
        return try await DatabaseMeter.with(each: [database] + statementNodes.map(\.url), logger: logger) { meters in
            let meter = meters[0], nodeMeters = meters.dropFirst()
            for nodeMeter in nodeMeters { _ = try await nodeMeter.start() }
            let databaseBefore = try await meter.start()
            let cpuBefore = (servicePID.flatMap(ProcessCPU.of), workerPID.flatMap(ProcessCPU.of))
            let nodesBefore = nodes.map { ProcessCPU.ofServer($0.postmaster) }
            let (events, histogram, failures) = try await pushAsFastAsPossible(devices, batch: scenario.batch, newShortcuts: scenario.newShortcuts,
                                                                              http: http)
            let nodesAfter = nodes.map { ProcessCPU.ofServer($0.postmaster) }
            let cpuAfter = (servicePID.flatMap(ProcessCPU.of), workerPID.flatMap(ProcessCPU.of))
            let databaseCost = try await meter.finish(cpuBefore: databaseBefore)
            for (node, nodeMeter) in zip(statementNodes, nodeMeters) {
                let cost = try await nodeMeter.finish(cpuBefore: nil)
                if !cost.statements.isEmpty {
                    report("\(scenario.name): \(node.name)'s statements over the pushes (\(events / max(scenario.batch, 1)) pushes)\n" + cost.statementTable)
                }
            }
            let ours = Double(events) / duration.inSeconds
            report("\(scenario.name): ours \(Int(ours)) events/s")
            let (raw, rawCost) = try await rawInserts(batch: scenario.batch, clients: scenario.rawClients, meter: meter)
            report("\(scenario.name): raw \(Int(raw)) rows/s")
            let pgbench = try await pgbenchInserts(batch: scenario.batch, clients: scenario.rawClients)
            if let pgbench { report("\(scenario.name): pgbench's raw \(Int(pgbench)) rows/s") }
            var figure = Throughput(scenario: scenario, oursEventsPerSecond: ours, rawRowsPerSecond: raw,
                                    pushP50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                                    pushP99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000, failedPushes: failures,
                                    serviceCPUMicrosecondsPerEvent: ProcessCPU.microseconds(from: cpuBefore.0, to: cpuAfter.0, per: events),
                                    workerCPUMicrosecondsPerEvent: ProcessCPU.microseconds(from: cpuBefore.1, to: cpuAfter.1, per: events))
            figure.pgbenchRowsPerSecond = pgbench
            figure.database = DatabaseCostPerEvent(ours: databaseCost, events: events, raw: rawCost.cost, rawRows: rawCost.rows)
            if !nodes.isEmpty {
                figure.nodesCPU = nodes.indices.map { index in
                    NodeCPU(name: nodes[index].name, microsecondsPerPush: ProcessCPU.microseconds(from: nodesBefore[index], to: nodesAfter[index],
                                                                                                 per: events / max(scenario.batch, 1)))
                }
            }
            if !databaseCost.statements.isEmpty {
                report("\(scenario.name): PostgreSQL's statements over the pushes (\(events / max(scenario.batch, 1)) pushes)\n"
                    + databaseCost.statementTable)
                let alone = try await oneAtATime(batch: scenario.batch, newShortcuts: scenario.newShortcuts, http: http, meter: meter)
                report("\(scenario.name): one push at a time, PostgreSQL's statements (\(alone.events / max(scenario.batch, 1)) pushes)\n"
                    + alone.cost.statementTable)
                figure.databaseOneAtATime = alone.perEvent
            }
            if measuresStackFloor && scenario.batch == 1 && !scenario.newShortcuts {
                let floor = try await stackFloor(devices: scenario.devices, http: http)
                figure.floorCPUMicrosecondsPerPush = floor.cpuMicrosecondsPerPush
                figure.floorPushesPerSecond = floor.pushesPerSecond
                figure.sideBySide = floor.sideBySide
                report("\(scenario.name): the stack's floor \(Int(floor.pushesPerSecond)) pushes/s, "
                    + (floor.cpuMicrosecondsPerPush.map { String(format: "%.0f µs of CPU a push", $0) } ?? "its CPU unknown")
                    + (floor.sideBySide.map { String(format: "; side by side, ours %.0f µs and the floor's %.0f µs", $0.oursCPUMicrosecondsPerPush,
                                                     $0.floorCPUMicrosecondsPerPush) } ?? ""))
            }
            return figure
        }
    }

    /// The stack's floor (`StackFloor`, a process of its own on this database) under the same
    /// load as 1-event pushes from `devices` devices: its CPU per push, in microseconds, and its
    /// pushes a second; then the floor and the service at once, each pushed by `devices` new
    /// devices (`SideBySide`; nil where a process's CPU is unknown).
    func stackFloor(devices: Int, http: HTTPClient)
        async throws -> (cpuMicrosecondsPerPush: Double?, pushesPerSecond: Double, sideBySide: SideBySide?) {
        try await StackFloor.with(database: database, logger: logger) { url, pid in
            func floorTokens() -> [Device] { (0..<devices).map { Device(token: "floor-\($0)-\(UUID().uuidString)", account: $0) } }
            let before = ProcessCPU.of(pid)
            let (pushes, _, failures) = try await pushAsFastAsPossible(floorTokens(), batch: 1, http: http, to: url)
            let after = ProcessCPU.of(pid)
            guard failures == 0, pushes > 0 else { throw BenchError("the stack's floor answered \(failures) of its pushes with an error") }

            let ours = try await register(devices: devices, accounts: devices, http: http)
            let bothBefore = (servicePID.flatMap(ProcessCPU.of), ProcessCPU.of(pid))
            async let oursRun = pushAsFastAsPossible(ours, batch: 1, http: http)
            async let floorRun = pushAsFastAsPossible(floorTokens(), batch: 1, http: http, to: url)
            let (oursPushes, _, oursFailures) = try await oursRun
            let (floorPushes, _, floorFailures) = try await floorRun
            let bothAfter = (servicePID.flatMap(ProcessCPU.of), ProcessCPU.of(pid))
            guard oursFailures == 0, floorFailures == 0, oursPushes > 0, floorPushes > 0 else {
                throw BenchError("side by side, the service failed \(oursFailures) pushes and the stack's floor \(floorFailures)")
            }
            var sideBySide: SideBySide?
            if let ours = ProcessCPU.microseconds(from: bothBefore.0, to: bothAfter.0, per: oursPushes),
               let floor = ProcessCPU.microseconds(from: bothBefore.1, to: bothAfter.1, per: floorPushes) {
                sideBySide = SideBySide(oursCPUMicrosecondsPerPush: ours, floorCPUMicrosecondsPerPush: floor)
            }
            return (ProcessCPU.microseconds(from: before, to: after, per: pushes), Double(pushes) / duration.inSeconds, sideBySide)
        }
    }

    struct Device: Sendable {
        var token: String
        var account: Int
    }

    /// `devices` new devices spread over `accounts` new accounts (round robin).
    func register(devices: Int, accounts: Int, http: HTTPClient) async throws -> [Device] {
        var accountTokens: [String] = []
        for _ in 0..<accounts {
            let created = try await post("/v1/accounts", token: adminToken, body: nil, http: http)
            accountTokens.append(try string(created, "accountToken"))
        }
        var registered: [Device] = []
        for index in 0..<devices {
            let created = try await post("/v1/devices", token: accountTokens[index % accounts],
                                         body: #"{"name":"bench \#(index)","platform":"iOS"}"#, http: http)
            registered.append(Device(token: try string(created, "deviceToken"), account: index % accounts))
        }
        return registered
    }

    /// One new device pushes `batch`-event pushes one at a time, then one connection inserts
    /// `batch`-row transactions one at a time, each for a third of `duration` (at most 3 s): what
    /// PostgreSQL spends per event on each when no statement waits for a core (the loaded figures
    /// run 24 pushes' statements at once against the raw inserts' 8 or 4, and a statement's
    /// execution time counts its waits). Ours still reach a backend that idled through the
    /// service's own work, the raw inserts one that did not: measured, that costs ours 2–3×
    /// (docs/benchmarks.md).
    func oneAtATime(batch: Int, newShortcuts: Bool, http: HTTPClient, meter: DatabaseMeter) async throws -> (perEvent: DatabaseCostPerEvent, cost: DatabaseCost, events: Int) {
        let device = try await register(devices: 1, accounts: 1, http: http)
        let part = min(duration / 3, .seconds(3))
        let before = try await meter.start()
        let (events, _, _) = try await pushAsFastAsPossible(device, batch: batch, newShortcuts: newShortcuts, http: http, for: part)
        let ours = try await meter.finish(cpuBefore: before)
        let (_, raw) = try await rawInserts(batch: batch, clients: 1, meter: meter, for: part)
        return (DatabaseCostPerEvent(ours: ours, events: events, raw: raw.cost, rawRows: raw.rows), ours, events)
    }

    /// Every device pushes batches back to back for `duration` (or `part`); events accepted, push
    /// latencies in microseconds, and pushes that failed. `newShortcuts`: each push donates a
    /// shortcut of its own (named by its first seq).
    /// `to`: another server than the service (the stack's floor).
    func pushAsFastAsPossible(_ devices: [Device], batch: Int, newShortcuts: Bool = false, http: HTTPClient, for part: Duration? = nil,
                              to server: URL? = nil) async throws -> (Int, Histogram<UInt64>, Int) {
        let deadline = ContinuousClock.now + (part ?? duration)
        return try await withThrowingTaskGroup(of: (Int, Histogram<UInt64>, Int).self) { group in
            for device in devices {
                group.addTask {
                    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
                    var seq: Int64 = 0, accepted = 0, failed = 0
                    while ContinuousClock.now < deadline {
                        let body = BenchEvents.pushBody(from: seq + 1, count: batch, identifier: newShortcuts ? "new-\(seq + 1)" : nil)
                        let started = ContinuousClock.now
                        let status = try await pushStatus(token: device.token, body: body, to: server ?? service, http: http)
                        histogram.record(UInt64((ContinuousClock.now - started).inSeconds * 1_000_000))
                        if status == 200 {
                            seq += Int64(batch)
                            accepted += batch
                        } else {
                            failed += 1
                        }
                    }
                    return (accepted, histogram, failed)
                }
            }
            return try await Self.merged(&group)
        }
    }

    /// The devices' tasks' counts, histograms (microseconds) and failures, added up.
    static func merged(_ group: inout ThrowingTaskGroup<(Int, Histogram<UInt64>, Int), any Error>) async throws -> (Int, Histogram<UInt64>, Int) {
        var total = 0, failures = 0
        var merged = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        for try await (count, histogram, failed) in group {
            total += count
            failures += failed
            merged.add(histogram)
        }
        return (total, merged, failures)
    }

    /// `clients` connections insert `batch`-row transactions of the same event-shaped rows into a
    /// copy of the events table (its indexes and constraints, not its trigger) for `duration`:
    /// rows a second, and what PostgreSQL spent on the inserts (`meter`) with the rows inserted.
    /// Each client's statements are `RawAppend`'s.
    func rawInserts(batch: Int, clients: Int, meter: DatabaseMeter, for part: Duration? = nil) async throws -> (Double, (cost: DatabaseCost, rows: Int)) {
        try await withRawTable(connections: clients + 1) { client in
            let databaseBefore = try await meter.start()
            let deadline = ContinuousClock.now + (part ?? duration)
            let rows = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<clients {
                    group.addTask {
                        var append = RawAppend(batch: batch)
                        var inserted = 0
                        while ContinuousClock.now < deadline {
                            try await client.query(append.next(), logger: logger)
                            inserted += batch
                        }
                        return inserted
                    }
                }
                return try await group.reduce(0, +)
            }
            let cost = try await meter.finish(cpuBefore: databaseBefore)
            return (Double(rows) / (part ?? duration).inSeconds, (cost, rows))
        }
    }

    /// pgbench's clients make `rawInserts`' inserts (`PgbenchAppend`) for `duration`: rows a
    /// second, by pgbench's own count; nil where pgbench is not installed or not measured.
    func pgbenchInserts(batch: Int, clients: Int) async throws -> Double? {
        guard measuresPgbench, let pgbench = PgbenchAppend.find() else { return nil }
        let run = try await withRawTable(connections: 1) { _ in
            try await pgbench.run(batch: batch, clients: clients, duration: duration, database: database)
        }
        return run.transactionsPerSecond * Double(batch)
    }

    /// `body` with a new, empty copy of the events table (its indexes and constraints, not its
    /// trigger) as `bench_raw_events`, on a client of `connections`; the copy is dropped after.
    func withRawTable<Result: Sendable>(connections: Int, _ body: (PostgresClient) async throws -> Result) async throws -> Result {
        let client = PostgresClient(configuration: try database.clientConfiguration(maximumConnections: connections), backgroundLogger: logger)
        return try await client.withRunning {
            try await client.query("DROP TABLE IF EXISTS bench_raw_events", logger: logger)
            try await client.query("CREATE TABLE bench_raw_events (LIKE events INCLUDING ALL)", logger: logger)
            let result = try await body(client)
            try await client.query("DROP TABLE bench_raw_events", logger: logger)
            return result
        }
    }

    // MARK: End-to-end latency

    /// `streams` devices (two per account) hold their streams open; `samples` times, one device
    /// pushes a donation and its account's other device, woken by its stream, pulls until it
    /// sees it. The service's memory is read with every stream open.
    public func endToEnd(streams: Int, samples: Int, http: HTTPClient) async throws -> Latency {
        let accounts = max(streams / 2, 1)
        let devices = try await register(devices: accounts * 2, accounts: accounts, http: http)
        let idleMemory = servicePID.flatMap(ResidentMemory.of)
        let openFileLimit = OpenFileLimit.raise()
        let pokes = PokeBoard()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask { try await listen(device.token, index: index, pokes: pokes, http: http) }
            }
            // A loaded machine opens a few hundred a second: the wait grows with their number.
            try await pokes.waitForOpen(devices.count, timeout: .seconds(max(120, devices.count / 20)))
            report("\(devices.count) streams open")
            try await waitForWorker(http: http)
            let memory = servicePID.flatMap(ResidentMemory.of)
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            var seqs = [Int64](repeating: 0, count: devices.count)
            var cursors = [String?](repeating: nil, count: devices.count)
            for sample in 0..<samples {
                // `register` deals devices to accounts round robin: device a and a + accounts share account a.
                let pusher = sample % accounts, reader = pusher + accounts
                let identifier = "e2e-\(sample)"
                seqs[pusher] += 1
                let pokesBefore = await pokes.count(reader)
                let started = ContinuousClock.now
                let status = try await pushStatus(token: devices[pusher].token,
                                                  body: BenchEvents.pushBody(from: seqs[pusher], count: 1, identifier: identifier),
                                                  to: service, http: http)
                guard status == 200 else { throw BenchError("a push answered \(status)") }
                try await pokes.waitForPoke(reader, after: pokesBefore, timeout: .seconds(10))
                while true {
                    let (found, cursor) = try await pull(devices[reader].token, cursor: cursors[reader], seeking: identifier, http: http)
                    cursors[reader] = cursor
                    if found { break }
                    try await pokes.waitForPoke(reader, after: await pokes.count(reader), timeout: .seconds(10))
                }
                histogram.record(UInt64((ContinuousClock.now - started).inSeconds * 1_000_000))
            }
            group.cancelAll()
            return Latency(streams: devices.count, samples: samples, p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                           p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000, serviceResidentBytes: memory,
                           serviceIdleResidentBytes: idleMemory, openFileLimit: openFileLimit)
        }
    }

    /// Waits until no account is behind its head (pushes fold themselves, so this is at once
    /// unless one is parked), so that latency is never a backlog's.
    private func waitForWorker(http: HTTPClient) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            let response = try await http.execute(HTTPClientRequest(url: operators.absoluteString + "/readyz"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            if json?["accountsBehind"] as? Int == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("accounts were still behind their versions after 300 s")
    }

    private func listen(_ token: String, index: Int, pokes: PokeBoard, http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: service.absoluteString + "/v1/sync/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .hours(1))
            guard response.status.code == 200 else { throw BenchError("a stream answered \(response.status.code)") }
        } catch {
            // Said at once, not after the wait for every stream to open.
            await pokes.failed(error)
            throw error
        }
        await pokes.opened(index)
        for try await chunk in response.body {
            let text = String(buffer: chunk)
            let changes = text.components(separatedBy: "event: changed").count - 1
            if changes > 0 { await pokes.poked(index, times: changes) }
        }
    }

    /// Pulls from `cursor`, page after page while the answer says `more` (as a device does);
    /// returns whether any page upserted `identifier`, and the last page's cursor.
    private func pull(_ token: String, cursor: String?, seeking identifier: String, http: HTTPClient) async throws -> (Bool, String?) {
        let (donations, cursor) = try await pullPages(service: service, token: token, cursor: cursor, http: http)
        return (donations[identifier] != nil, cursor)
    }

    // MARK: HTTP

    private func post(_ path: String, token: String, body: String?, http: HTTPClient) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: service.absoluteString + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code),
              let json = try JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any] else {
            throw BenchError("POST \(path) answered \(response.status.code): \(String(buffer: answer))")
        }
        return json
    }

    /// A push's status, its answer read and dropped.
    func pushStatus(token: String, body: String, to server: URL, http: HTTPClient) async throws -> UInt {
        let response = try await http.execute(pushRequest(service: server, token: token, body: body), timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status.code
    }

    private func string(_ json: [String: Any], _ key: String) throws -> String {
        guard let value = json[key] as? String else { throw BenchError("the answer has no \(key)") }
        return value
    }
}

extension ResidentMemory {
    /// Another process's resident memory (VmRSS), in bytes.
    static func of(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
