import CoreMetrics
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
        .ok(.init(body: .json(.init(status: "ok"))))
    }

    /// Ready when the database answers and every migration is applied; reports the worker's lag,
    /// and `degraded` (still 200: the service answers, its views are behind) past the threshold.
    /// While the database is known to be away it answers at once, and within moments of its going
    /// when it was waiting on it (`DatabaseReach`). What it learns from the database is at most a
    /// second old (`RecentValue`): a stranger polling it costs no query per request.
    func ready(_ input: Operations.Ready.Input) async throws -> Operations.Ready.Output {
        var readiness = Components.Schemas.Readiness(ready: false, database: false, migrations: false)
        guard hub.reach.isReachable else {
            readiness.detail = "the database is unreachable"
            return .serviceUnavailable(.init(body: .json(readiness)))
        }
        do {
            let (upToDate, status, nodesAway) = try await readinessReading()
            readiness.migrations = upToDate
            readiness.database = true
            let awayDetail = "the cluster's node(s) \(nodesAway.joined(separator: ", ")) do not answer: the accounts whose shards they hold are answered 503 until they are back, the others are served"
            if !nodesAway.isEmpty {
                // Still ready: every account whose shards are elsewhere is served.
                readiness.nodesAway = nodesAway
                readiness.degraded = true
            }
            if let status {
                readiness.accountsBehind = status.accountsBehind
                readiness.eventsBehind = status.eventsBehind
                readiness.parkedAccounts = status.parkedAccounts
                readiness.degraded = status.eventsBehind > degradedLag || status.parkedAccounts > 0 || !nodesAway.isEmpty
                if status.parkedAccounts > 0 {
                    readiness.detail = "\(status.parkedAccounts) account(s) could not be folded and are parked; the maintenance tasks retry them (see the log)"
                } else if !nodesAway.isEmpty {
                    readiness.detail = awayDetail
                } else if status.eventsBehind > degradedLag {
                    readiness.detail = "\(status.accountsBehind) account(s) are \(status.eventsBehind) events behind their versions, waiting for the maintenance tasks (degraded above \(degradedLag))"
                }
            } else if !upToDate {
                readiness.detail = "the schema is not up to date; run shortcut-sync migrate"
            } else {
                readiness.detail = awayDetail
            }
        } catch {
            readiness.detail = "the database is unreachable"
            logger.log(level: .warning, "readiness check failed", error: error)
        }
        // Still ready: every request is served; what the node announces is not heard meanwhile.
        let notListening = hub.nodesNotListening
        if !notListening.isEmpty {
            readiness.nodesNotListening = notListening
            readiness.degraded = true
            if readiness.detail == nil {
                readiness.detail = "this server's LISTEN on the cluster's node(s) \(notListening.joined(separator: ", ")) is not in place (it reconnects): pokes, sign-outs and rotations announced there are not heard until it is"
            }
        }
        readiness.ready = readiness.database && readiness.migrations
        let at = now()
        func figures(_ window: FreshnessWindow) -> Components.Schemas.FreshnessFigures? {
            window.percentiles(now: at).map { .init(p50Millis: $0.p50, p99Millis: $0.p99, samples: $0.samples) }
        }
        readiness.freshness = .init(stream: figures(hub.freshness.stream), pull: figures(hub.freshness.pull))
        // Wakes never make the service unready: pushes and pulls go on without them.
        let wakes = wakes()
        readiness.wakes = wakes.word
        if let reason = wakes.keyRefusal, readiness.detail == nil {
            readiness.detail = "APNs refused the provider token (\(reason)): no background wake can be sent; check the APNs key, key id and team id"
        }
        return readiness.ready ? .ok(.init(body: .json(readiness))) : .serviceUnavailable(.init(body: .json(readiness)))
    }

    /// Prometheus text. What the alerts watch (deploy/prometheus/alerts.yml) is read here, at
    /// most once a second whoever scrapes (the same cached reading as `/readyz`): whether the
    /// database answers, the accounts behind and parked.
    /// Whether the schema is up to date and, if it is, the maintenance status: asked of the
    /// database at most once a second, however often anyone asks (`RecentValue`).
    private func readinessReading() async throws -> (upToDate: Bool, status: MaintenanceStatus?, nodesAway: [String]) {
        let (migrator, projections, reach) = (migrator, projections, hub.reach)
        return try await readiness.value {
            try await reach.whileReachable {
                // On Citus, the nodes that do not answer (`ProjectionStore.nodesAway`); none on one
                // PostgreSQL. Asked first: while one is away, the counts over every shard fail,
                // and the answer is then the nodes away without the counts.
                let nodesAway = try await projections.nodesAway()
                let upToDate = try await migrator.isUpToDate()
                guard upToDate else { return (false, nil, nodesAway) }
                guard nodesAway.isEmpty else { return (true, try? await projections.status(), nodesAway) }
                return (true, try await projections.status(), nodesAway)
            }
        }
    }

    func metrics(_ input: Operations.Metrics.Input) async throws -> Operations.Metrics.Output {
        let reachable = hub.reach.isReachable
        ServerMetrics.databaseReachable.record(reachable ? 1 : 0)
        if reachable, let (_, status, _) = try? await readinessReading(), let status {
            ServerMetrics.accountsBehind.record(status.accountsBehind)
            ServerMetrics.eventsBehind.record(status.eventsBehind)
            ServerMetrics.parkedAccounts.record(status.parkedAccounts)
        }
        ServerMetrics.openStreams.record(hub.streamCount)
        ServerMetrics.waitingPulls.record(hub.waitingPullCount)
        ServerMetrics.pushesUnderWay.record(pushesInFlight.total)
        return .ok(.init(body: .plainText(.init(ServerMetrics.registry.emitToString()))))
    }
}
