import Foundation

/// The limits of DESIGN §2, as `openapi.yaml` declares them.
///
/// Lengths count Unicode code points (`unicodeScalars`), as JSON Schema's `minLength` and
/// `maxLength` do, so that the spec and the code refuse the same strings: "é" written as `e` and a
/// combining accent is two, a flag emoji two, "汤" one. (Before, lengths counted grapheme clusters.)
public enum Limits {
    public static let bundleIdLength = 1...255
    public static let identifierLength = 1...256
    public static let titleLength = 1...200
    public static let phraseLength = 1...100
    public static let maxKeywords = 20
    /// Each keyword: not in DESIGN §2, chosen here as the length of a title (1–200 code points).
    public static let keywordLength = 1...200
    public static let identifiersCount = 1...1000
    public static let maxInstalled = 2000
    public static let maxParametersBytes = 16 * 1024
    public static let maxEventsPerPush = 500
    public static let maxPushBytes = 1024 * 1024
    /// A donation's offset from UTC in minutes: UTC−12:00 to UTC+14:00.
    public static let utcOffsetMinutes: ClosedRange<Int> = -720...840
    public static let maxClockSkewMillis: Int64 = 5 * 60 * 1000
    /// A device's seqs (DESIGN §5): 2^53 is the largest integer every JSON reader keeps exactly,
    /// and leaves room for any arithmetic on a batch's seqs without overflow.
    public static let seqRange: ClosedRange<Int64> = 1...(1 << 53)
    /// An hlc's counter: 0…2^31−1, so that a clock moving past it never overflows.
    public static let hlcCounterRange: ClosedRange<Int> = 0...Int(Int32.max)
    /// An hlc's wall clock as the spec declares it (2^53−1); a push is held to the server's clock
    /// plus `maxClockSkewMillis` besides.
    public static let hlcWallRange: ClosedRange<Int64> = 0...((1 << 53) - 1)
    /// What a stored count or version may hold when it is read back (issue 65, item 6): an
    /// account's versions, a donation group's donations. 2^53 takes a person 285,000 years at
    /// 1,000 events a second; a row beyond it did not come from a fold (an edited import, a hand
    /// edit), and is refused as corrupt rather than folded on, so that no sum over stored values
    /// can overflow (and trap the process) however many batches are added.
    public static let storedCountRange: ClosedRange<Int64> = 0...(1 << 53)

    // Per person (DESIGN §5): nothing one person does may make the service hold without bound.
    /// Open streams per device, and pulls waiting per device; a further one ends the oldest.
    public static let maxStreamsPerDevice = 4
    /// Pauses and resumes of the suggestions' learning per scope (the account, each device): the
    /// fold keeps each change, and reads them at every push of the account.
    public static let maxLearningChangesPerScope = 1_000
    /// Signed-in devices per account.
    public static let maxDevicesPerAccount = 100
    /// Existing shortcuts per account.
    public static let maxShortcutsPerAccount = 10_000
    /// Donation groups (`groupIdentifier`s with uncovered donations) per shortcut: each is a row
    /// the fold and the suggestions read, so one shortcut cannot be made to cost without bound.
    public static let maxGroupsPerShortcut = 16
}
