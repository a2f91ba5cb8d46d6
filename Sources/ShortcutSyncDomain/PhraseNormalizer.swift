import Foundation

/// Brings a voice phrase to the form in which two phrases are compared for uniqueness.
///
/// "Order Soup!", "order  soup" and "ＯＲＤＥＲ ＳＯＵＰ" all become "order soup": Unicode NFKC
/// (full-width and half-width forms fold together), locale-independent full case folding,
/// whitespace runs folded to one space, trimmed, and trailing `. ! ? 。 ！ ？ …` removed.
public enum PhraseNormalizer {
    static let trailingPunctuation: Set<Character> = [".", "!", "?", "。", "！", "？", "…", "｡"]

    public static func normalize(_ phrase: String) -> String {
        let compatible = phrase.precomposedStringWithCompatibilityMapping
        // Folding can produce characters that NFKC would change again (e.g. compatibility
        // ligatures), so the composition is applied once more after it.
        let folded = compatible
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
        var words = folded.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        while let last = words.last, trailingPunctuation.contains(last) || last.isWhitespace {
            words.removeLast()
        }
        return words
    }
}
