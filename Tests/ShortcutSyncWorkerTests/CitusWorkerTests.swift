import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncStore
import Testing

/// The maintenance tasks, the rebuild and `migrate` on a real Citus cluster (`CitusCluster`):
/// the suites of one PostgreSQL, run unchanged on a database of the cluster, and what `migrate`
/// distributes. Skipped, with one line, where Citus is not installed.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusWorkerTests {
    @Test func threeTasksFoldABacklog() async throws {
        try await SyncWorkerTests().threeTasksFoldABacklogOfManyAccountsIntoTheViewsTheDomainGives()
    }

    @Test func twoTasksNeverTakeTheSameAccount() async throws {
        try await SyncWorkerTests().twoTasksNeverTakeTheSameAccount()
    }

    @Test func aHeldAccountIsSkippedAndTakenWhenReleased() async throws {
        try await MaintenanceQueueTests().anAccountHeldByATaskIsSkippedAndTakenByAnotherWhenItsTransactionDies()
    }

    @Test func aPushThatCannotBeFoldedParksItsAccount() async throws {
        try await ParkedAccountTests().aPushThatCannotBeFoldedIsKeptItsAccountParkedWhileTheOthersGoOnAndFoldedOnceCleared()
    }

    @Test func aRebuildAndPromotionWhilePushesGoOnLoseNothing() async throws {
        try await ProjectionRebuilderTests().aRebuildAndPromotionWhilePushesGoOnLoseNothing()
    }

    @Test func aPromotionHoldsOnlyTheAccountItSwapsWhileTheOthersPush() async throws {
        try await ProjectionRebuilderTests().aPromotionHoldsOnlyTheAccountItSwapsWhileTheOthersPush()
    }

    @Test func aPromotionMakesTheAccountsBehindCurrent() async throws {
        try await ProjectionRebuilderTests().aPromotionMakesTheAccountsBehindCurrent()
    }

    @Test func compactingKeepsTheViewsAndALateDeletionCoversEverythingCompacted() async throws {
        try await CompactionTests().compactingKeepsTheViewsAndALateDeletionCoversEverythingCompacted(chunk: 4)
    }

    @Test func aWorkerWithAShortRetentionCompactsAnAccountByItself() async throws {
        try await RetentionTests().aWorkerWithAShortRetentionCompactsAnAccountByItselfAndItsViewsStay()
    }

    @Test func anUpgradedDatabaseKeepsEveryView() async throws {
        try await UpgradeTests().anUpgradedDatabaseKeepsEveryViewAndFoldsOnFromIt()
    }

    @Test func accountsTheOldWorkerHadNotFoldedAreFolded() async throws {
        try await UpgradeTests().accountsTheOldWorkerHadNotFoldedAreFoldedAgainByTheMaintenanceTasks()
    }

    /// `migrate` on a coordinator distributes every table: by account_id, all in one colocation
    /// group, the others as reference tables; run again it changes nothing, and a table a later
    /// migration adds is distributed by it too.
    @Test func migrateDistributesAndALaterTableToo() async throws {
        let cluster = try CitusCluster.required()
        let url = try await cluster.emptyDatabase()
        let logger = TestDatabase.shared.logger
        try await Migrator.migrate(url, logger: logger)
        let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await client.withRunning {
            func tables() async throws -> [String: (kind: String, colocation: Int)] {
                let rows = try await client.query("SELECT table_name::text, citus_table_type, colocation_id FROM citus_tables")
                    .decode((String, String, Int).self).collectAll()
                return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, (kind: $0.1, colocation: $0.2)) })
            }
            let first = try await tables()
            let distributed = first.filter { $0.value.kind == "distributed" }
            #expect(distributed.count == 24)
            #expect(first["device_sync"]?.kind == "distributed", "a pull's write stays on its account's shard")
            #expect(Set(distributed.values.map(\.colocation)).count == 1, "one colocation group")
            #expect(first["accounts"]?.kind == "reference" && first["devices"]?.kind == "reference")
            #expect(first.count == 30)

            try await Migrator.migrate(url, logger: logger)
            #expect(try await tables().mapValues(\.kind) == first.mapValues(\.kind))

            let later = Migration(version: 9_001, name: "9001_account_notes",
                                  sql: "CREATE TABLE account_notes (account_id uuid NOT NULL, note text NOT NULL, PRIMARY KEY (account_id, note));")
            let migrator = try Migrator(client: client, logger: logger, migrations: try Migration.bundled() + [later])
            #expect(try await migrator.migrate() == [9_001])
            let after = try await tables()
            #expect(after["account_notes"]?.kind == "distributed")
            #expect(after["account_notes"]?.colocation == distributed.first?.value.colocation)
        }
    }
}
