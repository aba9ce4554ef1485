/// Text as one word of a POSIX shell command line, for commands people copy from a hint or a
/// report: left as it is when every character is plain, else in single quotes (a `'` inside
/// written `'\''`), so no value — an order number with `;` or `$(…)`, a path with spaces — can
/// split the command or run anything.
public enum ShellWord {
    /// `text` as one shell word: unquoted when plain (letters, digits and `-_./:@=,+%`), else quoted.
    public static func word(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-_./:@=,+%".unicodeScalars.contains($0)
        }
        return plain && !text.isEmpty ? text : quoted(text)
    }

    /// `text` in single quotes, always (a reason or a note: one word whatever it holds).
    public static func quoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
