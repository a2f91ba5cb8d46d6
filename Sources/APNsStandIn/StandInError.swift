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

/// The stand-in did not come up.
enum StandInError: Error, CustomStringConvertible {
    case didNotStart
    case tooFewRequests(expected: Int, received: Int, within: Duration)

    var description: String {
        switch self {
        case .didNotStart: "the APNs stand-in did not start listening"
        case .tooFewRequests(let expected, let received, let limit):
            "the APNs stand-in received \(received) request(s) within \(limit), not the \(expected) expected"
        }
    }
}
