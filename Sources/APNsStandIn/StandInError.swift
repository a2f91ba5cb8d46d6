import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The stand-in did not receive what a test waited for.
enum StandInError: Error, CustomStringConvertible {
    case tooFewRequests(expected: Int, received: Int, within: Duration)

    var description: String {
        switch self {
        case .tooFewRequests(let expected, let received, let limit):
            "the APNs stand-in received \(received) request(s) within \(limit), not the \(expected) expected"
        }
    }
}
