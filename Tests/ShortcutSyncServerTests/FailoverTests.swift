import EmbeddedPostgres
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ShortcutSyncChildProcess
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDatabaseTestSupport
import ShortcutSyncDomain
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A failover to a standby (issue 64, item 3; docs/operating.md, "A failover to a standby"): a
/// real streaming-replication standby (`pg_basebackup -R`, asynchronous), the primary killed and
/// the standby promoted behind the address the service connects to, as a cloud endpoint or a
/// virtual IP moves. The last acknowledged commits never reached the standby (its replication
/// was cut before them). The service reaches the new primary within 30 s without a restart, and
/// what the standby lacks comes back from the devices: every view ends as the fold of every
/// change any device made, and `admin verify` is clean.
@Suite(.serialized) struct FailoverTests {
    static let logger = TestDatabase.shared.logger

    @Test func afterAFailoverTheServiceFollowsAndTheDevicesGiveBackWhatTheStandbyLacks() async throws {
        try await withScratchCluster("failover-primary") { primaryCluster, primaryDirectory, primary in
            let standbyDirectory = URL(fileURLWithPath: "/tmp").appendingPathComponent("shortcut-sync-failover-standby-\(UUID().uuidString.prefix(8))")
            let standby = EmbeddedPostgres(dataDirectory: standbyDirectory, logger: Self.logger)
            defer {
                Postmaster.quit(dataDirectory: standbyDirectory)
                try? FileManager.default.removeItem(at: standbyDirectory)
            }
            let direct = try DatabaseURL(primary.url(database: "failover"))
            try await direct.createDatabaseIfMissing(logger: Self.logger)
            try await standby.makeStandby(of: primary)
            let standbyConnection = try await standby.start()
            let proxy = try await NetworkFaultProxy(port: primary.port)
            var proxied = direct
            proxied.port = proxy.port
            do {
                try await Self.drill(primary: primaryCluster, primaryDirectory: primaryDirectory, standby: standby, standbyConnection: standbyConnection,
                                     proxy: proxy, url: proxied)
            } catch {
                await proxy.stop()
                await standby.stop()
                throw error
            }
            await proxy.stop()
            await standby.stop()
        }
    }

