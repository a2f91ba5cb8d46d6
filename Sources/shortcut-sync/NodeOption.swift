import ArgumentParser
import Foundation
import ShortcutSyncStore

/// `--node`: on a Citus cluster, the node a `serve` or `worker` process is attached to.
struct NodeOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Citus only (env SHORTCUT_SYNC_NODE): the node, as pg_dist_node names it (host:port), that this process's pushes, pulls and folds run on, with --database-url's user, password and database; --database-url stays the coordinator (migrations). Without it, everything runs on --database-url. Either way the process listens on every node.",
        valueName: "host:port"))
    var node: String?

    @Flag(name: .long, help: ArgumentHelp(
        "Citus only (env SHORTCUT_SYNC_ROUTE_BY_ACCOUNT=1): send each account's pushes and pulls to the worker that holds its shards, over a pool on every worker, instead of to --node (or --database-url), which forwards those of accounts held elsewhere."))
    var routeByAccount = false

    /// Whether `--route-by-account` (or `SHORTCUT_SYNC_ROUTE_BY_ACCOUNT=1`) was given.
    func routesByAccount(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        routeByAccount || ["1", "true", "yes"].contains(environment["SHORTCUT_SYNC_ROUTE_BY_ACCOUNT"]?.lowercased() ?? "")
    }

    /// The node's URL of `database`, if one was given (`--node` or `SHORTCUT_SYNC_NODE`).
    func url(of database: DatabaseURL, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> DatabaseURL? {
        guard let given = node ?? environment["SHORTCUT_SYNC_NODE"], !given.isEmpty else { return nil }
        return try database.onNode(given)
    }
}
