import Foundation
import NIOHTTP1
import PostgresNIO
import ShortcutSyncApp
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import ShortcutSyncWorker
import Testing

/// The service on a real Citus cluster (a coordinator and two workers on loopback, Citus 13):
/// the suites of one PostgreSQL, run unchanged on a database of the cluster (`TestDatabase` gives
/// the cluster's while `CitusCluster.current` is set), and the proof that the hot paths run on
/// one shard. Skipped, with one line, where Citus is not installed.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusServerTests {
    // MARK: Pushes and pulls

    @Test func threeDevicesConverge() async throws {
        try await EndToEndTests().threeDevicesConvergeOnTheFoldOfEverythingTheyDid()
    }

    @Test func aCursorPullCarriesOnlyWhatChanged() async throws {
        try await EndToEndTests().aCursorPullCarriesOnlyWhatChangedAndAppliesToTheSameView()
    }

    @Test func aReusedIdIs409() async throws {
        try await HTTPEdgeTests().aReusedIdIsPointedAtTheEventThatReusesIt()
    }

    @Test func anAppKilledAroundItsPushLosesNothing() async throws {
        try await ClientLibraryTests().anAppKilledAroundItsPushLosesNothingAndSendsNothingTwice()
    }

    @Test func aWipedDeviceNumbersItsEventsFromWhatTheServiceExpects() async throws {
        try await ClientLibraryTests().aDeviceWhoseStorageWasWipedNumbersItsEventsFromWhatTheServiceExpects()
    }

    /// Pushes of one device racing with their own retries: each event is stored once, every
    /// push answers 200, and the device's view is the fold of what it pushed.
    @Test func racingRetriesStoreEachEventOnce() async throws {
        // Six at once, past the default of four pushes of an account under way: they really race.
        try await TestServer.with(configure: { $0.server.maximumPushesInFlightPerAccount = 8 }) { server in
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let millis = Int64(Date().timeIntervalSince1970 * 1000)
            for index in 0..<20 { phone.record(soupDonation("race-\(index)"), at: millis + Int64(index)) }
            let batch = phone.outbox
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let body = try JSONEncoder().encode(["events": batch])
                        return try await server.raw(.POST, "/v1/sync/push", token: phone.token, body: Array(body)).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 6))
            #expect(try await eventCount(server.sql) == 20)
            phone.accepted = batch.map { AcceptedEvent(deviceId: phone.id, event: $0) }
            phone.outbox = []
            try await phone.pull()
            #expect(phone.view == AccountState(folding: phone.accepted).view(forDevice: phone.id))
        }
    }

    @Test func aViewLargerThanAPageComesInFullPages() async throws {
        try await PullPagingTests().aViewLargerThanAPageComesInFullPagesThatMakeTheWholeView()
    }

    @Test func pushesBetweenPagesEndInTheCurrentView() async throws {
        try await PullPagingTests().pushesBetweenPagesStillEndInExactlyTheCurrentView()
    }

    // MARK: Forgetting and pausing what the suggestions learn

    /// A late forget: the group's sums counted again from the log, the forget kept beside the
    /// deletion marks, the rules on the account's row: each statement on the account's shard.
    @Test func aLateForgetForgetsOnlyWhatCameBeforeIt() async throws {
        try await LearningTests().aLateForgetOfOneShortcutForgetsOnlyWhatCameBeforeIt()
    }

    @Test func aPausedDeviceTeachesNothingUntilResumed() async throws {
        try await LearningTests().aPausedDeviceSyncsButTeachesNothingUntilResumed()
    }

    // MARK: Streams, sign-out, readiness

    @Test func aStreamIsPokedByAnotherDevicesPush() async throws {
        try await StreamTests().aStreamReceivesChangedAfterAnotherDevicesPush()
    }

    @Test func aSignedOutDeviceIsRefused() async throws {
        try await AccessTests().aSignedOutDeviceIsRefusedAndItsEventsStay()
    }

    @Test func anotherAccountsDeviceIsNeverSeenNorTouched() async throws {
        try await AccessTests().aDeviceOfOneAccountNeverSeesNorTouchesAnotherAccount()
    }

    @Test func signingOutEndsTheDevicesStreams() async throws {
        try await PullEdgeTests().signingADeviceOutEndsItsOpenStreamsAtOnce()
    }

    @Test func readinessReportsTheService() async throws {
        try await OperationsTests().readinessAndMetricsReportTheService()
    }

    @Test func readinessReportsAnImportWaiting() async throws {
        try await OperationsTests().readinessReportsDegradedWhileAnImportWaitsPastTheThreshold()
    }

    // MARK: Wakes and suggestions

    @Test func aSleepingDeviceIsWokenOnce() async throws {
        try await WakeTests().aSleepingDeviceIsWokenOnceAfterAChange()
    }

    @Test func twoServersWakeEachDeviceOnce() async throws {
        try await WakeTests().twoServersWakeEachDeviceOnce()
    }

    @Test func aChangeNoWakerHeardIsFound() async throws {
        try await WakeTests().aChangeNoWakerHeardIsFoundWhenOneStarts()
    }

    @Test func aPlantedRoutineIsSuggested() async throws {
        try await SuggestionsTests().aPlantedRoutineComesFirstAtItsHourAndNotAtOthers()
    }

    // MARK: One shard per request

    /// A push, a pull, a pull that waits for a version (what a stream's device does after a
    /// poke), a suggestion request and a fold each run only single-shard (router) statements on
    /// the cluster, as Citus counts them (`citus_stat_counters`, on the coordinator); the fold's
    /// queue read is its one multi-shard statement. A statement that turns multi-shard fails this.
    @Test func theHotPathsRunOnOneShard() async throws {
        try await TestServer.with(runsWorker: false) { server in
            let counters = CitusCounters(server.sql)
            let account = try await server.createAccount()
            let phone = try await server.createDevice(accountToken: account.token)
            let millis = Int64(Date().timeIntervalSince1970 * 1000)

            for index in 0..<3 { phone.record(soupDonation("hot-\(index)"), at: millis + Int64(index)) }
            let version = try await counters.expectSingleShard("a push") { try await phone.push() }
            try await counters.expectSingleShard("a pull") { try await phone.pull() }
            try await counters.expectSingleShard("a pull with a cursor") { try await phone.pull() }
            try await counters.expectSingleShard("a pull that waits for the next version") {
                let answer = try await server.raw(.GET, "/v1/sync/pull?waitFor=\(version + 1)&timeout=300", token: phone.token)
                #expect(answer.status == 200)
            }
            try await counters.expectSingleShard("a suggestion request") {
                let answer = try await server.raw(.GET, "/v1/suggestions?at=\(millis)&limit=4", token: phone.token)
                #expect(answer.status == 200)
            }

            // An account behind (an import), folded by a maintenance task.
            var tablet = DeviceScript(account: account.id)
            let backlog = (0..<5).map { tablet.donate("backlog-\($0)", at: millis + 10) }
            try await writeBacklog(backlog, account: account.id, client: server.sql)
            let worker = SyncWorker(queue: ProjectionStore(client: server.sql, logger: TestDatabase.shared.logger), logger: TestDatabase.shared.logger, batchSize: 100)
            let multi = try await counters.multiShardStatements("a fold") {
                let folded = try await worker.foldNext()
                #expect(folded)
            }
            #expect(multi == 1, "a fold runs one multi-shard statement, the queue's read of candidates, not \(multi)")
        }
    }
}

