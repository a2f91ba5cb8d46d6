import Foundation

/// Where a donation was made, as the service sees it: an opaque token, 32 lowercase hex digits
/// (16 bytes), that the person's devices make from a cell of the map under a key only they
/// hold (the client library's `PlaceKey`, docs/client-library.md). Equal on all of one person's
/// devices for the same cell, meaningless anywhere else: the service checks its shape and
/// nothing more, and never learns a coordinate or a name (DESIGN §3).
///
/// What the suggestions keep of a token is its first byte, its `slot` (the first two hex
/// digits, shown as the place's prefix): a shortcut's sums hold at most 256 places per device,
/// exact and in any order the same (`HabitSums`), and two places of one shortcut share a slot
/// one time in 256 for each pair.
public enum PlaceToken {
    /// Hex digits in a token.
    public static let length = 32
    /// Tokens a suggestions request may name: the device's cell and its neighbours (9), with room.
    public static let maxPerRequest = 16
    /// A token's shape, for `openapi.yaml` and the validator's answer.
    public static let pattern = "^[0-9a-f]{32}$"

    /// Whether `token` is 32 lowercase hex digits.
    public static func isValid(_ token: some StringProtocol) -> Bool {
        let utf8 = token.utf8
        return utf8.count == length && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The slot a valid token's place is summed in: its first byte. Nil for a token that is not valid.
    public static func slot(of token: some StringProtocol) -> UInt8? {
        guard isValid(token) else { return nil }
        let digits = Array(token.utf8.prefix(2))
        return UInt8(hexDigit(digits[0]) << 4 | hexDigit(digits[1]))
    }

    /// A slot as the two hex digits every token summed in it begins with.
    public static func prefix(ofSlot slot: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(slot >> 4)], digits[Int(slot & 0xF)]])
    }

    private static func hexDigit(_ byte: UInt8) -> Int {
        byte <= 0x39 ? Int(byte - 0x30) : Int(byte - 0x61 + 10)
    }
}
