import Foundation
import JWSForge
import Testing

/// What support meets at a terminal, round IV: the server a stored Sandbox contract is asked first and a
/// line while Apple is silent (G10), a refund request's deadline shown also when its answer cannot be
/// composed (G16), the key set-up in `help apple` (G24), ids completed from the database (G26), one
/// spelling of the servers and `...` for a cut under `LC_ALL=C` (G27).
@Suite("Terminal round IV: servers, waiting, deadlines, key set-up, completion, ASCII", .serialized)
struct TerminalRoundFourTests {
    let reconcile = AppleReconcileTests()
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    /// A database where subscription 1000 was bought in Sandbox (the contract stores "Sandbox"), and
    /// Apple's Sandbox answers for it agree with it; `delayMs`: how long the Sandbox status answer waits.
    func sandboxContract(delayMs: Int? = nil) throws -> (CLI, AppleWorld, AppleAPIServer) {
        let (cli, world, server) = try reconcile.setUp()
        try reconcile.bought(cli, world, ["1000"])
        let stored = try cli.ok(["contracts", "show", "1000", "-o", "json"]).jsonObject()
        #expect((stored["contract"] as? [String: Any])?["environment"] as? String == "Sandbox", "\(stored)")
        let tx = try reconcile.signed(
            world, world.transaction("1000", original: "1000", token: reconcile.token("1000")), at: t0)
        var routes = reconcile.history("1000", [[tx]])
        var status = reconcile.status("1000", 1, latest: tx, renewal: try reconcile.renewal(world, "1000", signed: t0))
        if let delayMs {
            status.responses = status.responses.map {
                var r = $0; r.delayMs = delayMs; return r
            }
        }
        routes.append(status)
        try server.routes(routes)
        return (cli, world, server)
    }

    // MARK: G10

    @Test func autoAsksAContractStoredAsSandboxOfSandboxFirst() throws {
        let (cli, world, server) = try sandboxContract()
        let r = try cli.run(["apple", "reconcile", "--contract", "1000", "--root-ca", world.rootPath])
        #expect(r.status == 0, "\(r)")
        // Production was never asked: the database knows the contract is Sandbox's.
        let servers = try server.requests().map { $0["env"] as? String }
        #expect(servers == ["sandbox", "sandbox"], "\(servers)")
        #expect(r.stdout.isEmpty || !r.stdout.contains("unknown"), "\(r)")
    }

    @Test func aStoredSandboxContractSandboxDoesNotKnowIsAskedOfProduction() throws {
        let (cli, world, server) = try reconcile.setUp()
        try reconcile.bought(cli, world, ["1000"])
        // No route: both servers answer 404 with Apple's 4040010 (Transaction id not found).
        try server.routes([])
        let r = try cli.run(["apple", "reconcile", "--contract", "1000", "--root-ca", world.rootPath])
        #expect(r.status == 3, "\(r)")
        let servers = try server.requests().map { $0["env"] as? String }
        #expect(servers == ["sandbox", "production"], "Sandbox first, then Production as Apple advises: \(servers)")
        #expect(r.stderr.contains("Sandbox does not know it (Apple error 4040010)"), "\(r.stderr)")
        // An explicit server is asked alone, whatever the database says.
        let production = try cli.run([
            "apple", "reconcile", "--contract", "1000", "--root-ca", world.rootPath, "--environment", "Production",
        ])
        #expect(production.status == 3, "\(production)")
        #expect(try server.requests().dropFirst(2).map { $0["env"] as? String } == ["production"])
    }

    /// While Apple is silent a terminal gets a line saying so, that fits the terminal and is erased when
    /// the answer comes; a pipe never gets it.
    @Test(.enabled(if: Examples.hasPython)) func aSilentServerShowsAWaitingLineOnlyAtATerminal() throws {
        let (cli, world, server) = try sandboxContract(delayMs: 2600)
        defer { withExtendedLifetime(server) {} }
        let args = ["apple", "reconcile", "--contract", "1000", "--root-ca", world.rootPath]
        for columns in [80, 120] {
            let r = try Examples.onTerminal(args, input: "", columns: columns, environment: cli.environment)
            #expect(r.status == 0, "\(columns): \(r.screen)")
            let marker = "waiting for Apple (Sandbox)… no answer for "
            #expect(r.screen.contains(marker), "\(columns): \(r.screen)")
            // Each drawing of the line starts at column 0 with the line cleared, fits the terminal, and
            // the last one is erased: what follows it starts with \r and a clear to the end of the line.
            let drawn = r.screen.components(separatedBy: "\r\u{1B}[K").filter { $0.hasPrefix("waiting for Apple") }
            #expect(!drawn.isEmpty)
            for line in drawn {
                #expect(!line.contains("\n"), "\(columns): one line: \(line)")
                #expect(line.count < columns, "\(columns): \(line)")
                #expect(line.contains("(deadline 60 s)"), "\(line)")
            }
            let afterLast = try #require(r.screen.range(of: marker, options: .backwards)).upperBound
            let rest = r.screen[afterLast...]
            #expect(rest.contains("\r\u{1B}[K"), "\(columns): the line is erased: \(r.screen)")
        }
        let piped = try cli.run(args)
        #expect(piped.status == 0, "\(piped)")
        #expect(!piped.stderr.contains("waiting"), "\(piped.stderr)")
    }

