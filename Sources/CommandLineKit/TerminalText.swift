/// Text that reaches a person's terminal: control characters made visible, never obeyed.
///
/// A terminal acts on C0 controls (ESC starts escape sequences, BEL rings, CR overwrites the
/// line), on C1 controls (U+009B is a one-character CSI, U+009D an OSC that can set the title or
/// the clipboard) and shows bidi overrides (U+202E) as reordered text. Every human-readable
/// output (tables, key–value views, CSV written to a terminal, stderr messages) goes through
/// `escape`, so data from outside, from a database or from another operator cannot drive the
/// terminal or disguise what is shown. Ids and audit texts are refused at input when they hold
/// one (`containsControl`).
public enum TerminalText {
    /// Whether `scalar` is a control character that `escape` replaces.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0: return true  // C0, DEL, C1
        case 0x061C, 0x200E, 0x200F: return true  // Arabic letter mark, LRM, RLM
        case 0x202A...0x202E, 0x2066...0x2069: return true  // bidi embeddings, overrides, isolates
        case 0x2028, 0x2029: return true  // line and paragraph separators
        default: return false
        }
    }

    /// Whether `text` holds any character `escape` would replace.
    public static func containsControl(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// The first control character of `text`, written as `escape` writes it (`\u{1b}`), for messages.
    public static func firstControl(_ text: String) -> String? {
        text.unicodeScalars.first(where: isControl).map { escape(String($0)) }
    }

    /// `text` with every control character written as `\n`, `\r`, `\t` or `\u{…}`; newlines kept
    /// as they are when `keepNewlines` (multi-line messages).
    public static func escape(_ text: String, keepNewlines: Bool = false) -> String {
        guard containsControl(text) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += keepNewlines ? "\n" : "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return result
    }

    /// JSON text with every control character left outside the serializer's escapes (C1, bidi;
    /// they can only occur inside strings) written as `\uXXXX`: still the same JSON.
    public static func jsonEscaped(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            if isControl(scalar), scalar != "\n" {
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The escape sequences the renderer itself sends to a terminal: bold, reset, erase to end of line.
    static let ownSequences: [[Unicode.Scalar]] = ["\u{1B}[1m", "\u{1B}[0m", "\u{1B}[K"].map {
        Array($0.unicodeScalars)
    }

    /// The last line of defence for text written to a terminal: every control character made
    /// visible except newline, tab, carriage return and the renderer's own bold/reset/erase sequences.
    public static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" && $0 != "\t" && $0 != "\r" }) else {
            return text
        }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        outer: while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\u{1B}" {
                for sequence in ownSequences
                where index + sequence.count <= scalars.count
                    && Array(scalars[index..<(index + sequence.count)]) == sequence
                {
                    result.append(contentsOf: sequence)
                    index += sequence.count
                    continue outer
                }
            }
            if isControl(scalar), scalar != "\n", scalar != "\t", scalar != "\r" {
                result.append(contentsOf: escape(String(scalar)).unicodeScalars)
            } else {
                result.append(scalar)
            }
            index += 1
        }
        return String(result)
    }
}
