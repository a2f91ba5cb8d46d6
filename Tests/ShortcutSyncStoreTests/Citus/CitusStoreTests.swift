import Foundation
import ShortcutSyncDatabaseTestSupport
import Testing

/// The push's rows kept between pushes (`FoldReadCache`) on a real Citus cluster (`CitusCluster`):
/// the head's mark is the shard row's `xmin` on its worker, read and checked through the
/// coordinator. The suites of one PostgreSQL, run unchanged on a database of the cluster, with
/// their exact counts of pushes folded over kept rows and over read ones: a statement the cluster
/// refused would send the push the locking way and break them. Skipped, with one line, where
/// Citus is not installed.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusStoreTests {
    @Test func aPushAfterAnyOtherWriteFoldsOverTheStoredRows() async throws {
        try await FoldReadCacheTests().aPushAfterAnyOtherWriteOfTheAccountFoldsOverTheStoredRows()
    }

    @Test func twoServersCountEveryDonationOnce() async throws {
        try await FoldReadCacheTests().twoServersPushingTheSameAccountInTurnsCountEveryDonationOnce()
    }

    @Test func aDeviceDonatingShortcutsInTurnsReadsEachOnce() async throws {
        try await FoldReadCacheTests().aDeviceDonatingShortcutsInTurnsReadsEachOnce()
    }

    @Test func aPromotionWritesEveryHead() async throws {
        try await FoldReadCacheTests().aPromotionWritesEveryHead()
    }

    @Test(arguments: [UInt64(1)])
    func keptRowsAreTheRowsAReadReturns(seed: UInt64) async throws {
        try await FoldReadCacheTests().keptRowsAreTheRowsAReadReturns(seed: seed)
    }
}
