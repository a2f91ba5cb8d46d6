import Foundation
import Histogram
import ShortcutSyncDomain
import ShortcutSyncStore

extension SuggestionBenchmark {
    /// One account with `latencyShortcuts` shortcuts, each donated three times (or once in each
    /// of its `latencyGroups` donation groups, when more) over a few weeks at different hours by
    /// two devices, each donation at one of five places; then `latencyRequests` suggestions
    /// requests one after another at moments spread over a week, and as many again naming nine
    /// place tokens (a cell and its neighbours, one of them a place of the account), and as many
    /// again naming them, each after a push of one donation by the device asking (untimed), so
    /// that none finds the sums the service kept from the device's last request
    /// (`SuggestionCandidateCache`): the p50 and p99 of each, in milliseconds.
    func measureLatency(report: @escaping @Sendable (String) -> Void) async throws -> Latency {
        let account = try await post("/v1/accounts", token: adminToken, body: nil)
        let accountToken = try Self.string(account, "accountToken")
        var devices: [String] = []
        for platform in ["iOS", "iPadOS"] {
            devices.append(try Self.string(try await post("/v1/devices", token: accountToken, body: #"{"name":"many","platform":"\#(platform)"}"#),
                                           "deviceToken"))
        }
        let start: Int64 = 1_767_571_200_000
        var rng = SplitMix64(state: load.seed)
        var events: [[Event]] = [[], []]
        let places = (0..<13).map { _ in rng.nextPlaceToken() }
        var donations: [(device: Int, wall: Int64, identifier: Int, group: String?)] = []
        let groups = load.latencyGroups ?? 1
        for identifier in 0..<load.latencyShortcuts {
            for donation in 0..<max(3, groups) {
                donations.append((Int.random(in: 0...1, using: &rng), start + Int64.random(in: 0..<(4 * 7 * 86_400_000), using: &rng), identifier,
                                  groups > 1 ? "group-\(donation % groups)" : nil))
            }
        }
        /// A donation of the shortcut `identifier` (of 20 apps) at `place`.
        func donation(_ identifier: Int, group: String? = nil, place: String) -> EventBody {
            .donation(Donation(bundleId: "com.example.app\(identifier % 20)", identifier: "item-\(identifier)", kind: .userActivity,
                               activityType: "com.example.open", title: "Item \(identifier)", groupIdentifier: group, utcOffsetMinutes: 60,
                               place: place))
        }
        for planned in donations.sorted(by: { $0.wall < $1.wall }) {
            let seq = Int64(events[planned.device].count + 1)
            events[planned.device].append(Event(seq: seq, hlc: HLCTimestamp(wallMillis: planned.wall), body: donation(
                planned.identifier, group: planned.group, place: places[(planned.identifier + Int(planned.wall % 5)) % 5])))
        }
        if load.latencyNoAppsInstalled == true {
            for device in events.indices {
                let last = events[device].last.map(\.hlc.wallMillis) ?? start
                events[device].append(Event(seq: Int64(events[device].count + 1), hlc: HLCTimestamp(wallMillis: last + 1),
                                            body: .appsReported(AppsReported(installed: ["com.example.elsewhere"]))))
            }
        }
        for (device, list) in events.enumerated() {
            for batch in stride(from: 0, to: list.count, by: 500) {
                try await pushBatch(Array(list[batch..<min(list.count, batch + 500)]), token: devices[device])
            }
        }
        report("latency: an account with \(load.latencyShortcuts) shortcuts of \(groups) donation group(s) each (\(donations.count) donations on 2 devices)")
        let after = start + 4 * 7 * 86_400_000
        var pushed = [0, 0]
        func measure(naming: (Int) -> [String], pushingFirst: Bool = false) async throws -> (p50: Double, p99: Double) {
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            for index in 0..<load.latencyRequests {
                let at = after + Int64(index % 168) * 3_600_000
                if pushingFirst {
                    // A donation again of one of the shortcuts, after every one before: the account's head moves on.
                    let device = index % 2, identifier = index % load.latencyShortcuts
                    pushed[device] += 1
                    try await pushBatch([Event(seq: Int64(events[device].count + pushed[device]), hlc: HLCTimestamp(wallMillis: after + Int64(pushed[device])),
                                               body: donation(identifier, place: places[identifier % 5]))], token: devices[device])
                }
                let started = ContinuousClock.now
                let answer = try await suggestions(token: devices[index % 2], at: at, offset: 60, limit: 4, places: naming(index))
                histogram.record(UInt64((ContinuousClock.now - started).inSeconds * 1_000_000))
                if answer.isEmpty != (load.latencyNoAppsInstalled == true) {
                    throw BenchError("an account with \(load.latencyShortcuts) shortcuts got \(answer.count) suggestions")
                }
            }
            return (Double(histogram.valueAtPercentile(50)) / 1000, Double(histogram.valueAtPercentile(99)) / 1000)
        }
        let timeAlone = try await measure(naming: { _ in [] })
        // A place of the account in the middle, eight others around it (the last eight tokens are nobody's).
        let placed = try await measure(naming: { index in [places[index % 5]] + places[5...] })
        let changed = try await measure(naming: { index in [places[index % 5]] + places[5...] }, pushingFirst: true)
        return Latency(p50: timeAlone.p50, p99: timeAlone.p99, placedP50: placed.p50, placedP99: placed.p99,
                       changedP50: changed.p50, changedP99: changed.p99)
    }

    /// `measureLatency`'s figures, in milliseconds.
    struct Latency {
        var p50: Double, p99: Double, placedP50: Double, placedP99: Double, changedP50: Double, changedP99: Double
    }

    /// Pushes `events` (of one device, consecutive seqs) in one push.
    func pushBatch(_ events: [Event], token: String) async throws {
        let bodies = events.map { event in
            #"{"id":"\#(event.id.uuidString)","seq":\#(event.seq),"hlc":{"wallMillis":\#(event.hlc.wallMillis),"counter":\#(event.hlc.counter)},"type":"\#(event.body.type.rawValue)","#
                + event.body.fieldsJSON.dropFirst()
        }
        _ = try await post("/v1/sync/push", token: token, body: #"{"events":["# + bodies.joined(separator: ",") + "]}")
    }
}
