/// Passwords in URL texts (a database URL on the command line, in a config file or the
/// environment): found so that they are refused, and masked in anything printed.
public enum URLSecrets {
    /// Parameter names that carry a secret: `password`, `pass`, `pwd`, `passwd`, `secret`, `token`…
    public static func isSecretParameter(_ name: String) -> Bool {
        let name = name.lowercased()
        return ["pass", "pwd", "secret", "token"].contains { name.contains($0) }
    }

    /// The user-info part of a URL text (after `scheme://`, before its `@`), if any.
    ///
    /// A password may hold `/`, `?`, `#` or `@`, so when the authority (up to the first `/`, `?`
    /// or `#`) has no `@` but the text has one further on, that `@` still ends the user info —
    /// unless it sits in a parameter's value (`?socket=/run/a@b`) and the authority is a plain
    /// `host[:port]`.
    private static func userInfoRange(_ text: String) -> Range<String.Index>? {
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { return schemeEnd.upperBound..<at }
        guard let at = rest.lastIndex(of: "@") else { return nil }
        let plainPort = authority.firstIndex(of: ":").map { authority[authority.index(after: $0)...].allSatisfy(\.isNumber) } ?? true
        if plainPort, rest[authorityEnd..<at].contains("=") { return nil }
        return schemeEnd.upperBound..<at
    }

    /// Whether `text` carries a password: `user:…@` user info, or a secret-like parameter.
    public static func carriesPassword(_ text: String) -> Bool {
        if let range = userInfoRange(text), text[range].contains(":") { return true }
        return secretParameterRanges(text).isEmpty == false
    }

    /// The value ranges of secret-like parameters (`?password=…&…`).
    private static func secretParameterRanges(_ text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var index = text.startIndex
        while let q = text[index...].firstIndex(where: { $0 == "?" || $0 == "&" || $0 == ";" }) {
            let nameStart = text.index(after: q)
            guard let eq = text[nameStart...].firstIndex(of: "=") else { break }
            let name = text[nameStart..<eq]
            let valueEnd = text[eq...].firstIndex(where: { $0 == "&" || $0 == ";" }) ?? text.endIndex
            if !name.contains(where: { "?&;/@".contains($0) }), isSecretParameter(String(name)) {
                ranges.append(text.index(after: eq)..<valueEnd)
            }
            index = nameStart
        }
        return ranges
    }

    /// `text` with the whole user info of a URL that holds a password (`user:…@`, whatever the
    /// password contains) and the value of every secret-like parameter replaced by `***`, for anything printed (settings with -v, messages,
    /// hints). Text that is not a URL is returned as is.
    public static func redacted(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var out = text
        // Parameters first (their ranges are in the original text), from the end.
        for range in secretParameterRanges(out).reversed() { out.replaceSubrange(range, with: "***") }
        if let range = userInfoRange(out), out[range].contains(":") { out.replaceSubrange(range, with: "***") }
        return out
    }
}
