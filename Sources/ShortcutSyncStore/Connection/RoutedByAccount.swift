import Foundation
import PostgresNIO

/// A store whose statements of one account may go to the worker that holds the account's shards
/// (`AccountRouter`, `serve --route-by-account`): the push's, the pull's and the pull's record.
protocol RoutedByAccount {
    /// Where every statement goes without a router, and what a router falls back to.
    var client: PostgresClient { get }
    var router: AccountRouter? { get }
}

extension RoutedByAccount {
    /// The pool the account's statements go to: its worker's, when routed by account, else `client`.
    func pool(for account: UUID) async -> PostgresClient {
        await router?.pool(for: account) ?? client
    }
}
