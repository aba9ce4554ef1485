/// Word wrapping for help text.
enum TextWrap {
    /// `text` wrapped to `width` columns; paragraphs (blank-line separated) kept apart, lines
    /// that start with spaces (examples, lists) kept as they are.
    static func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
        var lines: [String] = []
        for (index, paragraph) in paragraphs(text).enumerated() {
            if index > 0 { lines.append("") }
            if paragraph.first?.hasPrefix(" ") == true {
                lines += paragraph.map { indent + $0 }
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
