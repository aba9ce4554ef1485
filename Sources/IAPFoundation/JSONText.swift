/// JSON for the command line's own inputs (the `--config` file, batch rows, stored audit JSON):
/// the strict RFC 8259 parser, with errors placed by line and column for people.
public enum JSONText {
    /// Why a text is not JSON, with the 1-based line and column of the problem.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var line: Int
        public var column: Int
        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// The largest document read this way (batch files are read row by row).
    static let limits = JSONParser.Limits(maxBytes: 16 << 20, maxDepth: 64)

    /// Parses one JSON document (surrounding whitespace allowed).
    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes, limits: limits)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw SyntaxError(reason: error.reason, line: line, column: column)
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<min(max(offset, 0), bytes.count)] {
            if byte == 10 {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
