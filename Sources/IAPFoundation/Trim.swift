/// Which characters ``Swift/StringProtocol/trimmed(_:leading:trailing:)`` removes.
public struct TrimSet: Sendable {
    /// Whether `character` is removed.
    public let contains: @Sendable (Character) -> Bool

    /// A set given by a predicate.
    public init(_ contains: @escaping @Sendable (Character) -> Bool) {
        self.contains = contains
    }

    /// Spaces and tabs (option values, config values).
    public static let spacesAndTabs = TrimSet { $0 == " " || $0 == "\t" }
    /// Spaces, tabs, CR, LF and CRLF (a pasted token or a line read from a file).
    public static let spacesAndNewlines = TrimSet {
        $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n"
    }
    /// Every Unicode whitespace character.
    public static let whitespace = TrimSet { $0.isWhitespace }
}

extension StringProtocol where SubSequence == Substring {
    /// The text without the characters of `set` at its ends (both by default).
    public func trimmed(_ set: TrimSet, leading: Bool = true, trailing: Bool = true) -> Substring {
        var start = startIndex
        var end = endIndex
        if leading { while start < end, set.contains(self[start]) { start = index(after: start) } }
        if trailing { while end > start, set.contains(self[index(before: end)]) { end = index(before: end) } }
        return self[start..<end]
    }
}

extension String {
    /// A camelCase name in snake_case: `userId` → `user_id`, `requestIdentifier` → `request_identifier`
    /// (a model's property as its column, Apple's JSON keys as output keys).
    public var snakeCased: String {
        var out = ""
        for character in self {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}
