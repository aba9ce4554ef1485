/// Terminal display width of text (East Asian wide and emoji count 2, combining marks 0).
public enum TextWidth {
    /// The number of terminal columns `text` takes.
    public static func of(_ text: String) -> Int {
        // Printable ASCII (most cells: ids, verdicts, dates) is one column a byte: no Unicode
        // property look-ups (they were ~9 % of a large `notify` with a table).
        if let ascii = printableASCIICount(text) { return ascii }
        return text.reduce(0) { $0 + width(of: $1) }
    }

    /// The byte count of `text` when every byte is printable ASCII (0x20–0x7E), else nil.
    /// (CR LF is one grapheme of width 0, other controls are width 0: not this path.)
    static func printableASCIICount(_ text: String) -> Int? {
        var count = 0
        for byte in text.utf8 {
            guard byte >= 0x20, byte < 0x7F else { return nil }
            count += 1
        }
        return count
    }

    /// The width of one grapheme.
    static func width(of character: Character) -> Int {
        var result = 0
        for scalar in character.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F..<0xA0).contains(value) { continue }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: continue
            default: break
            }
            if (0xFE00...0xFE0F).contains(value) { continue }
            if isWide(value) || scalar.properties.isEmojiPresentation { return 2 }
            result = max(result, 1)
        }
        return result
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `text` cut to at most `width` columns, ending in `ellipsis` (`…`, or `...` for a terminal that
    /// cannot show UTF-8) when cut.
    public static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard of(text) > width else { return text }
        let marker = of(ellipsis)
        if printableASCIICount(text) != nil {
            return width >= marker ? String(text.prefix(width - marker)) + ellipsis : String(text.prefix(max(width, 0)))
        }
        guard width > 0 else { return "" }
        guard width >= marker else { return String(repeating: ".", count: width) }
        var result = ""
        var used = 0
        for character in text {
            let w = TextWidth.width(of: character)
            if used + w > width - marker { break }
            result.append(character)
            used += w
        }
        return result + ellipsis
    }

    /// `text` cut to at most `width` columns keeping the part that differs: the first
    /// `sharedPrefix` bytes (a prefix every cell of the column shares, such as `com.example.`)
    /// give way first, all but their last segment (`…iapctl.pro.monthly`); a dotted name shared by every cell loses its leading
    /// parts (`…iapctl.monthly`); what is still too long is cut at the end (`…`).
    public static func shorten(_ text: String, to width: Int, sharedPrefix: Int, ellipsis: String = "…") -> String {
        guard of(text) > width else { return text }
        guard width > 4, printableASCIICount(text) != nil, !text.contains(" ") else {
            return truncate(text, to: width, ellipsis: ellipsis)
        }
        if sharedPrefix >= 4, sharedPrefix < text.utf8.count {
            // The last shared segment stays (`…iapctl.monthly`, `…iapctl.premium.monthly`): a bare
            // `…monthly` would read as the end of `…premium.monthly` too.
            let shared = text.utf8.prefix(sharedPrefix - 1)
            let start =
                shared.lastIndex(where: { [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":")].contains($0) })
                .map { text.utf8.distance(from: text.utf8.startIndex, to: $0) + 1 } ?? 0
            let rest = ellipsis + String(text.utf8.dropFirst(start))!
            if of(rest) <= width { return rest }
        }
        var parts = text.split(separator: ".", omittingEmptySubsequences: false)
        while parts.count > 1 {
            parts.removeFirst()
            let rest = ellipsis + parts.joined(separator: ".")
            if of(rest) <= width { return rest }
        }
        return truncate(text, to: width, ellipsis: ellipsis)
    }

    /// `text` padded with spaces to `width` columns (on the right, or on the left when `leading`).
    public static func pad(_ text: String, to width: Int, leading: Bool = false) -> String {
        let missing = width - of(text)
        guard missing > 0 else { return text }
        let spaces = String(repeating: " ", count: missing)
        return leading ? spaces + text : text + spaces
    }
}
