import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

let logger = TestDatabase.shared.logger

/// A simulated device of one account: its own seq counter and clock.
struct SimulatedDevice: Sendable {
    let account: UUID
    let id: UUID
    var seq: Int64 = 0

    init(account: UUID, id: UUID = UUID()) {
        self.account = account
        self.id = id
    }

    mutating func event(at wall: Int64, _ body: EventBody) -> Event {
        seq += 1
        return Event(seq: seq, hlc: HLCTimestamp(wallMillis: wall, counter: Int(seq % 3)), body: body)
    }

    mutating func donate(_ identifier: String, bundle: String = "com.example.soup", group: String? = nil, at wall: Int64) -> Event {
        event(at: wall, .donation(Donation(
            bundleId: bundle, identifier: identifier, kind: .intent, intentType: "OrderIntent",
            title: "Order \(identifier) at \(wall)", groupIdentifier: group, keywords: ["order"],
            parameters: ["size": .string("large"), "count": .number(2)])))
    }

    mutating func delete(_ selector: DeletionSelector, bundle: String = "com.example.soup", at wall: Int64) -> Event {
        event(at: wall, .deletion(Deletion(bundleId: bundle, selector: selector)))
    }

    mutating func addVoice(_ id: UUID, phrase: String, to identifier: String, bundle: String = "com.example.soup", at wall: Int64) -> Event {
        event(at: wall, .voiceShortcutAdded(VoiceShortcutAdded(
            voiceShortcutId: id, phrase: phrase, bundleId: bundle, identifier: identifier, title: "Order \(identifier)")))
    }

    mutating func updateVoice(_ id: UUID, phrase: String, at wall: Int64) -> Event {
        event(at: wall, .voiceShortcutUpdated(VoiceShortcutUpdated(voiceShortcutId: id, phrase: phrase)))
    }

    mutating func deleteVoice(_ id: UUID, at wall: Int64) -> Event {
        event(at: wall, .voiceShortcutDeleted(VoiceShortcutDeleted(voiceShortcutId: id)))
    }

    mutating func report(_ installed: [String], at wall: Int64) -> Event {
        event(at: wall, .appsReported(AppsReported(installed: installed)))
    }
}

/// A deterministic generator, so a failing scenario is reproduced by its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random pushes of several accounts and devices, with few identifiers, groups and phrases so
/// that deletions cover donations, phrases collide and devices switch to views of their own.
struct Scenario {
    var random: SeededGenerator
    var devices: [SimulatedDevice]
    var voiceIds: [UUID: [UUID]] = [:]
    var wall: Int64 = 1_763_712_000_000

    static let bundles = ["com.example.soup", "com.example.tea", "com.example.maps"]

    init(seed: UInt64, accounts: Int, devicesPerAccount: Int) {
        random = SeededGenerator(state: seed)
        devices = (0..<accounts).flatMap { _ in
            let account = UUID()
            return (0..<devicesPerAccount).map { _ in SimulatedDevice(account: account) }
        }
        for account in Set(devices.map(\.account)) {
            voiceIds[account] = (0..<4).map { _ in UUID() }
        }
    }

    /// One push: a device and a few of its events.
    mutating func push(maxEvents: Int = 6) -> (device: SimulatedDevice, events: [Event]) {
        let index = Int.random(in: devices.indices, using: &random)
        var device = devices[index]
        let count = Int.random(in: 1...maxEvents, using: &random)
        var events: [Event] = []
        for _ in 0..<count {
            // Clocks go back and forth a little, as offline devices' do.
            wall += Int64.random(in: -3...5, using: &random)
            events.append(randomEvent(&device))
        }
        devices[index] = device
        return (device, events)
    }

