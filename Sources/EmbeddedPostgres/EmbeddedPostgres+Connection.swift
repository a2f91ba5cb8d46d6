import Foundation

extension EmbeddedPostgres {
    /// How to reach a running cluster.
    public struct Connection: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String
        public var socketDirectory: String

        /// A `postgres://` URL of one database of the cluster: the caller turns it into its own
        /// configuration (this module knows no client).
        public func url(database: String) -> String {
            let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
            let pass = password.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? password
            return "postgres://\(user):\(pass)@\(host):\(port)/\(database)?sslmode=disable"
        }
    }
}
