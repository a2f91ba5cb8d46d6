import Foundation
import ShortcutSyncDatabaseTestSupport
import Testing

/// The operators' commands on a real Citus cluster (`CitusCluster`): the suites of one
/// PostgreSQL, run unchanged on a database of the cluster. Skipped, with one line, where Citus is
/// not installed.
@Suite(.serialized, .enabled(if: CitusCluster.suitesRun, CitusCluster.notInstalled), .citusCluster)
struct CitusAdminTests {
    @Test func accountsAndDevicesAreListed() async throws {
        try await AdminQueryTests().accountsAndDevicesAreListedWithWhatTheyPushedAndReported()
    }

    @Test func statusShowsTheAccountsBehindAndParked() async throws {
        try await AdminQueryTests().statusShowsTheAccountsBehindAndParkedAndTheEpoch()
    }

    @Test func eventsAreListed() async throws {
        try await AdminQueryTests().eventsAreListedByDeviceTypeAndVersion()
    }

    @Test func verifyFindsARowChangedByHand() async throws {
        try await AdminMaintenanceTests().verifyFindsAProjectionRowChangedByHand()
    }

    @Test func aRebuildWhilePushesGoOnEndsEqualToTheFold() async throws {
        try await AdminMaintenanceTests().aRebuildWhilePushesGoOnEndsEqualToTheFold()
    }

    @Test func exportAndImport() async throws {
        try await AdminMaintenanceTests().anExportImportedElsewhereGivesTheSameViewsAndASecondImportAddsNothing()
    }

    @Test func aCompactedAccountImportedElsewhereFoldsAsItWas() async throws {
        try await CompactedArchiveTests().aCompactedAccountImportedElsewhereFoldsAsItWas()
    }

    @Test func aCompactedFileIntoAnotherHistoryIsRefused() async throws {
        try await CompactedArchiveTests().aCompactedFileIntoAnotherHistoryIsRefusedAndChangesNothing()
    }

    @Test func aBrokenSnapshotLineIsNamed() async throws {
        try await CompactedArchiveTests().aBrokenSnapshotLineIsNamedAndNothingIsStored()
    }

    @Test func erasureLeavesNoRow() async throws {
        try await AdminMaintenanceTests().erasureLeavesNoRowOfTheAccountAnywhereAndVerifyPasses()
    }

    @Test func aRebuildDoesNotBringAnErasedAccountBack() async throws {
        try await AdminMaintenanceTests().aRebuildThatReadAnAccountBeforeItsErasureDoesNotBringItBack()
    }
}
