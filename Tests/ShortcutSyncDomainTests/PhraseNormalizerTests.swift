import Testing
import ShortcutSyncDomain

@Suite struct PhraseNormalizerTests {
    @Test(arguments: [
        // English: case, whitespace runs, trailing punctuation, full-width forms.
        ("Order Soup!", "order soup"),
        ("  order \t  soup  ", "order soup"),
        ("ＯＲＤＥＲ ＳＯＵＰ", "order soup"),
        ("Order soup?!...", "order soup"),
        ("Order soup…", "order soup"),
        // French: accents kept, composed and decomposed forms equal, the space before "!" dropped.
        ("Commande une soupe à l'oignon !", "commande une soupe à l'oignon"),
        ("Commande une soupe a\u{0300} l'oignon\u{00A0}!", "commande une soupe à l'oignon"),
        ("CAFÉ CRÈME", "café crème"),
        // German ß folds to ss (full case folding, independent of locale).
        ("Straße", "strasse"),
        // Indonesian.
        ("Pesan Sup Ayam!", "pesan sup ayam"),
        ("  pesan   SUP ayam ", "pesan sup ayam"),
        // Chinese: ideographic full stop and full-width punctuation.
        ("点一份汤。", "点一份汤"),
        ("点一份汤！", "点一份汤"),
        ("点一份汤？", "点一份汤"),
        // Japanese: half-width katakana equal full-width, ideographic space folded.
        ("ｽｰﾌﾟを注文", "スープを注文"),
        ("スープを注文！", "スープを注文"),
        ("スープ　を　注文。", "スープ を 注文"),
        ("ＳＯＵＰを注文", "soupを注文"),
    ])
    func normalizes(_ phrase: String, _ expected: String) {
        #expect(PhraseNormalizer.normalize(phrase) == expected)
    }

    @Test func phrasesThatDifferInWordsStayDifferent() {
        #expect(PhraseNormalizer.normalize("order soup") != PhraseNormalizer.normalize("order soups"))
        #expect(PhraseNormalizer.normalize("¿soup") == "¿soup")  // only trailing punctuation goes
    }

    @Test func onlyPunctuationNormalizesToEmpty() {
        #expect(PhraseNormalizer.normalize(" ?! ").isEmpty)
    }
}
