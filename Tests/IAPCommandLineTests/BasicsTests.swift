import AppStoreJWS
import Testing

@testable import IAPCommandLine

@Suite("Input, JSON text, exit codes")
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

    @Test func exitCodesAreTheContract() {
        let table: [ExitCode: Int32] = [
            .success: 0, .failure: 1, .verificationFailed: 2, .notFound: 3, .conflict: 4, .usage: 64, .dataError: 65,
            .noInput: 66, .unavailable: 69, .software: 70, .ioError: 74, .tempFail: 75, .config: 78, .interrupted: 130,
        ]
        for code in ExitCode.allCases { #expect(table[code] == code.rawValue) }
    }

    struct Converted: CLIErrorConvertible {
        var cliError: CLIError { CLIError(.tempFail, "database is locked", hint: "retry") }
    }

    @Test func handlerErrorsBecomeMessagesAndCodes() {
        var handlers = CommandHandlers.standard()
        handlers["db status"] = { _ in throw CLIError(.notFound, "no order 'x'", hint: "check the key") }
        handlers["db init"] = { _ in throw Converted() }
        handlers["orders list"] = { invocation in
            invocation.print("data")
            invocation.note("note")
            invocation.warn("careful")
            return .conflict
        }
        let notFound = iapctl(["db", "status"], handlers: handlers)
        #expect(notFound.code == 3)
        #expect(notFound.err == "error: no order 'x'\nhint: check the key\n")
        let converted = iapctl(["db", "init"], handlers: handlers)
        #expect(converted.code == 75)
        #expect(converted.err == "error: database is locked\nhint: retry\n")
        let list = iapctl(["orders", "list"], handlers: handlers)
        #expect(list.code == 4)
        #expect(list.out == "data\n")
        #expect(list.err == "note\nwarning: careful\n")
        #expect(iapctl(["orders", "list", "-q"], handlers: handlers).err.isEmpty)
    }
}

/// `audit raw` writes a ledger item's exact bytes to a pipe or file, and escapes what a terminal
/// would act on (C0/C1 controls, bidi overrides) when stdout is one.
@Suite("audit raw on a terminal")
struct AuditRawEscapingTests {
    @Test func controlsAndBidiOverridesAreEscapedAndTheRestKept() {
        let raw = "eyJ.a-b_c.\u{1B}]52;c;SGVsbG8=\u{07}\u{9B}31m\u{202E}ünï\u{1F600}\n\t"
        let shown = AuditCommands.escapingControls(raw)
        #expect(shown == #"eyJ.a-b_c.\u{1b}]52;c;SGVsbG8=\u{7}\u{9b}31m\u{202e}ünï😀\u{a}\u{9}"#)
        #expect(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(AuditCommands.escapingControls("eyJhbGciOiJFUzI1NiJ9.e30.c2ln") == "eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
    }
}
