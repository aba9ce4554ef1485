import Foundation
import Testing

/// StoreKit 1 app receipts through the real binary: `verify` (every input form and output format),
/// `restore` answering support's questions, and `--apply` as a lower-authority client submission.
/// Runs on SQLite and, in the MariaDB pass of scripts/test, on MariaDB.
@Suite("app receipts, end to end")
struct ReceiptE2ETests {
    static let directory = CLI.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/receipts")
    /// RevenueCat's 2020 sandbox receipt: 9 entries of subscription 1000000692878476.
    static let original = "1000000692878476"
    static let weekly = "com.revenuecat.monthly_4.99.1_week_intro"
    static let trust = ["--bundle-id", "com.revenuecat.sampleapp", "--environment", "Sandbox"]

    static func base64(_ name: String = "revenuecat-sandbox-receipt.b64") throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The receipt as a DER file in the CLI's folder.
    static func derFile(_ cli: CLI) throws -> String {
        let der = try #require(Data(base64Encoded: try base64()))
        let path = cli.dir.appendingPathComponent("receipt.der").path
        try der.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func verifyReadsEveryFormAndPrintsEveryFormat() throws {
        let cli = try CLI()
        let b64 = try Self.base64()
        let table = try cli.run(["verify"] + Self.trust, stdin: b64)
        #expect(table.status == 0, "\(table)")
        #expect(table.stdout.contains("app receipt: VALID"))
        #expect(table.stdout.contains("in-app entries: 9"))

        let json = try cli.run(["verify", "-o", "json", try Self.derFile(cli)] + Self.trust)
        #expect(json.status == 0, "\(json)")
        let doc = try json.jsonObject()
        #expect(doc["kind"] as? String == "receipt")
        #expect(doc["valid"] as? Bool == true)
        let payload = try #require(doc["payload"] as? [String: Any])
        let inApp = try #require(payload["in_app"] as? [[String: Any]])
        #expect(inApp.count == 9)
        #expect(inApp.allSatisfy { $0["original_transaction_id"] as? String == Self.original })

        let body = "{\"receipt-data\": \"\(b64)\", \"exclude-old-transactions\": true}"
        let ndjson = try cli.run(["verify", "-o", "ndjson"] + Self.trust, stdin: body)
        #expect(ndjson.status == 0, "\(ndjson)")
        #expect(try ndjson.ndjson().first?["kind"] as? String == "receipt")
        let csv = try cli.run(["verify", "-o", "csv"] + Self.trust, stdin: b64)
        #expect(csv.status == 0)
        #expect(csv.stdout.contains("receipt"))

        // Base64 wrapped at 76 columns (as `base64` prints it), then another item: two items.
        var wrapped = ""
        var rest = Substring(b64)
        while !rest.isEmpty {
            wrapped += rest.prefix(76) + "\n"
            rest = rest.dropFirst(76)
        }
        let lines = try cli.run(["verify", "-o", "ndjson"] + Self.trust, stdin: wrapped + "a.b.c\n")
        #expect(lines.status == 1, "\(lines)")
        let docs = try lines.ndjson()
        #expect(docs.count == 2)
        #expect(docs.first?["valid"] as? Bool == true)
        #expect(docs.first?["kind"] as? String == "receipt")
        #expect(docs.last?["valid"] as? Bool == false)

        // receipt-data that is not a receipt is malformed (65), not read as a JWS.
        let notReceipt = try cli.run(["verify", "-o", "json"] + Self.trust, stdin: #"{"receipt-data": "eyJhbGciOi"}"#)
        #expect(notReceipt.status == 65, "\(notReceipt)")
        #expect(notReceipt.stderr.contains("receipt-data"))

        // A receipt and a garbage line: a batch, one document each.
        let batch = try cli.run(["verify", "-o", "ndjson"] + Self.trust, stdin: b64 + "\nMIInotbase64!!\n")
        #expect(batch.status == 1)
        #expect(try batch.ndjson().count == 2)
    }

    @Test func failedChecksAreNamedWithExitTwoAndMalformedWithSixtyFive() throws {
        let cli = try CLI()
        let b64 = try Self.base64()
        let now = try cli.run(["verify", "--at", "now", "-o", "json"] + Self.trust, stdin: b64)
        #expect(now.status == 2, "\(now)")
        #expect((try now.jsonObject()["error"] as? [String: Any])?["code"] as? String == "certificateExpiredOrNotYetValid")
        let bundle = try cli.run(["verify", "--bundle-id", "com.other", "--environment", "Sandbox"], stdin: b64)
        #expect(bundle.status == 2)
        #expect(bundle.stdout.contains("[FAIL] bundle id"))
        let production = try cli.run(["verify", "--bundle-id", "com.revenuecat.sampleapp"], stdin: b64)
        #expect(production.status == 2)
        #expect(production.stdout.contains("[FAIL] environment"))
        // Xcode's test certificate as the only receipt root: Apple's receipt is not trusted.
        let foreign = try cli.run(
            [
                "verify", "--receipt-root-ca",
                CLI.packageRoot.appendingPathComponent("Tests/AppStoreReceiptTests/Fixtures/StoreKitTestCertificate.cer").path,
            ]
                + Self.trust, stdin: b64)
        #expect(foreign.status == 2)
        #expect(foreign.stdout.contains("[FAIL] chain"))
        var bytes = [UInt8](try #require(Data(base64Encoded: b64)))
        bytes[bytes.count / 2] ^= 0x01
        let tampered = try cli.run(["verify"] + Self.trust, stdin: Data(bytes).base64EncodedString())
        #expect(tampered.status == 2)
        let truncated = try cli.run(["verify"] + Self.trust, stdin: String(b64.prefix(400)))
        #expect(truncated.status == 65, "\(truncated)")
        // Nothing was written by any of them (verify without --apply never opens the database).
        #expect(!cli.exists("iapctl.db"))
    }

    /// An Xcode StoreKit-testing receipt: refused under Apple's root, accepted with its certificate
    /// trusted explicitly (and --environment Xcode), with a warning.
    @Test func xcodeReceiptNeedsItsCertificateTrustedExplicitly() throws {
        let cli = try CLI()
        let file = Self.directory.appendingPathComponent("receipt-xcode-with-purchases").path
        let bundle = ["--bundle-id", "com.example.naturelab.backyardbirds.example", "--environment", "Xcode"]
        let apple = try cli.run(["verify", file] + bundle)
        #expect(apple.status == 2, "\(apple)")
        #expect(apple.stdout.contains("[FAIL] chain"))
        let certificate = Self.directory.appendingPathComponent("StoreKitTestCertificate.cer").path
        let trusted = try cli.run(["verify", file, "--receipt-root-ca", certificate, "-o", "json"] + bundle)
        #expect(trusted.status == 0, "\(trusted)")
        let doc = try trusted.jsonObject()
        #expect((doc["warnings"] as? [String])?.first?.contains("self-signed") == true)
        #expect((doc["payload"] as? [String: Any])?["receipt_type"] as? String == "Xcode")
        // Trusted, but Xcode data is still only accepted when asked for.
        let production = try cli.run(
            ["verify", file, "--receipt-root-ca", certificate, "--bundle-id", "com.example.naturelab.backyardbirds.example"])
        #expect(production.status == 2)
    }

    /// Support's restore questions on a receipt: which orders, on what basis, whose; owned-by-other
    /// for another user; nothing moves without a policy; the receipt is kept in the ledger.
    @Test func restoreAnswersTheSeedsQuestions() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database()
        let pending = try cli.ok(["orders", "create", "--user", "alice", "--product", Self.weekly]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let b64 = try Self.base64()

        // notify does not take receipts, and says where they go.
        let notify = try cli.run(["notify"] + Self.trust, stdin: b64)
        #expect(notify.status == 65, "\(notify)")
        #expect((notify.stdout + notify.stderr).contains("iapctl restore"))

        // Look-up: the product fallback finds alice's pending order; the annual entry matches nothing.
        let lookup = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(lookup.status == 1, "\(lookup)")
        let first = try lookup.ndjson()
        #expect(first.count == 9)
        #expect(first.filter { $0["verdict"] as? String == "restorable" }.allSatisfy { $0["basis"] as? String == "product" })
        // Item keys are snake_case.
        #expect(first.filter { $0["verdict"] as? String == "unknown" }.map { $0["transaction_id"] as? String } == ["1000000696553650"])
        #expect(try world.order(no: pending)?["status"] as? String == "pending")

        // Apply: the pending order is paid, the other periods become alice's orders, one contract.
        let applied = try cli.run(["restore", "--user", "alice", "--apply", "-o", "ndjson", try Self.derFile(cli)] + Self.trust)
        #expect(applied.status == 0, "\(applied)")
        #expect(try applied.ndjson().allSatisfy { $0["verdict"] as? String == "restored" })
        #expect(try world.order(no: pending)?["status"] as? String == "paid")
        let contract = try #require(try world.contract(Self.original))
        #expect(contract["user_id"] as? String == "alice")
        // A receipt proves a period that ended in 2020: the contract is not active on it.
        #expect(contract["status"] as? String == "expired")
        #expect(try world.orders().filter { $0["origin_no"] as? String == Self.original }.count == 9)

        // Again: now by transaction id, all alice's.
        let again = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(try again.ndjson().allSatisfy { $0["basis"] as? String == "transaction-id" && $0["owner"] as? String == "alice" })

        // Bob restores alice's receipt: owned-by-other, nothing moves.
        let before = try world.tables(maskGeneratedNumbers: [pending])
        let bob = try cli.run(["restore", "--user", "bob", "--apply", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(bob.status == 1, "\(bob)")
        #expect(try bob.ndjson().allSatisfy { $0["verdict"] as? String == "owned-by-other" && $0["owner"] as? String == "alice" })
        #expect(try world.tables(maskGeneratedNumbers: [pending]) == before)

        // doctor finds nothing to "fix" (receipt items never decide a state), explain names the rule.
        let doctor = try cli.run(["doctor", "--environment", "Sandbox"])
        #expect(doctor.status == 0, "\(doctor)")
        let explain = try cli.ok(["contracts", "explain", Self.original])
        #expect(explain.stdout.contains("receipt submission"))

        // The receipt is in the ledger: the order's history lists the receipt's events.
        let show = try cli.ok(["orders", "show", pending, "-o", "json"]).jsonObject()
        let events = try #require(show["events"] as? [[String: Any]])
        #expect(events.contains { $0["source"] as? String == "restore" && $0["transaction_id"] as? String == Self.original })
        #expect(events.allSatisfy { $0["event"] as? String == "receipt entry" })
    }

    /// Only the receipt's latest entry (the annual product the subscription moved to) matches a
    /// pending order: one `restore --apply` links all nine entries (the weekly ones were `unknown`
    /// until a second run), and `--dry-run` says so first without writing.
    @Test func oneApplyLinksEveryEntryOfTheSubscription() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database()
        let pending = try cli.ok(["orders", "create", "--user", "alice", "--product", "com.revenuecat.annual_39.99.2_week_intro"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let b64 = try Self.base64()
        let before = try world.tables(maskGeneratedNumbers: [pending])

        let dry = try cli.run(["restore", "--user", "alice", "--apply", "--dry-run", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(dry.status == 0, "\(dry)")
        #expect(try dry.ndjson().map { $0["verdict"] as? String } == Array(repeating: "restorable", count: 9))
        #expect(try world.tables(maskGeneratedNumbers: [pending]) == before)

        let applied = try cli.run(["restore", "--user", "alice", "--apply", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(applied.status == 0, "\(applied)")
        let rows = try applied.ndjson()
        #expect(rows.map { $0["verdict"] as? String } == Array(repeating: "restored", count: 9))
        #expect(rows.filter { $0["basis"] as? String == "product" }.map { $0["transaction_id"] as? String } == ["1000000696553650"])
        #expect(try world.order(no: pending)?["status"] as? String == "paid")
        let linked = try world.orders().filter { $0["origin_no"] as? String == Self.original }
        #expect(linked.count == 9 && linked.allSatisfy { $0["user_id"] as? String == "alice" })
        // Nothing was left for a second run: no unmatched item in the ledger, a second run changes nothing.
        let status = try cli.ok(["db", "status", "-o", "json"]).jsonObject()
        #expect(status["unmatched"] as? Int == 0 && status["ledger"] as? Int == 9)
        let after = try world.tables(maskGeneratedNumbers: [pending])
        let again = try cli.run(["restore", "--user", "alice", "--apply", "-o", "ndjson"] + Self.trust, stdin: b64)
        #expect(try again.ndjson().allSatisfy { $0["basis"] as? String == "transaction-id" })
        #expect(try world.tables(maskGeneratedNumbers: [pending]) == after)
    }

    /// `verify --apply` of a receipt is a client submission of lower authority: it records payments
    /// but never reopens (or revokes, or expires) a contract.
    @Test func applyNeverReopensARevokedContract() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database()
        _ = try cli.ok(["orders", "create", "--user", "alice", "--product", Self.weekly])
        let b64 = try Self.base64()
        try cli.ok(["restore", "--user", "alice", "--apply", "-q"] + Self.trust, stdin: b64)
        try cli.ok(["contracts", "update", Self.original, "--status", "revoked", "--reason", "test: Apple revoked it"])
        let before = try world.tables()

        let applied = try cli.run(["verify", "--apply", "-o", "json"] + Self.trust, stdin: b64)
        #expect(applied.status == 0, "\(applied)")
        let results = try #require(try applied.jsonObject()["apply"] as? [[String: Any]])
        #expect(results.count == 9)
        #expect(results.allSatisfy { ["duplicate", "ignored"].contains($0["verdict"] as? String ?? "") })
        #expect(try applied.jsonObject()["verdict"] as? String == results.first?["verdict"] as? String)
        #expect(try world.contract(Self.original)?["status"] as? String == "revoked")
        #expect(try world.tables() == before)

        // Unknown purchases stay unmatched (no appAccountToken in a receipt): said so, nothing guessed.
        let fresh = try CLI()
        let other = try AppleWorld(cli: fresh)
        try other.database()
        let unmatched = try fresh.run(["verify", "--apply", "-o", "json"] + Self.trust, stdin: b64)
        #expect(unmatched.status == 3, "\(unmatched)")
        let verdicts = try #require(try unmatched.jsonObject()["apply"] as? [[String: Any]]).map { $0["verdict"] as? String }
        #expect(verdicts.allSatisfy { $0 == "unmatched" })
        // The receipt's own verdict says the same (it said `rejected` while its entries were kept).
        #expect(try unmatched.jsonObject()["verdict"] as? String == "unmatched")
        #expect(try other.orders().isEmpty)

        // Once the purchase is known, replaying the unmatched items re-verifies the receipt (kept once,
        // with the first entry; the others point to it) and finds the work done.
        _ = try fresh.ok(["orders", "create", "--user", "carol", "--product", Self.weekly])
        try fresh.ok(["restore", "--user", "carol", "--apply", "-q"] + Self.trust, stdin: b64)
        let replay = try fresh.run(["notify", "--replay-unmatched", "-o", "ndjson"] + Self.trust)
        #expect(replay.status == 0, "\(replay)")
        let replayed = try replay.ndjson()
        #expect(replayed.count == 9)
        #expect(replayed.allSatisfy { $0["verdict"] as? String == "duplicate" })
        #expect(try other.orders().count == 9)
    }
}