/// Citus's counts of single- and multi-shard statements in the database (`citus_stat_counters`,
/// `citus.enable_stat_counters` on): what the coordinator ran while a test's code ran.
struct CitusCounters {
    let sql: PostgresClient

    init(_ sql: PostgresClient) { self.sql = sql }

    func read() async throws -> (single: Int64, multi: Int64) {
        let rows = try await sql.query("""
            SELECT query_execution_single_shard, query_execution_multi_shard FROM citus_stat_counters WHERE name = current_database()
            """).decode((Int64, Int64).self).collectAll()
        let counts = try #require(rows.first, "citus_stat_counters has no row for this database")
        return (counts.0, counts.1)
    }

    /// How many multi-shard statements ran during `body`.
    func multiShardStatements(_ what: String, _ body: () async throws -> Void) async throws -> Int64 {
        let before = try await read()
        try await body()
        let after = try await read()
        #expect(after.single > before.single, "\(what) ran no single-shard statement: are the counters on?")
        return after.multi - before.multi
    }

    /// Runs `body` and expects that no statement of it reached more than one shard.
    @discardableResult
    func expectSingleShard<Result>(_ what: String, _ body: () async throws -> Result) async throws -> Result {
        var result: Result?
        let multi = try await multiShardStatements(what) { result = try await body() }
        #expect(multi == 0, "\(what) ran \(multi) multi-shard statements")
        return result!
    }
}
