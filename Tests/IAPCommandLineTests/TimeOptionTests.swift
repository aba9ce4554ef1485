import AppStoreJWS
import Testing

@testable import IAPCommandLine

/// Every time option reads the one grammar of `Timestamp.parse`, so no time option refuses
/// what another accepts.
@Suite("One grammar for every time option")
struct TimeOptionTests {
    let parser = CommandLineParser(root: CommandTree.root)

    @Test func verifyAtTakesWhatEntitledAtTakes() throws {
        for value in ["2025-09-05T01:24:32Z", "2025-09-05", "1757035472000", "36h", "7d", "now", "signed"] {
            #expect(try parser.parse(["verify", "--at", value]).value(CommandTree.atOption.spec) == value, "\(value)")
            if value != "signed" {
                #expect(try parser.parse(["entitled", "--user", "u", "--at", value]).value(EntitledCommand.at.spec) == value)
            }
        }
        // `signed` means the payload's own date: `entitled` has none, and says so when the line is parsed.
        #expect(throws: CLIError.self) { try parser.parse(["entitled", "--user", "u", "--at", "signed"]) }
        #expect(throws: CLIError.self) { try parser.parse(["verify", "--at", "yesterday"]) }
    }

    @Test func validationTimeOfVerify() throws {
        #expect(try TrustConfiguration.ValidationTime(optionText: "signed") == .signedDate)
        #expect(try TrustConfiguration.ValidationTime(optionText: "now") == .now)
        #expect(try TrustConfiguration.ValidationTime(optionText: "1757035472000") == .fixed(1_757_035_472_000))
        #expect(try TrustConfiguration.ValidationTime(optionText: "2025-09-05T09:24:32+08:00") == .fixed(1_757_035_472_000))
        guard case .fixed(let ms) = try TrustConfiguration.ValidationTime(optionText: "2d") else {
            Issue.record("2d is not a fixed time")
            return
        }
        let twoDaysAgo = Timestamp.now() - 2 * 86_400_000
        #expect(abs(ms - twoDaysAgo) < 60_000)
        #expect(throws: OptionValueProblem.self) { try TrustConfiguration.ValidationTime(optionText: "2025-09-05T01:24:32") }
    }

    @Test func supportToolsKeepTheirGrammar() throws {
        let now: Int64 = 1_757_035_472_000
        #expect(try PointInTime(optionText: "36h").at(now) == now - 36 * 3_600_000)
        #expect(try PointInTime(optionText: " now ").at(now) == now)
        // Refused when the line is parsed, naming the option, before the handler runs.
        let parsed = iapctl(["audit", "list", "--since", "soon"])
        #expect(parsed.code == 64)
        #expect(parsed.err.hasPrefix("error: --since 'soon' is not a time\nhint: use " + Timestamp.inputForms + "\n"))
    }
}
