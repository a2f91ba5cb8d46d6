import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// A push of donations alone reads its rows with a smaller statement than every other batch
/// (`DonationReadStatement`); it must read exactly the rows and head that the whole read
/// (`FoldReadStatement`) reads for the same batch, whatever the account holds: groups, deletion
/// marks of every scope, shortcuts' forgets, voice shortcuts bound to the donated shortcuts.
@Suite struct DonationReadTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func theDonationReadReadsWhatTheWholeReadReadsForTheSameBatch(seed: UInt64) async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: seed, accounts: 1, devicesPerAccount: 3)
            let account = scenario.devices[0].account
            try await openAccount(account, client: client)
            try await openDevices(scenario.devices.map(\.deviceId), of: account, client: client)
            let store = PostgresEventStore(client: client, logger: logger)
            for _ in 0..<60 {
                let (device, events) = scenario.push()
                try await store.append(events.map(\.event), account: account, device: device.deviceId)
            }
            // Whatever the seed made: voice shortcuts bound to shortcuts the reads below donate,
            // and a forgotten shortcut, so that every part of both reads has rows to find.
            var phone = scenario.devices[0]
            let bound = [phone.addVoice(UUID(), phrase: "Soup one", to: "item-1", at: 1_763_712_100_000),
                         phone.addVoice(UUID(), phrase: "Tea four", to: "item-4", bundle: "com.example.tea", at: 1_763_712_100_001),
                         phone.forget(.shortcut(ShortcutID(bundleId: "com.example.soup", identifier: "item-2")), at: 1_763_712_100_002)]
            try await store.append(bound.map(\.event), account: account, device: phone.deviceId)

            let rows = ProjectionRowStore(tables: .live, logger: logger)
            var compared = 0, withGroups = 0, withVoices = 0, withMarks = 0, withForgets = 0
            for attempt in 0..<40 {
                // Donations alone, of shortcuts the account holds and of some it never saw.
                var batch: [FoldEvent] = []
                for offset in 0..<(1 + attempt % 4) {
                    let bundle = ["com.example.soup", "com.example.tea", "com.example.maps"][(attempt + offset) % 3]
                    let group = offset % 2 == 0 ? nil : "group-\(attempt % 2)"
                    let donation = phone.donate("item-\((attempt * 7 + offset) % 6)", bundle: bundle, group: group, at: 1_763_712_200_000)
                    batch.append(FoldEvent(donation, version: Int64(1_000 + batch.count)))
                }
                let needs = FoldNeeds(events: batch)
                #expect(DonationReadStatement.covers(needs))
                try await client.withConnection { connection in
                    let whole = try await rows.read(FoldReadStatement<LiveProjectionTables>(account: account, needs: needs, device: phone.deviceId),
                                                    on: connection)
                    let donations = try await rows.read(DonationReadStatement(account: account, needs: needs, device: phone.deviceId),
                                                        on: connection)
                    #expect(donations.rows == whole.rows, "seed \(seed), attempt \(attempt)")
                    #expect(donations.head == whole.head, "seed \(seed), attempt \(attempt)")
                    #expect(whole.head?.deviceLastSeq ?? 0 > 0)
                    if !whole.rows.groups.isEmpty { withGroups += 1 }
                    if !whole.rows.voiceShortcuts.isEmpty { withVoices += 1 }
                    if !whole.rows.marks.isEmpty { withMarks += 1 }
                    if whole.rows.learning != LearningRules() { withForgets += 1 }
                }
                compared += 1
            }
            // The comparison is of rows that are there, not of empty answers.
            #expect(compared == 40)
            #expect(withGroups > 0 && withVoices > 0 && withMarks > 0 && withForgets > 0,
                    "groups in \(withGroups), voice shortcuts in \(withVoices), marks in \(withMarks), forgets in \(withForgets) of 40 reads")
        }
    }

    /// What the smaller statement does not read, it does not claim to cover.
    @Test func everyOtherBatchTakesTheWholeRead() {
        var phone = DeviceScript(account: UUID(), detail: .full)
        let others: [AcceptedEvent] = [
            phone.delete(.groupIdentifier("group-1"), at: 10),
            phone.delete(.all, at: 11),
            phone.addVoice(UUID(), phrase: "Soup time", to: "soup-1", at: 12),
            phone.updateVoice(UUID(), phrase: "Soup now", at: 13),
            phone.deleteVoice(UUID(), at: 14),
            phone.report(["com.example.soup"], at: 15),
            phone.forget(.account, at: 16),
            phone.pause(.account, at: 17),
        ]
        for event in others {
            let needs = FoldNeeds(events: [phone.donate("soup-1", at: 9), event].map { FoldEvent($0, version: 1) })
            #expect(!DonationReadStatement.covers(needs), "\(event.event.body)")
        }
        #expect(DonationReadStatement.covers(FoldNeeds(events: [FoldEvent(phone.donate("soup-2", at: 20), version: 1)])))
    }
}
