import Testing

@testable import IAPCommandLine

@Suite("Parsing the command line")
struct ParserTests {
    let parser = CommandLineParser(root: CommandTree.root)

    @Test func optionsAnywhereAfterThePath() throws {
        let parsed = try parser.parse(["orders", "update", "--status", "paid", "K1", "--reason=fix", "-ojson"])
        #expect(parsed.path == ["orders", "update"])
        #expect(parsed.spec.name == "update" && parsed.spec.isRunnable)
        #expect(parsed.value(OrderOptions.status.spec) == "paid")
        #expect(parsed.value(CommandTree.reasonOption.spec) == "fix")
        #expect(parsed.value(StandardOptions.output) == "json")
        #expect(parsed.arguments == ["K1"])
    }

    @Test func inheritedOptionsBeforeThePath() throws {
        let parsed = try parser.parse(["--db", "x.db", "-o", "csv", "orders", "list"])
        #expect(parsed.path == ["orders", "list"])
        #expect(parsed.value(CommandTree.dbOption.spec) == "x.db")
        #expect(parsed.value(StandardOptions.output) == "csv")
    }

    @Test func repeatableAndLastWins() throws {
        let parsed = try parser.parse([
            "notify", "--environment", "Sandbox", "--environment=production", "--bundle-id", "a", "--bundle-id", "b",
        ])
        #expect(parsed.values(CommandTree.environmentOption.spec) == ["Sandbox", "Production"])
        #expect(parsed.value(CommandTree.bundleIdOption.spec) == "b")
    }

    @Test func bundledShortFlags() throws {
        let parsed = try parser.parse(["orders", "list", "-qv"])
        #expect(parsed.flag(StandardOptions.quiet))
        #expect(parsed.flag(StandardOptions.verbose))
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parser.parse(["orders", "show", "--", "--weird-key"])
        #expect(parsed.arguments == ["--weird-key"])
    }

    @Test func dashIsAnArgument() throws {
        let parsed = try parser.parse(["notify", "-", "--dry-run"])
        #expect(parsed.arguments == ["-"])
        #expect(parsed.flag(CommandTree.dryRun))
    }

    @Test(arguments: [
        (["orders", "lst"], "unknown command 'lst'", "did you mean 'list'?"),
        (["ordrs"], "unknown command 'ordrs'", "did you mean 'orders'?"),
        (["orders", "list", "--stauts", "paid"], "unknown option '--stauts'", "did you mean '--status'?"),
        (["orders", "list", "--status", "payd"], "'payd' is not a valid status", "did you mean 'paid'?"),
        (["completion", "fsh"], "'fsh' is not a valid <shell>", "did you mean 'fish'?"),
    ])
    func usageErrorsSuggest(arguments: [String], message: String, hint: String) {
        let result = iapctl(arguments)
        #expect(result.code == 64)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("error: "))
        #expect(result.err.contains(message))
        #expect(result.err.contains("hint: \(hint)"))
        #expect(result.err.contains("Usage: iapctl"))
        #expect(result.err.contains("--help'."))
    }

    @Test(arguments: [
        (["orders", "show"], "missing argument <key>"),
        (["orders", "show", "a", "b"], "unexpected argument 'b'"),
        (["orders", "list", "--limit"], "option '--limit' needs a value"),
        (["orders", "list", "--limit", "0"], "--limit: '0' would show no rows"),
        (["orders", "list", "--user", "--status", "paid"], "option '--user' needs a value"),
        (["orders", "list", "--dry-run"], "unknown option '--dry-run'"),
        (["orders", "list", "--quiet=yes"], "option '--quiet' takes no value"),
        (["orders", "list", "-x"], "unknown option '-x'"),
        (["orders"], "missing subcommand"),
        (["contracts", "update", "C1", "--status", "active"], "missing required option --reason"),
        (["restore", "--bundle-id", "b"], "missing required option --user"),
        (["notify", "--at", "yesterday", "--bundle-id", "b"], "'yesterday' is not 'signed', 'now' or an ISO-8601"),
        (["completion"], "missing argument <shell>"),
        (["help", "orders", "lisst"], "no command 'lisst'"),
    ])
    func usageErrors(arguments: [String], message: String) {
        let result = iapctl(arguments)
        #expect(result.code == 64, "\(arguments): \(result.err)")
        #expect(result.err.contains(message), "\(result.err)")
        #expect(result.err.contains("See 'iapctl"))
    }

    @Test func usageErrorShowsTheCommandsUsageLine() {
        let result = iapctl(["contracts", "update", "C1", "--auto-renew", "maybe", "--reason", "r"])
        #expect(result.code == 64)
        #expect(result.err.contains("allowed: on, off"))
        #expect(result.err.contains("Usage: iapctl contracts update [options] <id>"))  // --reason: see #26
        #expect(result.err.contains("See 'iapctl contracts update --help'."))
    }

    @Test func enumeratedValuesAreCanonicalised() throws {
        let parsed = try parser.parse(["notify", "--environment", "sandbox", "--environment", "LOCALTESTING"])
        #expect(parsed.values(CommandTree.environmentOption.spec) == ["Sandbox", "LocalTesting"])
    }

    @Test func timestampsAccepted() throws {
        let parsed = try parser.parse(["notify", "--at", "2025-09-05T01:24:32Z"])
        #expect(parsed.value(CommandTree.atOption.spec) == "2025-09-05T01:24:32Z")
        #expect(try parser.parse(["notify", "--at", "now"]).value(CommandTree.atOption.spec) == "now")
    }

    @Test func handlerReceivesArguments() {
        let result = iapctl(["orders", "update", "K9", "--reason", "r", "--dry-run"], handlers: probeHandlers())
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.contains("args=K9"))
        #expect(result.out.contains("dry-run"))
    }
}
