import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncDomain

/// Why a request did not go through.
public enum SyncTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The service is unavailable now (503, 429): try again, after `retryAfter` seconds if given.
    case retryLater(retryAfter: Int?)
    /// The service refused the request for good (4xx other than 409, 429): retrying the same
    /// request cannot help. `detail` is what it said.
    case refused(status: Int, detail: String)
    /// Any other answer (5xx): worth retrying after a while.
    case failed(status: Int, detail: String)

    public var description: String {
        switch self {
        case .retryLater(let seconds): "the service is unavailable now" + (seconds.map { ", retry after \($0) s" } ?? "")
        case .refused(let status, let detail): "refused (\(status)): \(detail)"
        case .failed(let status, let detail): "failed (\(status)): \(detail)"
        }
    }
}
