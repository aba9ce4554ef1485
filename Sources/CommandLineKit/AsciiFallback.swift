/// Plain ASCII for the symbols iapctl writes (`→`, `∅`, `…` as `~` to keep table columns, `—`) when the locale says the
/// terminal cannot show UTF-8 (`LC_ALL=C`).
public enum AsciiFallback {
    /// The replacements, in the order they are applied.
    static let replacements: [(String, String)] = [
        ("→", "->"), ("←", "<-"), ("∅", "(none)"), ("…", "~"), ("—", "--"), ("–", "-"), ("‖", "||"),
        ("≥", ">="), ("≤", "<="), ("×", "x"), ("✓", "ok"), ("✗", "x"), ("·", "."), ("“", "\""), ("”", "\""),
        ("‘", "'"), ("’", "'"),
    ]

    /// Whether `environment` names a locale that is not UTF-8: the first of `LC_ALL`, `LC_CTYPE`
    /// and `LANG` that is set (and not empty) decides; none set: UTF-8 is assumed.
    public static func isNeeded(_ environment: [String: String]) -> Bool {
        guard let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty })
        else { return false }
        let lowered = locale.lowercased()
        return !(lowered.contains("utf-8") || lowered.contains("utf8"))
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
