/// Word wrapping for help text.
public enum TextWrap {
    /// `text` wrapped to `width` columns; paragraphs (blank-line separated) kept apart, lines
    /// that start with spaces (examples, lists) kept as they are.
    static func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
        var lines: [String] = []
        for (index, paragraph) in paragraphs(text).enumerated() {
            if index > 0 { lines.append("") }
            if paragraph.first?.hasPrefix(" ") == true {
                // Examples and lists keep their lines; one too long breaks between words, under its text.
                for line in paragraph {
                    let lead = String(line.prefix { $0 == " " })
                    let body = String(line.dropFirst(lead.count))
                    if TextWidth.of(indent + line) <= width {
                        lines.append(indent + line)
                    } else if body.hasPrefix("iapctl ") || body.hasPrefix("$ ") {
                        lines += command(body, width: width, indent: indent + lead, continuation: indent + lead + "    ")
                    } else {
                        var filled = fill(body, width: width, indent: indent + lead + "    ")
                        if !filled.isEmpty { filled[0] = indent + lead + filled[0].dropFirst(indent.count + lead.count + 4) }
                        lines += filled
                    }
                }
                continue
            }
            lines += fill(paragraph.joined(separator: " "), width: width, indent: indent)
        }
        return lines
    }

    /// The paragraphs of `text`, each as its lines.
    static func paragraphs(_ text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                if !current.isEmpty {
                    result.append(current)
                    current = []
                }
            } else {
                current.append(String(line))
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// `word` in pieces of at most `width` columns (a word longer than a line is broken).
    static func chunks(_ word: String, width: Int) -> [String] {
        guard width > 0, TextWidth.of(word) > width else { return [word] }
        var pieces: [String] = []
        var piece = ""
        for character in word {
            if TextWidth.of(piece + String(character)) > width {
                pieces.append(piece)
                piece = ""
            }
            piece.append(character)
        }
        if !piece.isEmpty { pieces.append(piece) }
        return pieces
    }

    /// One paragraph filled to `width`.
    static func fill(_ text: String, width: Int, indent: String) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).flatMap({
            chunks(String($0), width: width - TextWidth.of(indent))
        }) {
            if line.isEmpty {
                line = String(word)
            } else if TextWidth.of(indent + line) + 1 + TextWidth.of(String(word)) > width {
                lines.append(indent + line)
                line = String(word)
            } else {
                line += " " + word
            }
        }
        if !line.isEmpty { lines.append(indent + line) }
        return lines
    }
}

extension TextWrap {
    /// A shell command line in lines of at most `width` columns that still run when pasted: broken
    /// only between words outside quotes, each line but the last ending in ` \`, the first after
    /// `indent`, the others after `continuation`. A word longer than a line is left whole.
    public static func command(_ line: String, width: Int, indent: String, continuation: String) -> [String] {
        guard TextWidth.of(indent + line) > width else { return [indent + line] }
        var words: [String] = []
        var word = ""
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil }
                word.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                word.append(character)
            } else if character == " " {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { words.append(word) }
        var lines: [String] = []
        var current = indent
        var empty = true
        for word in words {
            // Room for the ` \` that ends a broken line.
            if !empty, TextWidth.of(current) + 1 + TextWidth.of(word) + 2 > width {
                lines.append(current + " \\")
                current = continuation + word
            } else {
                current += (empty ? "" : " ") + word
            }
            empty = false
        }
        lines.append(current)
        return lines
    }

    /// `prefix` + `text` as lines of at most `width` columns, broken between words: the first line
    /// after `prefix` (`error: `), its continuation lines under the text (a hanging indent). A
    /// line of `text` after a newline keeps its own indent, its continuations two more. Without a
    /// width (not a terminal) the lines are as given.
    public static func hanging(_ text: String, prefix: String, width: Int?) -> [String] {
        let given = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let width else { return [prefix + (given.first ?? "")] + given.dropFirst() }
        var lines: [String] = []
        for (index, line) in given.enumerated() {
            let lead = index == 0 ? prefix : String(line.prefix { $0 == " " })
            let body = index == 0 ? line : String(line.dropFirst(lead.count))
            guard TextWidth.of(lead + body) > width else {
                lines.append(lead + body)
                continue
            }
            let indent = String(repeating: " ", count: index == 0 ? TextWidth.of(prefix) : lead.count + 2)
            // Too deep an indent for the width: continue at the left edge rather than a letter a line.
            let hang = TextWidth.of(indent) > width / 2 ? "" : indent
            var filled = fill(body, width: width, indent: hang)
            if let first = filled.first { filled[0] = lead + first.dropFirst(hang.count) }
            lines += filled
        }
        return lines
    }
}
