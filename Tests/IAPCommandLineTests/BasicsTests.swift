import AppStoreJWS
import Testing

@testable import IAPCommandLine

@Suite("Exit codes, handler errors")
struct BasicsTests {
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
        var handlers: [String: CommandHandler] = [:]
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
        let shown = TerminalText.escape(raw, keepNewlines: true)
        #expect(shown == "eyJ.a-b_c.\\u{1b}]52;c;SGVsbG8=\\u{7}\\u{9b}31m\\u{202e}ünï😀\n\\t")
        #expect(!shown.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) })
        #expect(TerminalText.escape("eyJhbGciOiJFUzI1NiJ9.e30.c2ln", keepNewlines: true) == "eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
    }
}
