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
    /// A command span in it (see `units`) is never broken: one that does not fit the rest of a line
    /// starts the next, one longer than a line gets lines of its own, broken as `command` does.
    /// `hang` sets the continuation indent of the first line (default: under the text after `prefix`).
    public static func hanging(_ text: String, prefix: String, width: Int?, hang firstHang: Int? = nil) -> [String] {
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
            let indent = String(repeating: " ", count: index == 0 ? firstHang ?? TextWidth.of(prefix) : lead.count + 2)
            // Too deep an indent for the width: continue at the left edge rather than a letter a line.
            let hang = TextWidth.of(indent) > width / 2 ? "" : indent
            lines += fillKeepingCommands(body, width: width, first: lead, indent: hang)
        }
        return lines
    }

    /// One paragraph filled to `width` between words, the first line after `first`, the others after
    /// `indent`; a command span is moved whole to the next line rather than broken, and one longer
    /// than a line is broken only as `command` breaks it (` \` at each line's end, so it still runs
    /// when pasted). Only a plain word longer than a line is cut.
    public static func fillKeepingCommands(_ text: String, width: Int, first: String, indent: String) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        let room = width - TextWidth.of(indent)
        for unit in units(text) {
            let size = TextWidth.of(unit.text)
            if !empty, TextWidth.of(line) + 1 + size <= width {
                line += " " + unit.text
                continue
            }
            if empty, TextWidth.of(line) + size <= width {
                line += unit.text
                empty = false
                continue
            }
            // It does not fit after what the line holds: on the next line, or lines of its own.
            if !empty {
                lines.append(line)
                line = indent
                empty = true
                if size <= room {
                    line += unit.text
                    empty = false
                    continue
                }
            }
            if unit.isCommand {
                var pieces = command(unit.text, width: width, indent: line, continuation: indent + "    ")
                line = pieces.removeLast()
                lines += pieces
                empty = false
            } else {
                // A plain unit longer than a line: its words one by one, a word longer than a line cut.
                let words = unit.text.split(separator: " ").flatMap {
                    chunks(String($0), width: max(1, width - TextWidth.of(line)))
                }
                for word in words {
                    if !empty, TextWidth.of(line) + 1 + TextWidth.of(word) > width {
                        lines.append(line)
                        line = indent
                        empty = true
                    }
                    line += (empty ? "" : " ") + word
                    empty = false
                }
            }
        }
        if !empty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// A piece of text that is never broken between lines, and whether it is a command.
    struct Unit: Equatable {
        var text: String
        var isCommand: Bool
    }

    /// The words of `text`, with what must stay on one line joined: a span in backticks, a command
    /// (from `iapctl` followed by a subcommand or option, or after `run:`, `with:` or `try:`, to the end of the text or a word ending
    /// in `;`, `,` or an unmatched `)`; in quotes, to the closing quote), and an option with its
    /// value (`--request-id 7f3a…`).
    static func units(_ text: String) -> [Unit] {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var units: [Unit] = []
        var index = 0
        let introducers: Set<String> = ["run:", "with:", "try:"]
        func isProgram(_ word: String) -> Bool {
            let bare = word.drop { $0 == "'" || $0 == "\"" || $0 == "`" || $0 == "(" }
            return bare == "iapctl" || bare.hasSuffix("/iapctl")
        }
        while index < words.count {
            let word = words[index]
            if word.hasPrefix("`") {
                // A span in backticks: to the word holding the closing one.
                var end = index
                if word.dropFirst().contains("`") == false {
                    while end + 1 < words.count, !words[end].dropFirst(end == index ? 1 : 0).contains("`") { end += 1 }
                }
                let span = words[index...end].joined(separator: " ")
                units.append(Unit(text: span, isCommand: isProgram(word) || span.contains(" ")))
                index = end + 1
                continue
            }
            let afterIntroducer = index > 0 && introducers.contains(words[index - 1].lowercased())
            // `iapctl` starts a command only when a subcommand or option follows (not in a name
            // such as `iapctl Example Root CA`).
            let startsCommand =
                isProgram(word) && index + 1 < words.count
                && (words[index + 1].first.map { $0.isLowercase || $0 == "-" } ?? false)
            if startsCommand || afterIntroducer {
                var end = index
                if let quote = word.first, quote == "'" || quote == "\"" {
                    if !closes(word, quote, first: true) {
                        end += 1
                        while end < words.count - 1, !closes(words[end], quote, first: false) { end += 1 }
                        end = min(end, words.count - 1)
                    }
                } else {
                    var depth = 0
                    while end < words.count {
                        let current = words[end]
                        depth += current.filter { $0 == "(" }.count - current.filter { $0 == ")" }.count
                        if depth < 0 || current.hasSuffix(";") || current.hasSuffix(",") { break }
                        end += 1
                    }
                    end = min(end, words.count - 1)
                }
                units.append(Unit(text: words[index...end].joined(separator: " "), isCommand: true))
                index = end + 1
                continue
            }
            if word.hasPrefix("--"), word.count > 2, !word.hasSuffix(")"), !word.hasSuffix(","), !word.hasSuffix(";"),
                index + 1 < words.count, !words[index + 1].hasPrefix("-"), !word.contains("=")
            {
                units.append(Unit(text: word + " " + words[index + 1], isCommand: false))
                index += 2
                continue
            }
            units.append(Unit(text: word, isCommand: false))
            index += 1
        }
        return units
    }

    /// Whether `word` ends a span opened by `quote` (trailing punctuation allowed).
    static func closes(_ word: String, _ quote: Character, first: Bool) -> Bool {
        let body = first ? Substring(word.dropFirst()) : Substring(word)
        return body.contains(quote)
    }
}
