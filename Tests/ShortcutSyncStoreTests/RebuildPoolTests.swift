import Foundation
import PostgresNIO
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncTestSupport
import Testing

/// A rebuild's ranges each stream on one connection and write on a second: on a pool with fewer
/// connections than the ranges need, they take turns instead of each holding one and waiting for
/// a second (a test's verify on a pool of two once waited for ever so, with no statement running).
@Suite struct RebuildPoolTests {
    @Test func aRebuildOnAPoolOfTwoConnectionsEndsAndMatches() async throws {
        try await TestDatabase.withClient(maximumConnections: 2) { client, _ in
            let store = PostgresEventStore(client: client, logger: TestDatabase.shared.logger)
            for number in 0..<8 {
                let account = UUID(), device = UUID()
                try await openAccount(account, client: client)
                try await openDevices([device], of: account, client: client)
                let events = (1...3).map { seq in
                    Event(seq: Int64(seq), hlc: HLCTimestamp(wallMillis: 1_764_000_000_000 + Int64(seq), counter: 0),
                          body: .donation(Donation(bundleId: "com.example.soup", identifier: "soup-\(number)-\(seq)", kind: .intent,
                                                   intentType: "OrderIntent", title: "Soup \(seq)")))
                }
                #expect(try await store.append(events, account: account, device: device).appended == 3)
            }
            try await ProjectionStore(client: client, logger: TestDatabase.shared.logger).foldAll()
            var rebuilder = ProjectionRebuilder(client: client, logger: TestDatabase.shared.logger)
            rebuilder.partitions = 4
            for _ in 0..<3 {
                let verified = try await rebuilder.verify()
                #expect(verified.accountsCompared == 8 && verified.differences.isEmpty, "\(verified.differences.prefix(3))")
            }
        }
    }
}
