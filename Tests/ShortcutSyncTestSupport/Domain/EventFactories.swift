import Foundation
import ShortcutSyncDomain

/// Donations of one device, numbered from `from`, one millisecond apart from `wall` on.
public func events(_ count: Int, from: Int64 = 1, wall: Int64 = 1_763_712_000_000) -> [Event] {
    (0..<Int64(count)).map { offset in
        Event(seq: from + offset, hlc: HLCTimestamp(wallMillis: wall + offset),
              body: .donation(Donation(bundleId: "com.example.soup", identifier: "soup-\(from + offset)", kind: .intent,
                                       intentType: "OrderSoupIntent", title: "Soup \(from + offset)", keywords: ["soup"],
                                       parameters: ["size": .string("large")])))
    }
}

extension ShortcutID {
    /// A shortcut of the soup app every script donates to by default.
    public static func soup(_ identifier: String) -> ShortcutID {
        ShortcutID(bundleId: "com.example.soup", identifier: identifier)
    }
}
