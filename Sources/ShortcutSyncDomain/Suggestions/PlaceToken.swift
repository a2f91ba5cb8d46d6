import Foundation

/// Where a donation was made, as the service sees it: an opaque token, 32 lowercase hex digits
/// (16 bytes), that the person's devices make from a cell of the map under a key only they
/// hold (the client library's `PlaceKey`, docs/client-library.md). Equal on all of one person's
/// devices for the same cell, meaningless anywhere else: the service checks its shape and
/// nothing more, and never learns a coordinate or a name (DESIGN §3).
///
/// What the suggestions keep of a token is its first byte, its `slot` (the first two hex
/// digits, shown as the place's prefix), with the part of the week the donation was made in
/// (`partOfWeek`): a shortcut's sums hold at most 256 places × 8 parts per device, exact and in
/// any order the same (`HabitSums`), and two places of one shortcut share a slot one time in
/// 256 for each pair.
public enum PlaceToken {
    /// Hex digits in a token.
    public static let length = 32
    /// Tokens a suggestions request may name: the device's cell and its neighbours (9), with room.
    public static let maxPerRequest = 16
    /// A token's shape, for `openapi.yaml` and the validator's answer.
    public static let pattern = "^[0-9a-f]{32}$"

    /// Whether `token` is 32 lowercase hex digits.
    public static func isValid(_ token: some StringProtocol) -> Bool {
        token.utf8.count == length && isLowercaseHex(token)
    }

    private static func isLowercaseHex(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The slot a valid token's place is summed in: its first byte. Nil for a token that is not valid.
    public static func slot(of token: some StringProtocol) -> UInt8? {
        guard isValid(token) else { return nil }
        return Hex.decode(token.prefix(2))?.first
    }

    /// The slot whose prefix is `prefix`: exactly 2 lowercase hex digits. Nil for anything else.
    public static func slot(ofPrefix prefix: some StringProtocol) -> UInt8? {
        guard prefix.utf8.count == 2, isLowercaseHex(prefix) else { return nil }
        return Hex.decode(prefix)?.first
    }

    /// A slot as the two hex digits every token summed in it begins with.
    public static func prefix(ofSlot slot: UInt8) -> String {
        Hex.encode([slot])
    }

    /// What a request's or a donation's place that is not a token is told.
    public static let notAToken = "must be a place token: \(length) lowercase hex digits"

    /// What is wrong with the places a request names, at `pointer` (`/place`, `/place/N`): too
    /// many, or one that is not a token. The API and `admin suggestions --place` check the same.
    public static func violations(of tokens: [String], at pointer: String = "/place") -> [FieldError] {
        guard tokens.count <= maxPerRequest else {
            return [FieldError(pointer: pointer, detail: "names \(tokens.count) places; at most \(maxPerRequest) are allowed")]
        }
        return tokens.enumerated().compactMap { index, token in
            isValid(token) ? nil : FieldError(pointer: "\(pointer)/\(index)", detail: notAToken)
        }
    }

    /// Parts of the week a place's weights are kept in: night, morning, afternoon and evening,
    /// of weekdays and of weekend days. The gym at lunch and the office at lunch are told apart
    /// by the hour; the gym at lunch and the gym in the evening by the part.
    public static let partsOfWeek = 8

    /// The part of the week an hour of it (0 = Monday 00:00) falls in: 0–3 on weekdays (night
    /// 22–06, morning 06–12, afternoon 12–17, evening 17–22), 4–7 the same on weekend days.
    public static func partOfWeek(hourOfWeek: Int) -> Int {
        let hour = hourOfWeek % 24
        let part = switch hour {
        case 6..<12: 1
        case 12..<17: 2
        case 17..<22: 3
        default: 0
        }
        return (hourOfWeek / 24 >= 5 ? 4 : 0) + part
    }

    /// The key a place's weights of one part of the week are kept under: slot × 8 + part.
    public static func key(slot: UInt8, part: Int) -> UInt16 {
        UInt16(slot) << 3 | UInt16(part & 7)
    }

    /// The slot of a key.
    public static func slot(ofKey key: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: key >> 3) }

    /// The part of the week of a key.
    public static func part(ofKey key: UInt16) -> Int { Int(key & 7) }
}
