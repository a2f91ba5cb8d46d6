import Foundation
import PostgresNIO
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
@testable import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

private let logger = TestDatabase.shared.logger

/// A push of the shortcuts this process pushed last for the account folds over the rows that
/// push wrote (`FoldReadCache`), without reading them: they must be the rows a read returns, and
/// never be used once anything else wrote the account.
@Suite struct FoldReadCacheTests {
    /// Random pushes of one account's three devices (donations, deletions, voice shortcuts, app
    /// reports, the learning's forgets and pauses), among which each device often donates again
    /// one of the sets of shortcuts it donated lately. After every push, the rows kept for the
    /// account are those a read for the kept needs returns, with the same head, and the devices'
    /// seqs kept are theirs; and for each of those recent sets that the kept needs hold, the kept
    /// rows narrowed to its needs are those a read for them returns.
    @Test(arguments: [UInt64(1), 2, 3])
    func keptRowsAreTheRowsAReadReturns(seed: UInt64) async throws {
        try await TestDatabase.withClient { client, _ in
            var scenario = Scenario(seed: seed, accounts: 1, devicesPerAccount: 3)
            let account = scenario.devices[0].account
            let (store, cache) = try await storeKeepingRows(of: account, client: client)
            let rows = ProjectionRowStore(tables: .live, logger: logger)
            var random = SeededGenerator(seed: seed)
            typealias Donation = (identifier: String, bundle: String, group: String?)
            var recent: [[Donation]] = []
            var compared = 0, narrowed = 0
            for _ in 0..<240 {
                let index = Int.random(in: scenario.devices.indices, using: &random)
                let pushed: (device: UUID, events: [AcceptedEvent])
                if Bool.random(using: &random), let again = recent.randomElement(using: &random) {
                    var device = scenario.devices[index]
                    let events = again.map { device.donate($0.identifier, bundle: $0.bundle, group: $0.group, at: 1_763_712_100_000) }
                    scenario.devices[index] = device
                    pushed = (device.deviceId, events)
                } else {
                    let (device, events) = scenario.push(maxEvents: 3)
                    pushed = (device.deviceId, events)
                    let donations = events.compactMap { accepted -> Donation? in
                        guard case .donation(let donation) = accepted.event.body else { return nil }
                        return (donation.identifier, donation.bundleId, donation.groupIdentifier)
                    }
                    if donations.count == events.count { recent = Array((recent + [donations]).suffix(6)) }
                }
                try await openDevices(devicesNamed(by: pushed.events), of: account, client: client)
                try await store.append(pushed.events.map(\.event), account: account, device: pushed.device)

                guard let kept = cache.entry(of: account) else { continue }
                try await client.withConnection { connection in
                    let (read, head) = try await rows.readWithHead(account: account, needs: kept.needs, device: pushed.device, on: connection)
                    #expect(read == kept.rows, "seed \(seed): the kept rows are the read's")
                    #expect(head == kept.head, "seed \(seed): the kept head is the read's")
                    var script = DeviceScript(account: account, detail: .full)
                    for donations in recent {
                        let needs = FoldNeeds(events: donations.map { FoldEvent(script.donate($0.identifier, bundle: $0.bundle, group: $0.group, at: 1),
                                                                                version: 1) })
                        guard kept.needs.holds(needs) else { continue }
                        let exact = try await rows.read(account: account, needs: needs, on: connection)
                        #expect(kept.rows.narrowed(to: needs) == exact, "seed \(seed): narrowed to a recent push's needs, the read's rows")
                        narrowed += 1
                    }
                }
                for (device, seq) in kept.deviceSeqs {
                    #expect(try await store.lastAcceptedSeq(account: account, device: device) == seq)
                }
                compared += 1
            }
            // Kept rows were compared, narrowed, and pushes folded over them.
            #expect(compared > 40 && narrowed > 100, "compared \(compared) times, narrowed \(narrowed); \(cache.uses)")
            #expect(cache.uses.kept >= 15, "\(cache.uses)")
        }
    }