    private mutating func randomEvent(_ device: inout SimulatedDevice) -> Event {
        let bundle = Self.bundles.randomElement(using: &random)!
        let identifier = "item-\(Int.random(in: 0..<5, using: &random))"
        let voice = voiceIds[device.account]!.randomElement(using: &random)!
        let phrase = ["Order soup", "order  soup!", "Tea time", "Go home", "ＯＲＤＥＲ ＳＯＵＰ"].randomElement(using: &random)!
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<9:
            let group = Bool.random(using: &random) ? "group-\(Int.random(in: 0..<2, using: &random))" : nil
            return device.donate(identifier, bundle: bundle, group: group, at: wall)
        case 9:
            return device.delete(.identifiers([identifier, "item-\(Int.random(in: 0..<5, using: &random))"]), bundle: bundle, at: wall)
        case 10:
            return device.delete(.groupIdentifier("group-\(Int.random(in: 0..<2, using: &random))"), bundle: bundle, at: wall)
        case 11:
            return device.delete(.all, bundle: bundle, at: wall)
        case 12..<15:
            return device.addVoice(voice, phrase: phrase, to: identifier, bundle: bundle, at: wall)
        case 15, 16:
            return device.updateVoice(voice, phrase: phrase, at: wall)
        case 17:
            return device.deleteVoice(voice, at: wall)
        default:
            let installed = Self.bundles.filter { _ in Bool.random(using: &random) }
            return device.report(installed, at: wall)
        }
    }
}

/// Appends pushes to the log and remembers every accepted event per account, as the domain fold needs them.
struct PushLog {
    let store: PostgresEventStore
    var accepted: [UUID: [AcceptedEvent]] = [:]

    init(client: PostgresClient) {
        store = PostgresEventStore(client: client, logger: logger)
    }

    @discardableResult
    mutating func push(_ device: SimulatedDevice, _ events: [Event]) async throws -> AppendResult {
        let result = try await store.append(events, account: device.account, device: device.id)
        accepted[device.account, default: []] += events.map { AcceptedEvent(deviceId: device.id, event: $0) }
        return result
    }

    /// What the domain says `device` sees, from every event of its account.
    func expectedView(account: UUID, device: UUID) -> DeviceView {
        AccountState(folding: accepted[account] ?? []).view(forDevice: device)
    }
}

extension ProjectionStore {
    /// The device's whole view, as a fresh pull gives it.
    func fullView(account: UUID, device: UUID) async throws -> DeviceView {
        let pull = try await pull(account: account, device: device, cursor: nil)
        #expect(pull.reset)
        return DeviceView.empty.applying(pull.changes)
    }

    /// Waits until every committed event is folded in.
    func waitUntilCaughtUp(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try await status()
            if status.pendingEvents == 0 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("the worker did not catch up: \(status.pendingEvents) events pending at \(status.checkpoint.log)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Folds everything committed, batch by batch, on `connection` (as the worker does, without one).
    func foldAll(on connection: PostgresConnection, batchSize: Int = 1000) async throws -> [ProjectionNotification] {
        let log = PostgresEventStore(client: client, logger: logger)
        var notifications: [ProjectionNotification] = []
        var checkpoint = try await checkpoint().log
        while true {
            let events = try await log.readLog(after: checkpoint, limit: batchSize)
            guard let last = events.last else {
                // Other tests' transactions in the same cluster can hold the log's horizon back a moment.
                if try await status().pendingEvents == 0 { return notifications }
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            notifications += try await apply(events, from: checkpoint, on: connection)
            checkpoint = last.checkpoint
        }
    }
}

extension PostgresEventStore {
    /// The next `count` events after `checkpoint`, waiting while other tests' transactions in the
    /// same cluster hold the log's horizon (`pg_snapshot_xmin`) below them.
    func readLog(after checkpoint: LogCheckpoint, count: Int) async throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try await eventually("\(count) events are readable") {
            events = try await readLog(after: checkpoint, limit: count)
            return events.count == count
        }
        return events
    }
}

/// A connection of its own to the test database, closed after `body`.
func withConnection<Result: Sendable>(
    _ url: DatabaseURL,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (PostgresConnection) async throws -> Result
) async throws -> Result {
    let connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 99, logger: logger)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

/// Runs `worker` while `body` runs, then cancels it and waits for it to stop.
func whileRunning<Result: Sendable>(
    _ worker: SyncWorker,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask { try await worker.run() }
        defer { group.cancelAll() }
        return try await body()
    }
}

/// How many rows the projection tables hold, to prove that an aborted batch wrote nothing.
func projectionRowCounts(_ client: PostgresClient) async throws -> [Int64] {
    try await client.query("""
        SELECT (SELECT count(*) FROM projection_accounts), (SELECT count(*) FROM projection_shortcuts),
               (SELECT count(*) FROM projection_voice_shortcuts)
        """).decode((Int64, Int64, Int64).self).collectAll().map { [$0.0, $0.1, $0.2] }.first ?? []
}
