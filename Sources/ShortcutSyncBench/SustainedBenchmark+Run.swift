import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import ShortcutSyncStore

extension SustainedBenchmark {
    /// Runs the benchmark on a fresh database of `server` (dropped afterwards) with the service
    /// as a child process (stopped afterwards, also when the run fails). `interruptible` runs
    /// the measuring itself, so that the caller can cut it short (at a signal) and the cleanup
    /// still runs; `report` is told what the run is doing. With `flushProbeDirectory` (on the
    /// database's disk), a `FlushProbe` there says what the disk did during phase 2. Throws when
    /// a view lacks an acknowledged event, after reporting the figures.
    public static func run(
        server: DatabaseURL, load: Load, flushProbeDirectory: URL? = nil, logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> Result) async throws -> Result
    ) async throws -> Result {
        try await withFreshDatabase(on: server, logger: logger) { url in
            try await FlushProbe.with(directory: flushProbeDirectory) { probe in
                try await run(on: url, load: load, probe: probe, logger: logger, report: report, interruptible: interruptible)
            }
        }
    }

    private static func run(
        on url: DatabaseURL, load: Load, probe: FlushProbe?, logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        interruptible: (@escaping @Sendable () async throws -> Result) async throws -> Result
    ) async throws -> Result {
        try await BenchService.with(database: url, workerProcess: false) { service in
            report("service: pid \(service.servicePID) on \(service.url.absoluteString), database \(url.database)")

            var benchmark = SustainedBenchmark(service: service.url, adminToken: service.adminToken, load: load, logger: logger)
            benchmark.report = { report("  \($0)") }
            let registrar = PushBenchmark(service: service.url, operators: service.operators, adminToken: service.adminToken, database: url,
                                          servicePID: service.servicePID, duration: load.duration, logger: logger)
            let measure = benchmark
            // Every device holds a connection: the readers' streams, the pushers' pushes, and the setup's.
            return try await withBenchHTTPClient(connections: 2 * (load.accounts + load.sampleAccounts) + 64) { http in
                try await interruptible { try await measure.measure(registrar: registrar, probe: probe, http: http) }
            }
        }
    }

    /// Sets the accounts up, opens every reader's stream, runs both phases and checks the views.
    func measure(registrar: PushBenchmark, probe: FlushProbe?, http: HTTPClient) async throws -> Result {
        // `register` deals devices to accounts round robin: device a and a + accounts share account a.
        let loadDevices = try await registrar.register(devices: 2 * load.accounts, accounts: load.accounts, http: http)
        var accounts = (0..<load.accounts).map { LoadAccount(pusher: loadDevices[$0].token, reader: loadDevices[$0 + load.accounts].token) }
        let sampleDevices = try await registrar.register(devices: 2 * load.sampleAccounts, accounts: load.sampleAccounts, http: http)
        var samplers = (0..<load.sampleAccounts).map {
            SampleAccount(pusher: sampleDevices[$0].token, reader: sampleDevices[$0 + load.sampleAccounts].token, index: $0)
        }
        report("\(load.accounts) load accounts and \(load.sampleAccounts) sample accounts registered, 2 devices each")

        let board = StreamBoard()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for account in accounts {
                group.addTask { try await listen(account.reader, index: -1, board: board, recordVersions: false, http: http) }
            }
            for sampler in samplers {
                group.addTask { try await listen(sampler.reader, index: sampler.index, board: board, recordVersions: true, http: http) }
            }
            group.addTask {
                // Fails sample waits past their deadlines; at the end (cancelled), every wait.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    await board.expireOverdue()
                }
                await board.close()
            }
            defer { group.cancelAll() }
            try await board.waitForOpen(accounts.count + samplers.count, timeout: .seconds(120))
            report("\(accounts.count + samplers.count) readers' streams open")
            for index in samplers.indices {
                samplers[index].cursor = try await pull(samplers[index].reader, cursor: nil, http: http).cursor
            }

            let sustained = try await pushBackToBack(&accounts, http: http)
            guard sustained.events > 0 else { throw BenchError("no push was acknowledged in \(load.duration); see the service's log") }
            report("sustained: \(Int(sustained.eventsPerSecond)) events/s (\(Int(sustained.pushesPerSecond)) pushes/s), "
                + String(format: "push p50 %.1f ms, p99 %.1f ms, ", sustained.pushP50Milliseconds, sustained.pushP99Milliseconds)
                + "\(sustained.failedPushes) failed")

            let offered = sustained.eventsPerSecond * load.share
            let sampling = samplers
            // What the load generator (this process) and the service spend during phase 2.
            let cpuBefore = (ProcessCPU.of(getpid()), registrar.servicePID.flatMap(ProcessCPU.of))
            let metricsBefore = await ServiceHistogram.scrape(registrar.operators, http: http)
            _ = probe?.take()
            let phaseStarted = ContinuousClock.now
            async let latency = sampleLatency(sampling, http: http, board: board)
            let loaded = try await pushOnSchedule(&accounts, eventsPerSecond: offered, http: http)
            let measured = try await latency
            let phaseSeconds = (ContinuousClock.now - phaseStarted).inSeconds
            let flushes = probe?.take()
            let cpuAfter = (ProcessCPU.of(getpid()), registrar.servicePID.flatMap(ProcessCPU.of))
            let metricsAfter = await ServiceHistogram.scrape(registrar.operators, http: http)
            func cores(_ before: Double?, _ after: Double?) -> Double? {
                guard let before, let after, phaseSeconds > 0 else { return nil }
                return (after - before) / phaseSeconds
            }
            report("\(Int((load.share * 100).rounded())) %: offered \(Int(loaded.eventsPerSecond)) of \(Int(offered)) events/s, "
                + String(format: "push p99 %.1f ms; push → pull p50 %.1f ms, p99 %.1f ms, max %.1f ms, ",
                         loaded.pushP99Milliseconds, measured.p50Milliseconds, measured.p99Milliseconds, measured.maxMilliseconds)
                + "\(measured.samples) samples, \(measured.missed) missed"
                + (flushes.map { String(format: "; the database's disk: longest flush %.1f ms, %d over %d ms",
                                        $0.longestMilliseconds, $0.stalls, FlushProbe.stallMilliseconds) } ?? ""))
            if let failure = probe?.failure { report("\(failure); the disk's figures are of the flushes before it") }

            let views = try await checkViews(accounts, http: http)
            report("views: \(views.accounts) accounts, \(views.views) views pulled from scratch, \(views.lacking) lacking, \(views.surplus) with extra donations")
            var result = Result(accounts: load.accounts, sampleAccounts: load.sampleAccounts, batch: Self.batch, sustained: sustained,
                                loaded: loaded, offeredEventsPerSecond: offered, share: load.share, latency: measured, views: views)
            result.loadGeneratorCores = cores(cpuBefore.0, cpuAfter.0)
            result.serviceCores = cores(cpuBefore.1, cpuAfter.1)
            result.longestFlushMilliseconds = flushes?.longestMilliseconds
            result.flushStalls = flushes?.stalls
            result.serviceFreshness = ServiceHistogram(ServiceHistogram.freshness, from: metricsBefore, to: metricsAfter)
            result.servicePushes = ServiceHistogram(ServiceHistogram.pushesAnswered, from: metricsBefore, to: metricsAfter)
            if views.lacking > 0 || views.surplus > 0 {
                report("\n" + result.table)
                throw BenchError("\(views.lacking) of \(views.accounts) accounts' views lacked an acknowledged event and "
                    + "\(views.surplus) showed more donations than were pushed: a push's events were not in every device's next pull")
            }
            return result
        }
    }

    // MARK: Phases

    /// Phase 1, closed loop: every load account's pusher pushes back to back for the duration.
    private func pushBackToBack(_ accounts: inout [LoadAccount], http: HTTPClient) async throws -> Pushes {
        let started = ContinuousClock.now, deadline = started + load.duration
        let outcomes = try await withThrowingTaskGroup(of: (Int, LoadAccount, PushTally).self) { group in
            for (index, account) in accounts.enumerated() {
                group.addTask {
                    var account = account, tally = PushTally()
                    while ContinuousClock.now < deadline {
                        if try await pushBatch(&account, tally: &tally, http: http) == false {
                            try await Task.sleep(for: .milliseconds(100))  // as a device backs off
                        }
                    }
                    return (index, account, tally)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        return collect(outcomes, into: &accounts, seconds: (ContinuousClock.now - started).inSeconds)
    }

    /// Phase 2, open loop: each load account pushes on its own schedule, a random phase apart,
    /// so that together they offer `eventsPerSecond`. A push that is late (the one before took
    /// longer than the interval) goes at once; a failed one is sent again at the next slot.
    private func pushOnSchedule(_ accounts: inout [LoadAccount], eventsPerSecond: Double, http: HTTPClient) async throws -> Pushes {
        let interval = Duration.seconds(Double(accounts.count * Self.batch) / eventsPerSecond)
        let started = ContinuousClock.now, deadline = started + load.duration
        let outcomes = try await withThrowingTaskGroup(of: (Int, LoadAccount, PushTally).self) { group in
            for (index, account) in accounts.enumerated() {
                group.addTask {
                    var account = account, tally = PushTally()
                    var next = started + interval * Double.random(in: 0..<1)
                    while next < deadline {
                        try await Task.sleep(until: next, clock: .continuous)
                        try await pushBatch(&account, tally: &tally, http: http)
                        next += interval
                    }
                    return (index, account, tally)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        return collect(outcomes, into: &accounts, seconds: (ContinuousClock.now - started).inSeconds)
    }

    /// Sends the account's next batch, or again the one not yet acknowledged; tallies the push.
    @discardableResult
    private func pushBatch(_ account: inout LoadAccount, tally: inout PushTally, http: HTTPClient) async throws -> Bool {
        let batch = account.pending ?? account.nextBatch()
        let started = ContinuousClock.now
        let answer = try await push(batch.body, token: account.pusher, http: http)
        tally.histogram.record(UInt64((ContinuousClock.now - started).inSeconds * 1_000_000))
        guard answer.accepted else {
            account.pending = batch
            tally.failures[answer.failure, default: 0] += 1
            return false
        }
        account.acknowledge(batch)
        tally.pushes += 1
        tally.events += Self.batch
        return true
    }

    private func collect(_ outcomes: [(Int, LoadAccount, PushTally)], into accounts: inout [LoadAccount], seconds: Double) -> Pushes {
        var total = PushTally()
        for (index, account, tally) in outcomes {
            accounts[index] = account
            total.add(tally)
        }
        return Pushes(events: total.events, pushes: total.pushes, seconds: seconds,
                      pushP50Milliseconds: Double(total.histogram.valueAtPercentile(50)) / 1000,
                      pushP99Milliseconds: Double(total.histogram.valueAtPercentile(99)) / 1000,
                      pushMaxMilliseconds: Double(total.histogram.maxRecorded) / 1000, failures: total.failures)
    }

    /// Beside phase 2, each sample account about twice a second (from a random start, so that
    /// they do not go together): its pusher pushes one donation, its reader waits for its stream
    /// to announce the push's version, then pulls until it sees the donation. A sample is push
    /// start → seen. Paced, not back to back: samplers that loop as fast as they can are a
    /// closed loop of their own, which fills whatever the offered load leaves of the machine,
    /// and the latency then measures a saturated service whatever share is offered.
    private func sampleLatency(_ samplers: [SampleAccount], http: HTTPClient, board: StreamBoard) async throws -> Latency {
        let deadline = ContinuousClock.now + load.duration
        let outcomes = try await withThrowingTaskGroup(of: (Histogram<UInt64>, Int, Int).self) { group in
            for sampler in samplers {
                group.addTask {
                    var sampler = sampler, histogram = PushTally.newHistogram(), missed = 0, failed = 0
                    var next = ContinuousClock.now + .milliseconds(Int.random(in: 0..<Self.sampleIntervalMilliseconds))
                    while true {
                        try await Task.sleep(until: next)
                        guard ContinuousClock.now < deadline else { break }
                        next = next + .milliseconds(Self.sampleIntervalMilliseconds)
                        let sample = try await takeSample(&sampler, http: http, board: board)
                        histogram.record(UInt64(sample.elapsed.inSeconds * 1_000_000))
                        if sample.missed { missed += 1 }
                        failed += sample.failedPushes
                    }
                    return (histogram, missed, failed)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var histogram = PushTally.newHistogram(), missed = 0, failed = 0
        for (part, partMissed, partFailed) in outcomes {
            histogram.add(part)
            missed += partMissed
            failed += partFailed
        }
        return Latency(samples: Int(histogram.totalCount), p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000,
                       p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000,
                       maxMilliseconds: Double(histogram.max) / 1000, missed: missed, failedPushes: failed)
    }

    /// One sample. `missed`: the first pull after both the acknowledgement and the poke lacked
    /// the donation, which DESIGN §4 rules out (the push folds its events in its transaction).
    private func takeSample(_ sampler: inout SampleAccount, http: HTTPClient, board: StreamBoard)
        async throws -> (elapsed: Duration, missed: Bool, failedPushes: Int) {
        let identifier = "sample-\(sampler.samples % Self.sampleIdentifiers)"
        let expected = sampler.donations[identifier, default: 0] + 1
        let body = BenchEvents.pushBody(from: sampler.nextSeq, count: 1, identifier: identifier)
        let started = ContinuousClock.now
        var failed = 0
        var version: Int64
        while true {
            let answer = try await push(body, token: sampler.pusher, http: http)
            if answer.accepted, let answered = answer.version {
                version = answered
                break
            }
            failed += 1
            guard ContinuousClock.now - started < .seconds(60) else {
                throw BenchError("a sample account's push was not acknowledged within 60 s (last: \(answer.failure))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        sampler.nextSeq += 1
        sampler.samples += 1
        sampler.donations[identifier] = expected
        try await board.waitForVersion(sampler.index, atLeast: version, timeout: .seconds(10))
        var missed = false
        while true {
            let (donations, cursor) = try await pull(sampler.reader, cursor: sampler.cursor, http: http)
            sampler.cursor = cursor
            if let seen = donations[identifier], seen >= expected { break }
            missed = true
            guard ContinuousClock.now - started < .seconds(10) else {
                throw BenchError("a reader's pulls lacked an acknowledged donation (version \(version)) for 10 s after its push")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return (ContinuousClock.now - started, missed, failed)
    }

    // MARK: Views

    /// Both devices of every load account pull their whole view (no cursor, every page); each
    /// identifier's `donationCount` must be what the account's acknowledged pushes donated, and
    /// at most one unacknowledged batch more (a push whose answer was lost may have been stored).
    private func checkViews(_ accounts: [LoadAccount], http: HTTPClient) async throws -> Views {
        let verdicts = try await withThrowingTaskGroup(of: (lacking: Bool, surplus: Bool).self) { group in
            var verdicts: [(lacking: Bool, surplus: Bool)] = []
            for (index, account) in accounts.enumerated() {
                if index >= 16, let verdict = try await group.next() { verdicts.append(verdict) }
                group.addTask {
                    var lacking = false, surplus = false
                    for token in [account.reader, account.pusher] {
                        let view = try await pull(token, cursor: nil, http: http).donations
                        for slot in 0..<Self.loadIdentifiers {
                            let seen = view["load-\(slot)"] ?? 0, acknowledged = account.acknowledged[slot]
                            let unacknowledged = account.pending?.slot == slot ? Self.batch : 0
                            if seen < acknowledged { lacking = true }
                            if seen > acknowledged + unacknowledged { surplus = true }
                        }
                    }
                    return (lacking, surplus)
                }
            }
            for try await verdict in group { verdicts.append(verdict) }
            return verdicts
        }
        return Views(accounts: accounts.count, views: 2 * accounts.count,
                     lacking: verdicts.filter(\.lacking).count, surplus: verdicts.filter(\.surplus).count)
    }
}
