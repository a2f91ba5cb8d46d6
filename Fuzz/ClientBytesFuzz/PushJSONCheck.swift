import Foundation
import ShortcutSyncDomain

/// The check of the push body's reader (`PushJSON`, which reads every byte a device sends to
/// `POST /v1/sync/push`).
///
/// For every input it must not crash or read out of bounds (the sanitizers), and it must agree
/// with `JSONDecoder` and the domain's `Decodable` conformances: the same events when both
/// take the body; nothing taken by one and refused by the other, but for text that is not JSON
/// by RFC 8259, which `PushJSON` refuses as a syntax error and `JSONDecoder` sometimes takes (a
/// trailing comma), and for a UUID not in its canonical form, which `PushJSON` refuses and
/// Foundation reads on Linux with `sscanf` (a sign or a space in a group; `UUID(canonical:)`,
/// held to Foundation's reading of every canonical text by `CanonicalUUIDTests`).
enum PushJSONCheck {
    struct Body: Decodable {
        var events: [Event]
    }

    static func check(_ bytes: [UInt8]) {
        let ours = Result { () throws(DecodingError) -> [Event] in try PushJSON.events(in: bytes) }
        let foundation = Result {
            let events = try JSONDecoder().decode(Body.self, from: Data(bytes)).events
            // The one type the domain's decoder reads (an archive holds it) that no push may carry.
            guard events.allSatisfy(\.type.isPushed) else { throw NotPushed() }
            return events
        }
        switch (ours, foundation) {
        case (.success(let events), .success(let expected)):
            guard events == expected else { fail("PushJSON read other events than JSONDecoder", bytes) }
        case (.success, .failure(let error)):
            fail("PushJSON took a body that JSONDecoder refuses (\(error))", bytes)
        case (.failure(let error), .success):
            guard case .dataCorrupted(let context) = error,
                  (context.codingPath.isEmpty && context.underlyingError != nil) || context.debugDescription == PushJSON.invalidUUID else {
                fail("PushJSON refused (\(error)) a JSON body that JSONDecoder takes", bytes)
            }
        case (.failure, .failure):
            break
        }
    }

    struct NotPushed: Error {}

    static func fail(_ why: String, _ bytes: [UInt8]) -> Never {
        fatalError("\(why): \(String(decoding: bytes.prefix(2_000), as: UTF8.self))")
    }
}