    /// A device that donates a few shortcuts in turns reads the rows of each once: the push of a
    /// shortcut not kept reads the kept ones with its own, and the pushes after it fold over them.
    @Test func aDeviceDonatingShortcutsInTurnsReadsEachOnce() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            let (store, cache) = try await storeKeepingRows(of: phone.account, client: client)
            let shortcuts = [("soup-1", nil), ("soup-2", "lunch"), ("soup-3", nil)] as [(String, String?)]
            for round in 0..<4 {
                for (offset, (identifier, group)) in shortcuts.enumerated() {
                    let event = phone.donate(identifier, group: group, at: 10 + Int64(round * 3 + offset))
                    try await store.append([event.event], account: phone.account, device: phone.deviceId)
                    #expect(try await donations(of: identifier, account: phone.account, client: client) == Int64(round) + 1)
                }
            }
            #expect(cache.uses == (kept: 9, read: 3), "\(cache.uses)")
            #expect(try #require(cache.entry(of: phone.account)).needs.shortcuts.count == 3)
        }
    }

    /// Once anything else writes the account (here, a group's row rewritten beside its head, as a
    /// maintenance fold or a rebuild's promotion does), the next push folds over the stored rows,
    /// not the kept ones.
    @Test func aPushAfterAnyOtherWriteOfTheAccountFoldsOverTheStoredRows() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            let (store, cache) = try await storeKeepingRows(of: phone.account, client: client)
            for wall in [10, 20] as [Int64] {
                try await store.append([phone.donate("soup-1", at: wall).event], account: phone.account, device: phone.deviceId)
            }
            #expect(cache.uses == (kept: 1, read: 1), "the second donation folded over the first's rows")
            #expect(try await donations(of: "soup-1", account: phone.account, client: client) == 2)

            try await client.query("""
                UPDATE projection_donation_groups SET donations = 100 WHERE account_id = \(phone.account) AND identifier = 'soup-1'
                """, logger: logger)
            try await client.query("UPDATE account_heads SET folded_version = folded_version WHERE account_id = \(phone.account)", logger: logger)
            try await store.append([phone.donate("soup-1", at: 30).event], account: phone.account, device: phone.deviceId)
            #expect(try await donations(of: "soup-1", account: phone.account, client: client) == 101, "the fold read the stored rows")
            #expect(cache.uses == (kept: 1, read: 2), "the kept rows were refused by the head's mark")

            try await store.append([phone.donate("soup-1", at: 40).event], account: phone.account, device: phone.deviceId)
            #expect(try await donations(of: "soup-1", account: phone.account, client: client) == 102)
            #expect(cache.uses == (kept: 2, read: 2))
        }
    }

    /// Two servers, each with rows of its own kept, take one device's pushes of the same
    /// donation in turns (two on one, one on the other): each push counts once, whichever
    /// server's kept rows were older than the account.
    @Test func twoServersPushingTheSameAccountInTurnsCountEveryDonationOnce() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            let (first, firstCache) = try await storeKeepingRows(of: phone.account, client: client)
            var second = PostgresEventStore(client: client, logger: logger)
            let secondCache = FoldReadCache()
            second.readCache = secondCache
            for push in 0..<24 {
                let store = push % 3 == 2 ? second : first
                try await store.append([phone.donate("soup-1", at: 10 + Int64(push)).event], account: phone.account, device: phone.deviceId)
                #expect(try await donations(of: "soup-1", account: phone.account, client: client) == Int64(push) + 1, "push \(push)")
            }
            // The first server's second push in a row skipped its read; every push after the
            // other server's read the rows again.
            #expect(firstCache.uses == (kept: 8, read: 8), "\(firstCache.uses)")
            #expect(secondCache.uses == (kept: 0, read: 8), "\(secondCache.uses)")
        }
    }

    /// A rebuild's promotion replaces every row and leaves every current head's versions as they
    /// were: it writes every head all the same, so that rows kept from before it are not used.
    @Test func aPromotionWritesEveryHead() async throws {
        try await TestDatabase.withClient { client, _ in
            var phone = DeviceScript(account: UUID(), detail: .full)
            let (store, cache) = try await storeKeepingRows(of: phone.account, client: client)
            try await store.append([phone.donate("soup-1", at: 10).event], account: phone.account, device: phone.deviceId)
            let before = try #require(cache.entry(of: phone.account)).head
            let projections = ProjectionStore(client: client, logger: logger)
            _ = try await projections.rebuilder.rebuild()
            try await projections.rebuilder.promote()
            let after = try await headMark(of: phone.account, client: client)
            #expect(before.mark != after)
            #expect(try await projections.head(account: phone.account) == (1, 1), "the versions stay")
            try await store.append([phone.donate("soup-1", at: 20).event], account: phone.account, device: phone.deviceId)
            #expect(cache.uses.kept == 0, "\(cache.uses)")
            #expect(try await donations(of: "soup-1", account: phone.account, client: client) == 2)
        }
    }

    /// At most `capacity` accounts are kept.
    @Test func atMostItsCapacityOfAccountsIsKept() async throws {
        try await TestDatabase.withClient { client, _ in
            let cache = FoldReadCache(capacity: 2)
            var store = PostgresEventStore(client: client, logger: logger)
            store.readCache = cache
            for _ in 0..<4 {
                var phone = DeviceScript(account: UUID(), detail: .full)
                try await openAccount(phone.account, client: client)
                try await store.append([phone.donate("soup-1", at: 10).event], account: phone.account, device: phone.deviceId)
                #expect(cache.entry(of: phone.account) != nil, "the last account pushed is kept")
            }
            #expect(cache.count == 2)
        }
    }
}

