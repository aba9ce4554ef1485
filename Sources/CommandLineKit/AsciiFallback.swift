/// Plain ASCII for the symbols iapctl writes (`→`, `∅`, `…`, `—`) when the locale says the terminal cannot show
/// UTF-8 (`LC_ALL=C`). Tables lay their cells out in this form (``OutputStyle/ascii``), so the wider
/// replacements keep the columns aligned.
public enum AsciiFallback {
    /// The replacements, in the order they are applied.
    static let replacements: [(String, String)] = [
        ("→", "->"), ("←", "<-"), ("∅", "(none)"), ("…", "..."), ("—", "--"), ("–", "-"), ("‖", "||"),
        ("≥", ">="), ("≤", "<="), ("×", "x"), ("✓", "ok"), ("✗", "x"), ("·", "."), ("“", "\""), ("”", "\""),
        ("‘", "'"), ("’", "'"),
    ]

    /// Whether `environment` names a locale that is not UTF-8: the first of `LC_ALL`, `LC_CTYPE`
    /// and `LANG` that is set (and not empty) decides; none set: UTF-8 is assumed.
    public static func isNeeded(_ environment: [String: String]) -> Bool {
        guard let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty })
        else { return false }
        let lowered = Array(locale.lowercased().utf8)
        return !(holds(lowered, "utf-8") || holds(lowered, "utf8"))
    }

    /// Whether `text` holds the bytes of `part`. Not `String.contains(_:)`: every command asks this
    /// at start, and that one builds a substring searcher keyed by `Character`, whose first use makes
    /// the Swift runtime scan every conformance record for `Character: Hashable` (7 % of the
    /// instructions of `iapctl --version`).
    private static func holds(_ text: [UInt8], _ part: StaticString) -> Bool {
        let part = UnsafeBufferPointer(start: part.utf8Start, count: part.utf8CodeUnitCount)
        guard part.count <= text.count else { return false }
        for start in 0...(text.count - part.count) where text[start..<start + part.count].elementsEqual(part) {
            return true
        }
        return false
    }

    /// `text` with the symbols replaced (other non-ASCII text is left as it is).
    public static func apply(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x80 }) else { return text }
        var result = text
        for (symbol, ascii) in replacements where result.contains(symbol) {
            result = result.replacing(symbol, with: ascii)
        }
        return result
    }
}
