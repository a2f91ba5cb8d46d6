import Logging
import Synchronization

/// Whether wakes can be sent, as `/readyz` shows it (DESIGN §7): off without a key, then what
/// APNs last said of the provider token. A refused key is logged once, when it is first refused.
public final class WakeStatus: Sendable {
    public enum State: Sendable, Hashable {
        /// No APNs key is configured: no wake is sent.
        case off
        /// A key is configured and APNs has not answered yet.
        case configured
        /// APNs accepted the provider token (any answer but 403).
        case accepted
        /// APNs answered 403: the key, its id or the team id is wrong, or the clock is.
        case keyRefused(reason: String)

        /// The word `/readyz` says.
        public var word: String {
            switch self {
            case .off: "off"
            case .configured: "configured"
            case .accepted: "accepted"
            case .keyRefused: "keyRefused"
            }
        }
    }

    private let state: Mutex<State>

    public init(_ state: State) {
        self.state = Mutex(state)
    }

    public var current: State { state.withLock { $0 } }

    func accepted() {
        state.withLock { $0 = .accepted }
    }

    /// Records a 403; logs it only when the key was not refused already.
    func keyRefused(reason: String, logger: Logger) {
        let first = state.withLock { state in
            if case .keyRefused = state { return false }
            state = .keyRefused(reason: reason)
            return true
        }
        if first {
            logger.error("APNs refused the provider token: check --apns-key-file, --apns-key-id and --apns-team-id; no wake can be sent until it is accepted",
                         metadata: ["reason": "\(reason)"])
        }
    }
}