/// What is kept stays small, whatever the account holds: an entry that weighs more than
/// `maximumWeight` rows and sums is not kept, and takes the place of none.
@Test func anEntryTooHeavyIsNotKept() {
    let cache = FoldReadCache()
    var phone = DeviceScript(account: UUID(), detail: .full)
    func entry(donating count: Int) -> FoldReadCache.Entry {
        let events = (0..<count).map { FoldEvent(phone.donate("soup-\($0)", at: 10), version: Int64($0) + 1) }
        return FoldReadCache.Entry(head: AccountHead(version: 1, foldedVersion: 1, deviceLastSeq: 1, mark: "1"), needs: FoldNeeds(events: events),
                                   rows: AccountFoldRows(), deviceSeqs: [phone.deviceId: 1])
    }
    // Each donation of a shortcut of its own needs its groups, its forget and the deletion marks
    // that select it (its identifier's and its app's, the app's shared by all of them).
    let light = entry(donating: 3), heavy = entry(donating: FoldReadCache.maximumWeight / 2)
    #expect(light.weight == 3 + 3 + 4 + 1, "three shortcuts, their forgets, three identifiers' marks and the app's, one device")
    #expect(heavy.weight == 128 + 128 + 129 + 1)
    cache.keep(light, for: phone.account)
    #expect(cache.entry(of: phone.account) != nil)
    cache.keep(heavy, for: phone.account)
    #expect(cache.entry(of: phone.account) == nil, "the heavy entry is not kept, and the light one it followed is gone")
    cache.keep(heavy, for: UUID())
    #expect(cache.count == 0)
}

/// A store with a cache of its own, and `account` opened.
private func storeKeepingRows(of account: UUID, client: PostgresClient) async throws -> (PostgresEventStore, FoldReadCache) {
    try await openAccount(account, client: client)
    var store = PostgresEventStore(client: client, logger: logger)
    let cache = FoldReadCache()
    store.readCache = cache
    return (store, cache)
}

private func donations(of identifier: String, account: UUID, client: PostgresClient) async throws -> Int64 {
    try await client.query("""
        SELECT sum(donations)::int8 FROM projection_donation_groups WHERE account_id = \(account) AND identifier = \(identifier)
        """, logger: logger).decode(Int64.self).collectAll().first ?? 0
}

private func headMark(of account: UUID, client: PostgresClient) async throws -> String {
    try await client.query("SELECT h.xmin::text || '/' || h.promotions FROM account_heads h WHERE h.account_id = \(account)", logger: logger)
        .decode(String.self).collectAll().first ?? ""
}
