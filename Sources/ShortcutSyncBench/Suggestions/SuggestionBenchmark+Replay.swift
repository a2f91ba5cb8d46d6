import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ShortcutSyncDomain

extension SuggestionBenchmark {
    /// One person's account and devices on the service.
    struct Registered: Sendable {
        var deviceTokens: [String]
    }

    /// Every person gets an account and their devices; then `concurrency` people at a time are
    /// replayed, each in its own time order: ask before each donation, then push it (one event
    /// a push, as a device that is online pushes).
    func replayThroughHTTP(_ replay: SuggestionReplay, report: @escaping @Sendable (String) -> Void) async throws -> SuggestionScoreboard {
        let population = replay.population
        var registered: [Registered] = []
        for person in population.people {
            let account = try await post("/v1/accounts", token: adminToken, body: nil)
            let accountToken = try Self.string(account, "accountToken")
            var tokens: [String] = []
            for device in person.devices {
                let created = try await post("/v1/devices", token: accountToken,
                                             body: #"{"name":"bench \#(device.platform)","platform":"\#(device.platform)"}"#)
                tokens.append(try Self.string(created, "deviceToken"))
            }
            registered.append(Registered(deviceTokens: tokens))
        }
        let everyone = Array(population.people.indices)
        let groups = stride(from: 0, to: everyone.count, by: max(1, (everyone.count + load.concurrency - 1) / load.concurrency)).map {
            Set(everyone[$0..<min(everyone.count, $0 + max(1, (everyone.count + load.concurrency - 1) / load.concurrency))])
        }
        let registeredPeople = registered
        return try await withThrowingTaskGroup(of: SuggestionScoreboard.self) { group in
            for people in groups {
                group.addTask {
                    var seqs: [Int: [Int64]] = [:]
                    return try await replay.run(
                        people: people,
                        ask: { happening in
                            let token = registeredPeople[happening.person].deviceTokens[happening.device]
                            let places = population.people[happening.person].tokens(device: happening.device, at: happening.place)
                            return try await self.suggestions(token: token, at: happening.wallMillis, offset: happening.utcOffsetMinutes, places: places)
                        },
                        tell: { happening in
                            let person = population.people[happening.person]
                            var deviceSeqs = seqs[happening.person] ?? [Int64](repeating: 0, count: person.devices.count)
                            deviceSeqs[happening.device] += 1
                            seqs[happening.person] = deviceSeqs
                            let shortcut = person.shortcuts[happening.shortcut]
                            let body: EventBody = switch happening.kind {
                            case .donation:
                                .donation(Donation(bundleId: shortcut.id.bundleId, identifier: shortcut.id.identifier, kind: .userActivity,
                                                   activityType: "com.example.open", title: shortcut.title,
                                                   utcOffsetMinutes: happening.utcOffsetMinutes,
                                                   place: person.tokens(device: happening.device, at: happening.place).first))
                            case .deletion:
                                .deletion(Deletion(bundleId: shortcut.id.bundleId, selector: .identifiers([shortcut.id.identifier])))
                            }
                            let event = Event(seq: deviceSeqs[happening.device], hlc: HLCTimestamp(wallMillis: happening.wallMillis), body: body)
                            try await self.push(event, token: registeredPeople[happening.person].deviceTokens[happening.device])
                        })
                }
            }
            var board = SuggestionScoreboard()
            for try await part in group { board.merge(part) }
            return board
        }
    }

    /// The device's suggestions at `at` (at the places `places`, when any), as shortcut ids, best first.
    func suggestions(token: String, at: Int64, offset: Int, limit: Int = 5, places: [String] = []) async throws -> [ShortcutID] {
        let json = try await get("/v1/suggestions?limit=\(limit)&at=\(at)&utcOffsetMinutes=\(offset)" + places.map { "&place=\($0)" }.joined(),
                                 token: token)
        let suggestions = json["suggestions"] as? [[String: Any]] ?? []
        return suggestions.compactMap { suggestion in
            guard let bundleId = suggestion["bundleId"] as? String, let identifier = suggestion["identifier"] as? String else { return nil }
            return ShortcutID(bundleId: bundleId, identifier: identifier)
        }
    }

    /// Pushes one event (its envelope and its body's stored fields).
    func push(_ event: Event, token: String) async throws {
        let fields = event.body.fieldsJSON
        let envelope = #"{"id":"\#(event.id.uuidString)","seq":\#(event.seq),"hlc":{"wallMillis":\#(event.hlc.wallMillis),"counter":\#(event.hlc.counter)},"type":"\#(event.body.type.rawValue)","#
        _ = try await post("/v1/sync/push", token: token, body: #"{"events":["# + envelope + fields.dropFirst() + "]}")
    }

    func post(_ path: String, token: String, body: String?) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: service.absoluteString + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        return try await send(request, path)
    }

    func get(_ path: String, token: String) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: service.absoluteString + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return try await send(request, path)
    }

    private func send(_ request: HTTPClientRequest, _ path: String) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw BenchError("\(path.prefix(40)) answered \(response.status.code): \(String(buffer: body).prefix(300))")
        }
        return (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    static func string(_ json: [String: Any], _ key: String) throws -> String {
        guard let value = json[key] as? String else { throw BenchError("an answer lacks \(key)") }
        return value
    }
}
