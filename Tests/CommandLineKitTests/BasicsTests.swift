import Foundation
import IAPFoundation
import Testing

@testable import CommandLineKit

/// Moved from IAPCommandLineTests: the framework's input reading, JSON text (config files) and suggestions.
@Suite("Input, JSON text, suggestions")
struct BasicsTests {
    @Test func inputLinesWithLimit() throws {
        let reader = InputReader(string: "one\r\n" + String(repeating: "x", count: 50) + "\nthree")
        #expect(try reader.readLine(maxLength: 10) == "one")
        #expect(throws: CLIError.self) { try reader.readLine(maxLength: 10) }
        #expect(reader.lineNumber == 2)
        #expect(try reader.readLine(maxLength: 10) == "three")
        #expect(try reader.readLine(maxLength: 10) == nil)
    }

    @Test func overlongLineIsADataErrorNamingTheLine() {
        let reader = InputReader(string: "ok\n" + String(repeating: "y", count: 20))
        _ = try? reader.readLine(maxLength: 5)
        do {
            _ = try reader.readLine(maxLength: 5)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .dataError)
            #expect(error.message == "stdin:2: line longer than 5 bytes")
        }
    }

    @Test func readsFilesByDescriptor() throws {
        let url = try temporaryDirectory().appendingPathComponent("in.txt")
        let big = String(repeating: "z", count: 100_000)
        try ("a\n" + big + "\nb\n").write(to: url, atomically: true, encoding: .utf8)
        let reader = try InputReader(path: url.path)
        #expect(try reader.readLine() == "a")
        #expect(try reader.readLine() == big)
        #expect(try reader.readLine() == "b")
        #expect(try reader.readLine() == nil)
        #expect(try InputReader(path: url.path).readAll().count == 100_005)
        #expect(throws: CLIError.self) { try InputReader(path: url.path + ".missing") }
    }

    @Test func jsonText() throws {
        let value = try JSONText.parse(#" {"a": [1, -2.5e1, true, null, "\u00e9\ud83d\ude00\n"], "b": {}} "#)
        #expect(value["a"]?.arrayValue == [.int(1), .double(-25), .bool(true), .null, .string("é😀\n")])
        #expect(value["b"] == .object([]))
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse("[1,]") }
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse("01") }
        #expect(throws: JSONText.SyntaxError.self) { try JSONText.parse("{} x") }
    }

    @Test func readAllTextRefusesInvalidUTF8() {
        let reader = InputReader(bytes: Array("{\"signedPayload\": \"a.b.c\"}\n".utf8) + [0xFF, 0xFE], name: "body.json")
        #expect(throws: CLIError.self) { try reader.readAllText() }
        do {
            _ = try reader.readAllText()
        } catch {
            #expect(error.code == .dataError)
        }
        let ok = InputReader(bytes: Array("héllo ✓\n".utf8), name: "x")
        #expect((try? ok.readAllText()) == "héllo ✓\n")
    }

    @Test func editDistanceCountsSwapsOnce() {
        #expect(Suggestion.editDistance("stauts", "status") == 1)
        #expect(Suggestion.editDistance("", "abc") == 3)
        #expect(Suggestion.closest(to: "zzzzzz", among: ["list", "show"]) == nil)
    }
}

/// A fresh temporary folder.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("clikit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
