import Foundation
import Testing

/// Handlers read typed values (`invocation[option]`, `invocation[argument]`), converted once when the
/// line is parsed: no handler reads an option's text (`String?`) to parse it again, and none reads a
/// positional argument by its index. This scans the command layer's sources so neither comes back.
@Suite("Handlers read options and arguments typed")
struct TypedReadsTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/IAPCommandLine")

    /// Reads of an option's or argument's text (`invocation.value(…)`, `parsed.argument(…)`, `self.values(…)`)
    /// and of positional arguments by index (`arguments[0]`, `arguments.first`).
    static let untypedRead = try! NSRegularExpression(
        pattern:
            #"\b(invocation|parsed|self)\s*\.\s*(value|values|argument)\s*\(|\barguments\s*(\[|\.first\b|\.last\b|\.isEmpty\b|\.count\b)"#)

    /// `file:line: text` of each untyped read in `text` (comments skipped).
    static func untypedReads(in text: String, file: String) -> [String] {
        var found: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            let range = NSRange(code.startIndex..., in: code)
            if untypedRead.firstMatch(in: code, range: range) != nil {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    @Test func noHandlerReadsAnOptionsTextOrAnArgumentByIndex() throws {
        var found: [String] = []
        var files = 0
        let enumerator = try #require(FileManager.default.enumerator(atPath: Self.sources.path))
        for case let file as String in enumerator where file.hasSuffix(".swift") {
            files += 1
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            found += Self.untypedReads(in: text, file: file)
        }
        #expect(files > 30)
        #expect(found.isEmpty, "read typed instead (invocation[option]):\n\(found.joined(separator: "\n"))")
    }

    /// Untyped reads (by text or by index) are found; typed reads and look-alikes are not.
    @Test func theScanFindsTheOldForms() {
        let old = """
            let limit = invocation.parsed.value(CommandTree.limitOption).flatMap { Int($0) }
            let tx = invocation.arguments[0]
            var items = InputItems(try invocation.openInput(invocation.arguments.first))
            guard let id = invocation.parsed.argument(ContractsSpec.id) else { throw CLIError.usage("") }
            let environments = invocation.values(CommandTree.environmentOption)
            if let actor = self.value(CommandTree.actorOption) { return actor }
            """
        #expect(Self.untypedReads(in: old, file: "old").count == 6)
        let typed = """
            let limit = invocation[CommandTree.limitOption]
            switch column.value(of: row) {
            r.append("value", OverrideRendering.values(shown).value)
            // invocation.arguments[0] in a comment
            """
        #expect(Self.untypedReads(in: typed, file: "typed").isEmpty)
    }
}
