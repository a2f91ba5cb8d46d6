import Crypto
import Foundation
import Logging
import PostgresNIO

/// A function made and distributed by the migrator on a Citus coordinator (`DistributedFunctions`):
/// its base name, its parameters' types and its body; its name holds a digest of the body.
protocol DistributedFunction {
    /// The name without its digest, with which the body is made for the digest.
    static var base: String { get }
    /// This build's name (`named()`, kept: every call names it).
    static var name: String { get }
    /// The parameters' types as SQL names, in order.
    static var parameterTypes: [String] { get }
    /// `CREATE OR REPLACE FUNCTION` of the function named `name`.
    static func definition(named name: String) -> PostgresQuery
}

extension DistributedFunction {
    /// The name of this build's body (`DistributedFunctions.named`).
    static func named() -> String { DistributedFunctions.named(base, by: definition(named: base)) }

    /// The function's signature, as `create_distributed_function` takes it.
    static var signature: String { signature(named: name) }

    static func signature(named name: String) -> String { "public.\(name)(\(parameterTypes.joined(separator: ", ")))" }

    static var definition: PostgresQuery { definition(named: name) }
}

/// The functions a Citus coordinator's migrate makes and distributes by their first parameter,
/// the account, with the accounts' tables: the push's write, the pull's record, the push's read,
/// the common pull and the maintenance fold's write.
enum DistributedFunctions {
    /// `base` with the first 12 hex digits of SHA-256 of `definition`'s text (made with `base`
    /// as its name): each build's body has a name of its own, so that servers of two builds
    /// side by side (a rolling upgrade) each call their own, and none replaces the other's.
    /// The functions of builds no server runs any more stay, unused, until dropped by hand.
    static func named(_ base: String, by definition: PostgresQuery) -> String {
        base + "_" + SHA256.hash(data: Data(definition.sql.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// Each function's own settings, written in its definition (`CREATE FUNCTION … SET`): its
    /// statements are planned with their values at every run (`plan_cache_mode =
    /// force_custom_plan`), in whatever session runs it, a server's or Citus's own on the worker
    /// a call is sent to. Citus 13.2 makes a fast-path statement's plan for the local shard again
    /// at every run of a generic plan whose account is a parameter (it looks for the plan it made
    /// before in a plan that has no task, and never finds it) and keeps every one it made in the
    /// cached plan: about 35 KB a statement run, so a worker's session that ran pushes for a day
    /// held gigabytes. A plan made with the values is made once a run and freed with it
    /// (docs/citus.md, "A worker's sessions held every plan they made";
    /// `CitusFastPathTests.aWorkersSessionKeepsItsSizeThroughPushesAndPulls`).
    static let settings = "SET plan_cache_mode = force_custom_plan"

    static let all: [any DistributedFunction.Type] = [PushWriteFunction.self, RecordPullFunction.self, FoldReadFunction.self, PullFunction.self,
                                                      FoldWriteFunction.self]

    /// Creates or replaces each function and distributes it. Citus propagates a new function to
    /// every node by itself, as an object without a distribution argument: one without one is
    /// distributed here.
    static func install(on connection: PostgresConnection, logger: Logger) async throws {
        for function in all {
            let signature = function.signature
            try await connection.guardedQuery(function.definition, logger: logger)
            try await connection.guardedQuery(PostgresQuery(unsafeSQL: """
                SELECT create_distributed_function('\(signature)', '$1', colocate_with => 'events')
                WHERE NOT EXISTS (SELECT 1 FROM pg_dist_object
                                  WHERE objid = '\(signature)'::regprocedure AND distribution_argument_index IS NOT NULL)
                """), logger: logger)
        }
    }
}