    private static func drill(primary: EmbeddedPostgres, primaryDirectory: URL, standby: EmbeddedPostgres, standbyConnection: EmbeddedPostgres.Connection,
                              proxy: NetworkFaultProxy, url: DatabaseURL) async throws {
        let standbyURL = try DatabaseURL(standbyConnection.url(database: "failover"))
        let storages = (0..<3).map { _ in ClientLibraryTests.storage() }
        defer { for storage in storages { try? FileManager.default.removeItem(atPath: storage) } }
        let sql = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await sql.withRunning {
            try await TestServer.with(database: url, sql: sql) { server in
                let account = try await server.createAccount()
                var devices: [(id: UUID, client: ShortcutSyncClient)] = []
                for (name, platform) in [("iPhone", Components.Schemas.Platform.iOS), ("iPad", .iPadOS), ("Mac", .macOS)] {
                    let device = try await server.createDevice(accountToken: account.token, name: name, platform: platform)
                    devices.append((device.id, try ClientLibraryTests.client(server, token: device.token, storage: storages[devices.count])))
                }
                let (phone, pad, mac) = (devices[0].client, devices[1].client, devices[2].client)
                try await phone.donate(ClientLibraryTests.soup("tomato"))
                try await pad.donate(ClientLibraryTests.soup("leek"))
                try await mac.donate(ClientLibraryTests.soup("pea"))
                for device in devices { try await device.client.sync() }
                let head = try await Self.headVersion(sql, account: account.id)
                // The standby has all of that, then replicates no more: what follows is
                // acknowledged by the primary alone, as the last commits before a crash are
                // under asynchronous replication.
                try await eventually("the standby has the account's head", timeout: .seconds(30)) {
                    (try? await Self.headVersion(standbyURL, account: account.id)) == head
                }
                try await Self.cutReplication(standbyURL)
                try await pad.deleteDonations(withIdentifiers: ["leek"])
                try await phone.donate(ClientLibraryTests.soup("tomato"))
                try await mac.donate(ClientLibraryTests.soup("bean"))
                for device in devices { try await device.client.sync() }
                for device in devices { #expect(try await device.client.pendingCount() == 0, "every change acknowledged") }
                let everyChange = Set(try await Self.log(sql, account: account.id).map(\.accepted))
                #expect((try await Self.headVersion(standbyURL, account: account.id)) == head, "the standby lacks the last commits")

                // The primary dies; the standby is promoted behind the service's address.
                let postmaster = try #require(Postmaster.running(dataDirectory: primaryDirectory))
                kill(postmaster, SIGKILL)
                #expect(try await CommandProcess.waitUntilEnded(postmaster))
                await primary.stop()
                try await standby.promote()
                proxy.forward(toPort: standbyConnection.port)
                let promoted = ContinuousClock.now

                // Ready within 30 s, with no restart.
                try await eventually("the service is ready on the promoted standby within 30 s", timeout: .seconds(30)) {
                    (try? await sendRequest(.GET, server.operatorURL.absoluteString + "/readyz", token: nil, timeout: .seconds(2)))?.status == 200
                }
                let ready = ContinuousClock.now - promoted
                #expect(ready < .seconds(30), "ready \(ready) after the promotion")
                print("FailoverTests: ready \(ready) after the standby's promotion")

                // A change made meanwhile, then every device back: they give back what the standby lacks.
                let madeAfter = try await mac.donate(ClientLibraryTests.soup("miso"))
                try await eventually("every device syncs with the new primary", timeout: .seconds(30)) {
                    for device in devices { guard (try? await device.client.sync()) != nil else { return false } }
                    return true
                }
                for device in devices { try await device.client.sync() }
                let log = try await Self.log(sql, account: account.id)
                let events = log.map(\.accepted)
                #expect(everyChange.isSubset(of: Set(events)), "every acknowledged change is stored again, as it was made")
                #expect(Set(events.map(\.event.id)).subtracting(everyChange.map(\.event.id)) == [madeAfter])
                let expected = AccountState(folding: events)
                for device in devices {
                    #expect(await device.client.currentView == expected.view(forDevice: device.id))
                    #expect(try await device.client.pendingCount() == 0)
                }
                #expect(await phone.shortcuts().map(\.identifier) == ["bean", "miso", "pea", "tomato"])
                let verification = try await ProjectionRebuilder(client: sql, logger: logger).verify()
                #expect(verification.differences.isEmpty, "verify after the failover: \(verification.differences)")
            }
        }
    }

    private static func headVersion(_ client: PostgresClient, account: UUID) async throws -> Int64? {
        try await client.query("SELECT version FROM account_heads WHERE account_id = \(account)", logger: logger)
            .decode(Int64.self).collectAll().first
    }

    private static func headVersion(_ url: DatabaseURL, account: UUID) async throws -> Int64? {
        try await url.withSingleConnection(logger: logger) { connection in
            try await connection.guardedQuery("SELECT version FROM account_heads WHERE account_id = \(account)", logger: logger)
                .decode(Int64.self).collectAll().first
        }
    }

    /// The standby stops receiving the primary's WAL (its `primary_conninfo` emptied, read again).
    private static func cutReplication(_ standby: DatabaseURL) async throws {
        try await standby.with(database: "postgres").withSingleConnection(logger: logger) { connection in
            try await connection.guardedQuery("ALTER SYSTEM SET primary_conninfo = ''", logger: logger)
            try await connection.guardedQuery("SELECT pg_reload_conf()", logger: logger)
        }
        try await eventually("the standby's WAL receiver stopped", timeout: .seconds(30)) {
            let receivers = try? await standby.with(database: "postgres").withSingleConnection(logger: logger) { connection in
                try await connection.guardedQuery("SELECT count(*) FROM pg_stat_wal_receiver", logger: logger).decode(Int64.self).collectAll().first
            }
            return receivers == 0
        }
    }

    private static func log(_ client: PostgresClient, account: UUID) async throws -> [RecordedEvent] {
        try await PostgresEventStore(client: client, logger: logger).readStream(account: account, after: 0, limit: 100_000)
    }
}
