import Foundation
import Testing

/// The repository's documents stay maps: the README a guide of bounded length, and every relative
/// link in the guides pointing at a file that exists.
@Suite("Documents are maps")
struct DocumentsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The guides: the root's Markdown, docs/ and scripts/README.md.
    static func guides() throws -> [String] {
        let fileManager = FileManager.default
        let atRoot = try fileManager.contentsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".md") }
        let docs = try fileManager.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path).filter {
            $0.hasSuffix(".md")
        }.map { "docs/" + $0 }
        return (atRoot + docs + ["scripts/README.md"]).sorted()
    }

    /// The relative link targets of Markdown `[text](target)`, without their `#anchor`.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        var rest = Substring(text)
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = String(after[..<close])
            rest = after[close...]
            if target.contains("://") || target.hasPrefix("#") || target.hasPrefix("mailto:") || target.contains(" ") {
                continue
            }
            targets.append(String(target.split(separator: "#", maxSplits: 1).first ?? ""))
        }
        return targets
    }

    @Test func theReadmeIsAGuideOfAtMost3000Words() throws {
        let words = try Self.text("README.md").split(whereSeparator: { $0.isWhitespace }).count
        #expect(words <= 3000, "README.md has \(words) words: move reference material to docs/ or the man pages")
        #expect(words > 500, "README.md has only \(words) words")
    }

    @Test func everyRelativeLinkOfTheGuidesResolves() throws {
        let guides = try Self.guides()
        #expect(guides.contains("docs/database.md"))
        for guide in guides {
            let folder = guide.split(separator: "/").dropLast().map { $0 + "/" }.joined()
            for target in Self.links(in: try Self.text(guide)) {
                let path = Self.root.appendingPathComponent(folder + target).standardizedFileURL.path
                #expect(FileManager.default.fileExists(atPath: path), "\(guide) links to \(target), which does not exist")
            }
        }
    }

    /// `Target/Type.test` names in RELIABILITY.md's table.
    static func provingTests(in text: String) -> [(target: String, type: String, test: String)] {
        text.split(separator: "`").compactMap { span in
            let parts = span.split(separator: "/")
            guard parts.count == 2, parts[0].hasSuffix("Tests"), parts[0].allSatisfy({ $0.isLetter }) else { return nil }
            let names = parts[1].split(separator: ".")
            guard names.count == 2, names.allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber } }) else { return nil }
            return (String(parts[0]), String(names[0]), String(names[1]))
        }
    }

    /// Whether `Tests/<target>` declares `type` (a struct, or an extension of one) with a `func test(`.
    static func declares(_ target: String, _ type: String, _ test: String) throws -> Bool {
        let folder = root.appendingPathComponent("Tests/\(target)")
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { return false }
        var declared = false
        var found = false
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let ownsType = text.contains("struct \(type) ") || text.contains("struct \(type):")
            if ownsType { declared = true }
            if (ownsType || text.contains("extension \(type) ")) && text.contains("func \(test)(") { found = true }
        }
        return declared && found
    }

    @Test func everyTestRELIABILITYNamesExists() throws {
        let named = Self.provingTests(in: try Self.text("RELIABILITY.md"))
        #expect(named.count >= 30, "RELIABILITY.md names \(named.count) tests")
        for (target, type, test) in named {
            #expect(try Self.declares(target, type, test), "RELIABILITY.md names \(target)/\(type).\(test), which does not exist")
        }
    }

    @Test func aTestThatDoesNotExistIsFound() throws {
        let named = Self.provingTests(in: "| x | `EndToEndTests/ReliabilityTests.noSuchTest`, `scripts/fuzz` |")
        #expect(named.count == 1)
        #expect(try !Self.declares("EndToEndTests", "ReliabilityTests", "noSuchTest"))
        #expect(try Self.declares("EndToEndTests", "ReliabilityTests", "aDryRunPredictsExactlyWhatTheRealRunGives"))
    }

    @Test func aLinkToAMissingFileIsFound() {
        #expect(Self.links(in: "see [the guide](docs/nowhere.md#part) and [a site](https://example.com)") == ["docs/nowhere.md"])
    }
}
