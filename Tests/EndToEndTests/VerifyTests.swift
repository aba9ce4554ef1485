import Foundation
import JWSForge
import Testing

@Suite("verify: genuine Apple JWS and forged ones, as a support person sees them")
struct VerifyTests {
    static let loki = ["--bundle-id", "com.loki-project.loki-messenger", "--environment", "Sandbox"]

    @Test(arguments: ["01", "02", "03", "04", "05", "09", "10", "12", "16", "38", "39"])
    func genuineSandboxJWSVerifyAgainstTheBuiltInAppleRoot(prefix: String) throws {
        let cli = try CLI()
        let result = try cli.run(["verify", try RealFixtures.path(prefix)] + Self.loki)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("VALID"))
        #expect(result.stdout.contains("Apple Root CA - G3"))
        #expect(!result.stdout.contains("FAIL"))
    }

    @Test func productionNeedsTheAppAppleIdAndChecksIt() throws {
        let cli = try CLI()
        let path = try RealFixtures.path("17")
        let noId = try cli.run(["verify", path, "--bundle-id", "com.nineton.taller"])
        #expect(noId.status == 78)
        #expect(noId.stderr.contains("--app-apple-id"))
        let right = try cli.run(["verify", path, "--bundle-id", "com.nineton.taller", "--app-apple-id", "6450284872"])
        #expect(right.status == 0, "\(right)")
        let wrong = try cli.run(["verify", path, "--bundle-id", "com.nineton.taller", "--app-apple-id", "6450284873"])
        #expect(wrong.status == 2)
    }

    @Test func anExpiredSigningLeafFailsAtNowButPassesAtSignedDate() throws {
        let cli = try CLI()
        let path = try RealFixtures.path("01")  // signed 2025-09-05 by the leaf that expired 2025-10-11
        #expect(try cli.run(["verify", path] + Self.loki).status == 0)
        let now = try cli.run(["verify", path, "--at", "now"] + Self.loki)
        #expect(now.status == 2, "\(now)")
        #expect(now.stdout.contains("validity"))
        let fixed = try cli.run(["verify", path, "--at", "2025-09-06T00:00:00Z"] + Self.loki)
        #expect(fixed.status == 0)
    }

    @Test(arguments: [
        ("91", "com.example"), ("92", "com.example.naturelab.backyardbirds.example"),
        ("93", "GeniusParentingAI"),
    ])
    func damagedForeignAndTamperedJWSAreRejected(prefix: String, bundle: String) throws {
        let cli = try CLI()
        let result = try cli.run([
            "verify", try RealFixtures.path(prefix), "--bundle-id", bundle, "--environment", "Sandbox", "--environment", "Production",
            "--app-apple-id", "1",
        ])
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.contains("INVALID"))
    }

    @Test func jsonOutputGivesValidKindChecksAndPayload() throws {
        let cli = try CLI()
        let result = try cli.run(["verify", try RealFixtures.path("02"), "-o", "json"] + Self.loki)
        #expect(result.status == 0)
        let doc = try result.jsonObject()
        #expect(doc["valid"] as? Bool == true)
        #expect(doc["kind"] as? String == "notification")
        let checks = try #require(doc["checks"] as? [[String: Any]])
        #expect(Set(checks.compactMap { $0["name"] as? String }).isSuperset(of: ["signature", "chain", "bundle id", "environment"]))
        let payload = try #require(doc["payload"] as? [String: Any])
        #expect(payload["notificationType"] as? String == "SUBSCRIBED")
        let nested = try #require(doc["nested"] as? [String: Any])
        #expect((nested["signedTransactionInfo"] as? [String: Any])?["valid"] as? Bool == true)
    }

    @Test func webhookBodyAndHintsForTheWrongCommand() throws {
        let cli = try CLI()
        let jws = try RealFixtures.jws("38")
        let body = try cli.run(["verify"] + Self.loki, stdin: "{\"signedPayload\": \"\(try RealFixtures.jws("01"))\"}")
        #expect(body.status == 0, "\(body)")
        let notify = try cli.run(["notify", "--db", cli.path("none.db")] + Self.loki, stdin: jws)
        #expect(notify.status == 66)  // no database: says so before reading
        try cli.ok(["db", "init"])
        let wrongKind = try cli.run(["notify"] + Self.loki, stdin: jws)
        #expect(wrongKind.status == 2 || wrongKind.status == 65)
        // Each error is printed once: a table shows the error, stderr does not repeat it.
        #expect(wrongKind.stdout.contains("verify --apply"))
        #expect(!wrongKind.stderr.contains("verify --apply"))
    }

    @Test func emptyAndMalformedInput() throws {
        let cli = try CLI()
        let empty = try cli.run(["verify"] + Self.loki, stdin: "\n\n")
        #expect(empty.status == 66)
        #expect(empty.stderr.contains("no input"))
        for input in ["a.b.c", "a.b.c.d", "MIIT...legacy-receipt", "{\"signedPayload\": 1}"] {
            let r = try cli.run(["verify"] + Self.loki, stdin: input)
            #expect(r.status == 65, "\(input): \(r)")
        }
    }

    @Test func forgedChainsWithAppleOIDsAreRefusedUnlessTheirRootIsGiven() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let jws = try world.signedTransaction(world.transaction("1", original: "1"))
        let builtIn = try cli.run(["verify", "--bundle-id", AppleWorld.bundleId, "--environment", "Sandbox"], stdin: jws)
        #expect(builtIn.status == 2)
        #expect(builtIn.stdout.contains("chain"))
        let trusted = try cli.run(["verify"] + world.trust, stdin: jws)
        #expect(trusted.status == 0, "\(trusted)")
        var options = PKIOptions()
        options.leafOID = false
        let noOID = try TestPKI.make(options)
        let other = try AppleWorld(cli: cli, pki: noOID)
        let r = try cli.run(["verify"] + other.trust, stdin: try other.signedTransaction(other.transaction("1", original: "1")))
        #expect(r.status == 2)
        #expect(r.stdout.contains("leaf OID"))
    }
}