    // MARK: G16

    @Test func aRequestForATransactionWithoutAnOrderShowsItsDeadline() throws {
        let (cli, world, _) = try reconcile.setUp()
        try world.database(orders: [])
        let now = Int64(Date().timeIntervalSince1970) * 1000
        let tx = TransactionPayload(
            transactionId: "1000", originalTransactionId: "1000", bundleId: AppleWorld.bundleId,
            productId: AppleWorld.product, purchaseDate: now - 10 * day, originalPurchaseDate: now - 10 * day,
            expiresDate: now + 20 * day, signedDate: now - 10 * day, environment: "Sandbox")
        let asked = now - 3_600_000
        let request = try world.builder.consumptionRequest(
            uuid: "c0000000-0000-4000-8000-000000000009", signedDate: asked, transaction: tx)
        _ = try cli.run(["notify"] + world.trust, stdin: request + "\n")
        let listed = try #require(try cli.ok(["refunds", "list", "-o", "json"]).jsonArray().first)
        let deadline = try #require(listed["deadline_at"] as? String)
        let r = try cli.run(["refunds", "answer", "1000", "--environment", "Sandbox"])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("no paid order for transaction 1000: give --delivery-status"), "\(r.stderr)")
        #expect(r.stderr.contains("Apple waits until \(deadline)"), "the deadline, before the refusal: \(r.stderr)")
    }

    // MARK: G24

    @Test func helpAppleHasTheKeySetUpWithoutTheReadme() throws {
        let cli = try CLI()
        let help = try cli.ok(["help", "apple"]).stdout
        for text in [
            "Users and Access → Integrations → In-App Purchase", "AuthKey_KEYID.p8", "the key id", "the issuer id",
            "bundle id", "IAPCTL_APPLE_KEY_FILE", "IAPCTL_APPLE_KEY_ID", "IAPCTL_APPLE_ISSUER_ID", "IAPCTL_BUNDLE_ID",
            "\"apple-key-file\"", "--config", "iapctl apple settings", "chmod 600",
        ] {
            #expect(help.contains(text), "\(text)")
        }
        #expect(!help.contains("README"), "the README is not installed with the binary")
        let man = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("man/iapctl-apple.1"), encoding: .utf8)
        #expect(man.contains("AuthKey_KEYID.p8") && man.contains("IAPCTL_APPLE_ISSUER_ID") && !man.contains("README"))
    }

    // MARK: G26

    @Test func theLookUpPrintsTheDatabasesIdsAndNothingElse() throws {
        let cli = try Examples.exampleDatabase()
        let users = try cli.ok(["__complete", "users", "al"])
        #expect(users.stdout == "alice\n", "\(users)")
        #expect(users.stderr.isEmpty)
        let everyone = try cli.ok(["__complete", "users"]).stdout.split(separator: "\n")
        #expect(everyone.count > 1 && everyone == everyone.sorted() && everyone.contains("alice"), "\(everyone)")
        let contracts = try cli.ok(["__complete", "contracts", "20000009000000"]).stdout.split(separator: "\n")
        #expect(contracts.contains("2000000900000001"), "\(contracts)")
        #expect(contracts.allSatisfy { $0.hasPrefix("20000009000000") })
        let orders = try cli.ok(["__complete", "orders", "7b1f"]).stdout
        #expect(orders == "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e\n", "\(orders)")
        // A database that is not there: nothing printed, nothing created, on stdout or stderr.
        let missing = try cli.run(["__complete", "users", "a", "--db", cli.path("nope.db")])
        #expect(missing.stdout.isEmpty && missing.stderr.isEmpty, "\(missing)")
        #expect(missing.status != 0)
        #expect(!cli.exists("nope.db"))
        // A mistake on the line is silent too.
        let wrong = try cli.run(["__complete", "people", "a"])
        #expect(wrong.stdout.isEmpty && wrong.stderr.isEmpty, "\(wrong)")
        // It writes nothing: the database's counts are unchanged.
        let before = try cli.ok(["db", "status", "-o", "json"]).stdout
        _ = try cli.ok(["__complete", "contracts"])
        #expect(try cli.ok(["db", "status", "-o", "json"]).stdout == before)
    }

    /// The generated scripts complete ids from the database the line names, as a shell runs them.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash")))
    func bashCompletesUsersAndContractsFromTheDatabase() throws {
        let cli = try Examples.exampleDatabase()
        let db = try #require(cli.environment["IAPCTL_DB"])
        let script = try cli.write("iapctl.bash", try cli.ok(["completion", "bash"]).stdout)
        let bin = CLI.binary.deletingLastPathComponent().path
        let lines = """
            export PATH='\(bin)':"$PATH"
            unset IAPCTL_DB
            source '\(script)'
            COMP_WORDS=(iapctl orders list --db '\(db)' --user al); COMP_CWORD=6; _iapctl; echo "${COMPREPLY[*]}"
            COMP_WORDS=(iapctl contracts show 200000090000000 --db '\(db)'); COMP_CWORD=3; _iapctl; echo "${COMPREPLY[*]}"
            COMP_WORDS=(iapctl contracts show 200000090000000 --db '\(db)'); COMP_CWORD=3; _iapctl; echo "${#COMPREPLY[@]}"
            COMP_WORDS=(iapctl contracts show 2 --db missing/nope.db); COMP_CWORD=3; _iapctl; echo "[${COMPREPLY[*]}]"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", lines]
        process.currentDirectoryURL = cli.dir
        // The run's own environment (a MySQL database's password among it), with the shell's PATH.
        process.environment = cli.environment.merging(
            ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let got = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(got.first == "alice", "\(text)")
        #expect(got.count > 3 && got[1].hasPrefix("2000000900000001"), "\(text)")
        #expect(got.count > 3 && (Int(got[2]) ?? 0) >= 1, "\(text)")
        #expect(got.count > 3 && got[3] == "[]", "no database: nothing, silently: \(text)")
    }

    @Test func everyScriptAsksTheLookUpForUsersAndContracts() throws {
        let cli = try CLI()
        for shell in ["bash", "zsh", "fish"] {
            let script = try cli.ok(["completion", shell]).stdout
            #expect(script.contains("__complete"), "\(shell)")
            #expect(script.contains("lookup users"), "\(shell)")
            #expect(script.contains("lookup contracts"), "\(shell)")
            #expect(script.contains("lookup orders"), "\(shell)")
            #expect(script.contains("--db") && script.contains("--config"), "\(shell)")
        }
    }

    // MARK: G27

    @Test func theServersAreSpelledOneWay() throws {
        let cli = try CLI()
        let words = { (text: String) in text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let reconcileHelp = words(try cli.ok(["apple", "reconcile", "--help"]).stdout)
        let verifyHelp = words(try cli.ok(["verify", "--help"]).stdout)
        #expect(reconcileHelp.contains("Production, Sandbox, auto"), "\(reconcileHelp)")
        #expect(verifyHelp.contains("Production, Sandbox, Xcode, LocalTesting"), "\(verifyHelp)")
        for help in [reconcileHelp, verifyHelp, words(try cli.ok(["help", "apple"]).stdout)] {
            #expect(!help.contains("production, sandbox"))
            #expect(!help.contains("--environment sandbox") && !help.contains("--environment production"))
        }
        // Any case is still accepted.
        for spelling in ["sandbox", "SANDBOX", "Sandbox"] {
            let r = try cli.run(["apple", "settings", "--environment", spelling])
            #expect(r.status != 64, "\(spelling): \(r)")
        }
        let wrong = try cli.run(["apple", "settings", "--environment", "sandbx"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("Production, Sandbox, auto") && wrong.stderr.contains("'Sandbox'"), "\(wrong.stderr)")
    }

    /// Under LC_ALL=C a cut cell ends in `...` (not `~`), and the table stays aligned: `->` and `...`
    /// are laid out as they are written.
    @Test(.enabled(if: Examples.hasPython)) func aCLocaleTableCutsWithThreeDotsAndStaysAligned() throws {
        let cli = try Examples.exampleDatabase()
        let environment = cli.environment.merging(["LC_ALL": "C"]) { $1 }
        for columns in [80, 120] {
            let r = try Examples.onTerminal(["orders", "list"], input: "", columns: columns, environment: environment)
            #expect(r.status == 0, "\(r.screen)")
            let lines = r.screen.replacingOccurrences(of: "\r\n", with: "\n")
                .replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
                .split(separator: "\n").map(String.init)
            #expect(!r.screen.contains("…") && !r.screen.contains("~"), "\(columns): \(r.screen)")
            if columns == 80 { #expect(r.screen.contains("..."), "\(r.screen)") }
            let header = try #require(lines.first { $0.hasPrefix("NO ") }, "\(lines)")
            let status = try #require(header.range(of: "STATUS")).lowerBound.utf16Offset(in: header)
            for line in lines where line.contains(" paid ") || line.contains(" pending ") {
                #expect(line.count <= columns, "\(columns): \(line)")
                let cell = line.utf16.dropFirst(status).prefix(4)
                #expect(["paid", "pend", "refu", "revo"].contains(String(cell) ?? ""), "\(columns): aligned: \(line)")
            }
        }
    }
}
