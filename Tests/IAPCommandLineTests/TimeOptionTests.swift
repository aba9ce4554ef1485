import AppStoreJWS
import Testing

@testable import IAPCommandLine

/// Every time option reads the one grammar of `Timestamp.parse` (issue #12: `verify --at` used to
/// refuse what `entitled --at` accepted).
@Suite("One grammar for every time option")
struct TimeOptionTests {
    let parser = CommandLineParser(root: CommandTree.root)

    @Test func verifyAtTakesWhatEntitledAtTakes() throws {
        for value in ["2025-09-05T01:24:32Z", "2025-09-05", "1757035472000", "36h", "7d", "now", "signed"] {
            #expect(try parser.parse(["verify", "--at", value]).value(CommandTree.atOption) == value, "\(value)")
            #expect(try parser.parse(["entitled", "--user", "u", "--at", value]).value(EntitledSpec.at) == value, "\(value)")
        }
        #expect(throws: CLIError.self) { try parser.parse(["verify", "--at", "yesterday"]) }
    }

    @Test func validationTimeOfVerify() throws {
        #expect(try TrustSetup.validationTime("signed") == .signedDate)
        #expect(try TrustSetup.validationTime("now") == .now)
        #expect(try TrustSetup.validationTime("1757035472000") == .fixed(1_757_035_472_000))
        #expect(try TrustSetup.validationTime("2025-09-05T09:24:32+08:00") == .fixed(1_757_035_472_000))
        guard case .fixed(let ms) = try TrustSetup.validationTime("2d") else {
            Issue.record("2d is not a fixed time")
            return
        }
        let twoDaysAgo = Timestamp.now() - 2 * 86_400_000
        #expect(abs(ms - twoDaysAgo) < 60_000)
        #expect(throws: CLIError.self) { try TrustSetup.validationTime("2025-09-05T01:24:32") }
    }

    @Test func supportToolsKeepTheirGrammar() throws {
        let now: Int64 = 1_757_035_472_000
        #expect(try AuditTime.parse("36h", option: "since", now: now) == now - 36 * 3_600_000)
        #expect(try AuditTime.parse(" now ", option: "since", now: now) == now)
        do {
            _ = try AuditTime.parse("soon", option: "since", now: now)
            Issue.record("soon accepted")
        } catch {
            #expect(error.message == "--since 'soon' is not a time")
            #expect(error.hint == "use " + Timestamp.inputForms)
        }
    }
}
