import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ShortcutSyncAPI
import ShortcutSyncApp
@testable import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncTestSupport
import Testing

/// How fresh the views are where devices see them (issue 33): a push's commit to a stream's poke,
/// on this server and on another (the commit's time rides in the notification), and to the
/// first pull that includes it; on `/readyz` as p50/p99 and on `/metrics` as histograms.
@Suite struct FreshnessTests {
    @Test func aPushsFreshnessIsMeasuredWhereItsStreamsAndPullsAre() async throws {
        try await TestServer.with { first in
            try await TestServer.with(database: first.database, sql: first.sql, runsWorker: false, configure: { $0.runsWaker = false }) { second in
                let account = try await first.createAccount()
                let phone = try await first.createDevice(accountToken: account.token)
                let pad = try await first.createDevice(accountToken: account.token, name: "iPad", platform: .iPadOS)
                let mac = try await first.createDevice(accountToken: account.token, name: "Mac", platform: .macOS)
                let padStream = try await StreamTests.open(first, token: pad.token)   // the pushing server's
                let macStream = try await StreamTests.open(second, token: mac.token)  // another server's
                let (padRecorder, macRecorder) = (StreamRecorder(), StreamRecorder())
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await padRecorder.record(padStream) }
                    group.addTask { try await macRecorder.record(macStream) }
                    for recorder in [padRecorder, macRecorder] {
                        #expect(try await recorder.wait { $0.contains(": keep-alive") }.contains(": keep-alive"))
                    }
                    phone.record(EndToEndTests.donation("tomato"), at: Int64(Date().timeIntervalSince1970 * 1000))
                    let version = try await phone.push()
                    for recorder in [padRecorder, macRecorder] {
                        #expect(try await recorder.wait { $0.contains("{\"version\": \(version)}") }.contains("{\"version\": \(version)}"))
                    }
                    try await eventually("both servers measured their stream's poke") {
                        let here = try await Self.figures(first, "stream")
                        let there = try await Self.figures(second, "stream")
                        return here != nil && there != nil
                    }
                    group.cancelAll()
                }
                #expect(try await Self.figures(second, "pull") == nil, "nobody pulled there yet")
                let firstPull = try await second.raw(.GET, "/v1/sync/pull", token: mac.token)
                #expect(firstPull.status == 200)
                let cursor = try #require(firstPull.json["cursor"] as? String)
                let pulled = try #require(try await Self.figures(second, "pull"))
                #expect(pulled["samples"] as? Int == 1)
                #expect((pulled["p99Millis"] as? Int ?? -1) >= 0)
                // Pulled again, nothing new is included: no second sample.
                let query = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor
                #expect(try await second.raw(.GET, "/v1/sync/pull?cursor=\(query)", token: mac.token).status == 200)
                #expect(try await Self.figures(second, "pull")?["samples"] as? Int == 1)

                let metrics = try await Self.metrics(second)
                for name in ["shortcut_sync_freshness_stream_seconds_count", "shortcut_sync_freshness_pull_seconds_count"] {
                    let count = metrics.split(separator: "\n").first { $0.hasPrefix(name) }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
                    #expect((count ?? 0) >= 1, "\(name) on /metrics")
                }
            }
        }
    }

    /// `/readyz`'s figures of `kind` (`stream`, `pull`), nil while there is none.
    static func figures(_ server: TestServer, _ kind: String) async throws -> [String: Any]? {
        let ready = try await server.operators("/readyz")
        return (ready.json["freshness"] as? [String: Any])?[kind] as? [String: Any]
    }

    static func metrics(_ server: TestServer) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.operatorURL.absoluteString + "/metrics"), timeout: .seconds(10))
        return String(buffer: try await response.body.collect(upTo: 1 << 22))
    }

    @Test func theWindowsPercentilesAreOfItsLastMinutesOnly() throws {
        let window = FreshnessWindow(capacity: 200, span: 60_000)
        #expect(window.percentiles(now: 1_000) == nil)
        for index in 1...100 { window.record(Int64(index), at: 10_000) }
        let figures = try #require(window.percentiles(now: 20_000))
        #expect(figures.p50 == 50 && figures.p99 == 99 && figures.samples == 100)
        window.record(5_000, at: 80_000)
        #expect(window.percentiles(now: 80_000)?.samples == 1, "the older samples are past the span")
        for index in 0..<500 { window.record(Int64(index), at: 90_000) }
        #expect(window.percentiles(now: 90_000)?.samples == 200, "no more than its capacity")
    }
}
