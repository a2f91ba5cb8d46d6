import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ShortcutSyncTestSupport
import Testing

/// One device pushing a donation after another through an outage, with the client library's
/// retry rules: a push answered 503 (with `Retry-After`) is sent again unchanged, the same event
/// ids, since it may have been stored all the same and only an exact retry is taken as one.
struct PushesThroughAnOutage: Sendable {
    typealias Answer = (status: Int, headers: HTTPHeaders, json: [String: Any])

    var acknowledged = 0
    var refused = 0
    /// Every answer: when its request was sent, how long it took, its status, and how long the
    /// service says it held it (`Server-Timing: held`, on the service's own clock).
    var answers: [Timed] = []
    typealias Timed = (sent: ContinuousClock.Instant, took: Duration, status: Int, held: Duration?)
    var acknowledgedAfterOutage = false
    /// When each acknowledged push was sent, in order.
    var acknowledgedSentAt: [ContinuousClock.Instant] = []
    /// Pushes whose connection closed before an answer came, when they were sent: sent again,
    /// as the client library does, at most `mostLost` times a run. The full suite once met one
    /// (`I/O on closed channel` in FaultTests, the database stopped for 20 s), on a loaded machine;
    /// its cause was not found. More than a few would be the service dropping requests.
    var lost: [ContinuousClock.Instant] = []
    static let mostLost = 2

    /// The push of donation `seq` (identifier `item-seq`), one event.
    static func donation(_ seq: Int) -> [UInt8] {
        InputLimitTests.push([InputLimitTests.event(seq: seq, type: "donation", fields: """
            "bundleId":"com.example.soup","identifier":"item-\(seq)","kind":"intent","intentType":"OrderSoupIntent","title":"Soup \(seq)"
            """)])
    }

    /// Pushes until `isDone` (by default: a push acknowledged after a refusal, the outage came
    /// and went) or until `deadline`: each answer timed, a 503 sent again after 100 ms. Any
    /// answer other than 200 and 503 is recorded as an issue and ends the run.
    static func run(
        until deadline: ContinuousClock.Instant,
        isDone: @Sendable (Self) -> Bool = { $0.acknowledgedAfterOutage },
        push: @Sendable ([UInt8]) async throws -> Answer
    ) async throws -> Self {
        var outcome = Self()
        var batch = donation(1)
        while ContinuousClock.now < deadline && !isDone(outcome) {
            let started = ContinuousClock.now
            let answer: Answer
            do {
                answer = try await push(batch)
            } catch let error where Self.closedBeforeAnAnswer(error) && outcome.lost.count < Self.mostLost {
                print("a push sent at \(started) lost its connection before an answer: \(error); sent again")
                outcome.lost.append(started)
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            outcome.answers.append((started, ContinuousClock.now - started, answer.status, Self.held(answer.headers)))
            switch answer.status {
            case 200:
                outcome.acknowledged += 1
                outcome.acknowledgedSentAt.append(started)
                batch = donation(outcome.acknowledged + 1)
                if outcome.refused > 0 { outcome.acknowledgedAfterOutage = true }
            case 503:
                outcome.refused += 1
                #expect(answer.headers.first(name: "Retry-After") == "1")
                try await Task.sleep(for: .milliseconds(100))
            default:
                Issue.record("a push answered \(answer.status): \(answer.json)")
                return outcome
            }
        }
        return outcome
    }

    /// Whether `error` says the request's connection closed before its answer came (not that
    /// the answer was late: a hang stays an error).
    static func closedBeforeAnAnswer(_ error: any Error) -> Bool {
        if let channel = error as? ChannelError, case .ioOnClosedChannel = channel { return true }
        if let client = error as? HTTPClientError, client == .remoteConnectionClosed { return true }
        return false
    }

    /// The `held;dur=<ms>` of a `Server-Timing` header.
    static func held(_ headers: HTTPHeaders) -> Duration? {
        guard let timing = headers.first(name: "Server-Timing"),
              let milliseconds = timing.firstMatch(of: /held;dur=([0-9.]+)/).flatMap({ Double($0.output.1) }) else { return nil }
        return .microseconds(Int64(milliseconds * 1_000))
    }

    /// DESIGN §8's bound, checked: every request sent while the database was away (from `faultBegan`
    /// until `faultEnded`, when it was back) and every refusal is answered within 2 s of the later
    /// of its sending and the fault's beginning. A request sent
    /// after the database came back is only bounded by `afterwards` (it may meet a cold server: new
    /// sessions, statements prepared again), so that a hang is still caught.
    static func expectFailFast(
        _ outcomes: [Self], faultBegan: ContinuousClock.Instant, faultEnded: ContinuousClock.Instant,
        afterwards: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let answers = outcomes.flatMap(\.answers)
        let bounded = answers.filter { ($0.sent >= faultBegan && $0.sent <= faultEnded) || $0.status == 503 }
        // The bound is the service's: how long it held each request, on its own clock (a client on a
        // loaded machine adds delays of its own, which the looser wall-clock bound below still
        // catches when they are a hang). A request sent before the fault, still held when it
        // began, is bounded from the fault: before it the database served, and the time it took
        // then is no outage's.
        func heldInFault(_ answer: Timed) -> Duration {
            let held = answer.held ?? answer.took
            return answer.sent >= faultBegan ? held : held - (faultBegan - answer.sent)
        }
        if let slowest = bounded.max(by: { heldInFault($0) < heldInFault($1) }) {
            #expect(heldInFault(slowest) < .seconds(2),
                    "a request sent \(slowest.sent - faultBegan) after the fault began was answered \(slowest.status) after \(slowest.took), held \(slowest.held.map { "\($0)" } ?? "?") by the service, \(heldInFault(slowest)) of it in the fault",
                    sourceLocation: sourceLocation)
        }
        if let slowest = answers.max(by: { $0.took < $1.took }) {
            #expect(slowest.took < afterwards, "a request sent \(slowest.sent - faultBegan) after the fault began was answered \(slowest.status) after \(slowest.took)",
                    sourceLocation: sourceLocation)
        }
        #expect(!bounded.isEmpty, "requests were sent during the fault", sourceLocation: sourceLocation)
    }
}
