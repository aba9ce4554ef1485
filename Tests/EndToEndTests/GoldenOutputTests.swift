import Foundation
import JWSForge
import Testing

/// The exact bytes every command prints, pinned: a refactor must keep JSON/NDJSON/CSV output
/// byte-identical for the same inputs.
///
/// One deterministic scenario (fixed order numbers, transaction ids, notification UUIDs and Apple dates)
/// is run on a fresh database once per output format (`table`, `json`, `ndjson`, `csv`), every command in
/// that format; each command's stdout is compared byte for byte with
/// `Fixtures/golden/<step>.<format>`, and every exit status with `Fixtures/golden/exit-codes.<format>.txt`.
/// The four formats are four test cases (run in parallel), each on its own fresh database.
/// `IAPCTL_GOLDEN_RECORD=1 swift test --filter GoldenOutput` rewrites the files instead (only for a
/// deliberate, reviewed change of output: see Fixtures/golden/README.md).
///
/// Only what is truly run-specific is normalised (``Normaliser``): the temp folder, compact JWS signed with
/// this run's throwaway keys (and the header length, which varies with their signatures), the order numbers
/// the engine generates (random UUIDs, as `<order of TRANSACTIONID >` or `<generated >` of the same width),
/// and wall-clock times of this run (row creation, audit time; every digit masked as N, of the same width).
@Suite("golden output of every command")
struct GoldenOutputTests {
    /// `Fixtures/golden/`, or `Fixtures/golden/mysql/` on the MySQL run (its audit ids have the gaps of
    /// InnoDB's auto-increment, `db status` names the backend, a URL is quoted in a FIX command), or
    /// `Fixtures/golden/postgres/` on the PostgreSQL run (its backend and URL, its identities' gaps).
    static let directory = CLI.packageRoot.appendingPathComponent(
        "Tests/EndToEndTests/Fixtures/golden"
            + [E2EBackend.sqlite: "", .mysql: "/mysql", .postgres: "/postgres"][E2EBackend.current]!)
    static let recording = ProcessInfo.processInfo.environment["IAPCTL_GOLDEN_RECORD"] == "1"
    static let formats = ["table", "json", "ndjson", "csv"]

    static let alice = "11111111-1111-4111-8111-111111111111"
    static let bob = "22222222-2222-4222-8222-222222222222"
    static let carol = "33333333-3333-4333-8333-333333333333"
    static let dave = "44444444-4444-4444-8444-444444444444"
    static let erin = "99999999-9999-4999-8999-999999999999"
    static let day = AppleWorld.day
    static let t0 = AppleWorld.t0

    static func uuid(_ n: Int) -> String { "aaaaaaaa-0000-4000-8000-\(String(format: "%012d", n))" }

    /// The signed inputs, made once per test run with one throwaway CA (and one forger's).
    struct Inputs {
        var notifications: [String] = []
        var dryRun = ""
        var transaction = ""
        var restore: [String] = []
        var transfer = ""
        var forged = ""
    }

    static func inputs(_ world: AppleWorld, forger: AppleWorld) throws -> Inputs {
        var inputs = Inputs()
        let tx = { (id: String, original: String, token: String?, period: Int64, revoked: Bool) in
            world.transaction(id, original: original, token: token, period: period, revoked: revoked)
        }
        inputs.notifications = [
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: uuid(1), signed: t0, tx: tx("1000", "1000", alice, 0, false)),
            try world.notification(
                "DID_RENEW", uuid: uuid(2), signed: t0 + 30 * day, tx: tx("1001", "1000", alice, 1, false)),
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: uuid(3), signed: t0, tx: tx("2000", "2000", bob, 0, false)),
            try world.notification(
                "REFUND", uuid: uuid(4), signed: t0 + 2 * day, tx: tx("2000", "2000", bob, 0, true)),
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: uuid(5), signed: t0, tx: tx("3000", "3000", erin, 0, false)),
            try forger.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: uuid(6), signed: t0, tx: tx("6000", "6000", alice, 0, false)),
            try world.notification(
                "SUBSCRIBED", "INITIAL_BUY", uuid: uuid(7), signed: t0, tx: tx("4000", "4000", carol, 0, false)),
            try world.notification(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", uuid: uuid(8), signed: t0 + 5 * day,
                tx: tx("4000", "4000", carol, 0, false), autoRenew: 0),
            try world.notification(
                "EXPIRED", "VOLUNTARY", uuid: uuid(9), signed: t0 + 30 * day, tx: tx("4000", "4000", carol, 0, false),
                autoRenew: 0),
            try world.builder.testNotification(uuid: uuid(10), signedDate: t0 + 31 * day),
        ]
        inputs.notifications.append(inputs.notifications[0])  // a duplicate
        inputs.dryRun = try world.notification(
            "DID_RENEW", uuid: uuid(11), signed: t0 + 60 * day, tx: tx("1002", "1000", alice, 2, false))
        inputs.transaction = try world.signedTransaction(tx("5000", "5000", dave, 0, false))
        inputs.restore = [
            try world.signedTransaction(tx("1001", "1000", alice, 1, false)),
            try world.signedTransaction(tx("4000", "4000", carol, 0, false)),
            try world.signedTransaction(tx("7000", "7000", nil, 0, false)),
        ]
        inputs.transfer = inputs.restore[1]
        inputs.forged = try forger.signedTransaction(tx("5001", "5000", dave, 1, false))
        return inputs
    }

    @Test(arguments: formats)
    func everyCommand(format: String) throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let inputs = try Self.inputs(world, forger: AppleWorld(cli: cli, pki: TestPKI.make()))
        var pass = Pass(cli: cli, world: world, format: format, inputs: inputs)
        try pass.run()
        try GoldenResults(format: format, outputs: pass.outputs).check()
    }

    /// One run of the scenario with every command in `format`.
    struct Pass {
        let cli: CLI
        let world: AppleWorld
        let format: String
        let inputs: Inputs
        var normaliser: Normaliser
        var outputs: [(name: String, command: String, status: Int32, stdout: String)] = []

        init(cli: CLI, world: AppleWorld, format: String, inputs: Inputs) {
            self.cli = cli
            self.world = world
            self.format = format
            self.inputs = inputs
            normaliser = Normaliser(dir: cli.dir.path, database: cli.dbPath)
            if let (server, _) = cli.server {
                // Asked in the server's test database: this run's own is not made yet.
                let query = cli.dialect(sqlite: "", mysql: "SELECT VERSION()", postgres: "SHOW server_version")
                let version = (try? server.run(query, database: nil))?.trimmingCharacters(in: .whitespacesAndNewlines)
                normaliser.serverVersion = version?.isEmpty == false ? version : nil
            }
        }

        /// Runs `iapctl args… -o FORMAT` and keeps its normalised stdout as golden step `name`.
        /// `learn`: the command may have stored orders with generated numbers (learnt before normalising).
        mutating func step(_ name: String, _ args: [String], stdin: String? = nil, learn: Bool = false) throws {
            let full = args + ["-o", format]
            let result = try cli.run(full, stdin: stdin)
            if learn { try learnGeneratedOrders() }
            outputs.append(
                (
                    "\(name).\(format)", "iapctl " + full.joined(separator: " "), result.status,
                    normaliser.normalise(result.stdout)
                ))
        }

        /// Learns the order numbers the engine generated (named by their transactionId from now on).
        mutating func learnGeneratedOrders() throws {
            for order in try cli.orders() {
                guard let no = order["no"] as? String, let trade = order["trade_no"] as? String else { continue }
                if !Normaliser.fixed.contains(no) { normaliser.generated[no] = Normaliser.sameWidth("<order of \(trade)", no) }
            }
        }

        var alice: String { GoldenOutputTests.alice }
        var bob: String { GoldenOutputTests.bob }
        var carol: String { GoldenOutputTests.carol }
        var dave: String { GoldenOutputTests.dave }
        var erin: String { GoldenOutputTests.erin }

        mutating func run() throws {
            // The world's own root file has a random name, which the rejection message quotes.
            let root = try cli.write("root.pem", world.pki.rootPEM)
            let trust = ["--root-ca", root, "--bundle-id", AppleWorld.bundleId, "--environment", "Sandbox"]
            try step("01-db-init", ["db", "init"])
            try step("02-orders-create", ["orders", "create", "--user", "alice", "--product", AppleWorld.product, "--no", alice])
            for (user, no) in [("bob", bob), ("carol", carol), ("dave", dave)] {
                try cli.ok(["orders", "create", "--user", user, "--product", AppleWorld.product, "--no", no])
            }
            let batch = try cli.write("notifications.ndjson", inputs.notifications.joined(separator: "\n") + "\n")
            try step("03-notify", ["notify", batch] + trust, learn: true)
            try step("04-notify-dry-run", ["notify", "--dry-run"] + trust, stdin: inputs.dryRun)
            let tx = try cli.write("transaction.jws", inputs.transaction)
            try step("05-verify", ["verify", tx] + trust)
            try step("06-verify-apply", ["verify", "--apply", tx] + trust, learn: true)
            let receipt = CLI.packageRoot.appendingPathComponent(
                "Tests/EndToEndTests/Fixtures/receipts/revenuecat-sandbox-receipt.b64"
            ).path
            try step(
                "07-verify-receipt",
                ["verify", receipt, "--bundle-id", "com.revenuecat.sampleapp", "--environment", "Sandbox"])
            let restore = try cli.write("restore.txt", inputs.restore.joined(separator: "\n") + "\n")
            try step("08-restore", ["restore", "--user", "alice", restore] + trust)
            try step(
                "09-restore-apply-transfer",
                ["restore", "--user", "alice", "--apply", "--policy", "transfer-if-inactive", "--reason", "golden transfer"]
                    + trust, stdin: inputs.transfer, learn: true)
            try cli.ok(["orders", "create", "--user", "erin", "--product", AppleWorld.product, "--no", erin])
            try step("10-notify-replay-unmatched", ["notify", "--replay-unmatched"] + trust, learn: true)
            try step(
                "11-orders-update-dry-run",
                ["orders", "update", bob, "--status", "refunded", "--reason", "golden: support refund", "--dry-run"])
            try step(
                "12-orders-update",
                ["orders", "update", bob, "--status", "refunded", "--reason", "golden: support refund", "--ticket", "T-1"])
            try step(
                "13-contracts-update",
                ["contracts", "update", "1000", "--status", "canceled", "--reason", "golden: user asked", "--ticket", "T-2"])
            try step("14-audit-list", ["audit", "list"])
            let last = try #require(try cli.ok(["audit", "list", "--limit", "1", "-o", "json"]).jsonArray().first?["id"])
            try step("15-audit-show", ["audit", "show", "\(last)"])
            try step("16-audit-undo-dry-run", ["audit", "undo", "\(last)", "--reason", "golden undo", "--dry-run"])
            try step("17-audit-undo", ["audit", "undo", "\(last)", "--reason", "golden undo"])
            try step("18-audit-list-contract", ["audit", "list", "--contract", "1000"])
            try step("19-doctor", ["doctor", "--environment", "Sandbox"])
            try step("20-entitled-alice", ["entitled", "--user", "alice", "--at", "2025-02-15T00:00:00Z"])
            try step("21-entitled-bob", ["entitled", "--user", "bob", "--at", "2025-01-01T12:00:00Z"])
            try step("22-entitled-carol", ["entitled", "--user", "carol", "--at", "2025-01-10T00:00:00Z"])
            try step("23-contracts-list", ["contracts", "list"])
            try step("24-contracts-show", ["contracts", "show", "1000"])
            try step("25-contracts-explain", ["contracts", "explain", "1000"])
            try step("26-contracts-explain-transferred", ["contracts", "explain", "4000"])
            try step("27-orders-list", ["orders", "list"])
            try step("28-orders-show", ["orders", "show", "1000"])
            try step("29-orders-show-refunded", ["orders", "show", bob])
            try step("30-db-status", ["db", "status"])
            let rows = try cli.write(
                "corrections.ndjson",
                """
                {"no": "\(dave)", "status": "refunded", "ticket": "T-3"}
                {"trade_no": "1000", "expires_date": "2025-02-01T00:00:00Z"}

                """)
            try step("31-orders-update-batch", ["orders", "update", "--from", rows, "--reason", "golden batch"])
            try step(
                "32-contracts-update-dry-run",
                ["contracts", "update", "5000", "--status", "revoked", "--reason", "golden", "--dry-run"])
            let forged = try cli.write("forged.jws", inputs.forged)
            try step("33-verify-forged", ["verify", forged] + trust)
            try step("34-orders-list-redact", ["orders", "list", "--redact"])
            try step("35-audit-list-user", ["audit", "list", "--user", "bob"])
            // A saved Get Notification History response: one notification applied, one never received.
            let history = try cli.write(
                "history.json",
                """
                {"notificationHistory": [\
                {"sendAttempts": [{"attemptDate": 1735689600000, "sendAttemptResult": "SUCCESS"}], \
                "signedPayload": "\(inputs.notifications[0])"}, \
                {"sendAttempts": [{"attemptDate": 1740873600000, "sendAttemptResult": "NO_RESPONSE"}], \
                "signedPayload": "\(inputs.dryRun)"}], "hasMore": false}
                """)
            try step("36-notify-gap-report", ["notify", "--gap-report", history] + trust)
            try step("37-notify-gap-report-apply", ["notify", "--gap-report", history, "--apply"] + trust, learn: true)
            try step("38-orders-list-after-gap", ["orders", "list"])
            try step(
                "39-restore-receipt",
                ["restore", "--user", "alice", receipt, "--bundle-id", "com.revenuecat.sampleapp", "--environment", "Sandbox"])
            let batchOrders = try cli.write(
                "new-orders.ndjson",
                """
                {"user": "frank", "product": "com.example.app.monthly"}
                {"user": "grace", "product": "com.example.app.yearly"}

                """)
            try step("40-orders-create-batch", ["orders", "create", "--from", batchOrders])
            // A refund request (its 12 hours long over) and a withdrawn consent: the desk's lists.
            let asked = AppleWorld.t0 + 40 * AppleWorld.day
            let request = try world.builder.consumptionRequest(
                uuid: "aaaaaaaa-0000-4000-8000-0000000000c1", signedDate: asked,
                transaction: world.transaction("1000", original: "1000"))
            let rescind = try world.builder.rescindConsent(
                uuid: "aaaaaaaa-0000-4000-8000-0000000000c2", signedDate: asked, appTransactionId: "704289572311",
                originalPurchaseDate: AppleWorld.t0)
            try cli.ok(["notify"] + trust, stdin: request + "\n" + rescind + "\n")
            try step("41-refunds-list", ["refunds", "list"])
            try step("42-refunds-consents", ["refunds", "consents"])
            try step("43-customer-by-transaction", ["customer", "1000"])
            try step("44-contracts-list-risk", ["contracts", "list", "--risk", "auto-renew-off"])
        }
    }

    /// What makes one run's output differ from another's without any change of behaviour; nothing else.
    struct Normaliser {
        /// The CLI's temp folder → `<tmp>`.
        let dir: String
        /// The database (`<tmp>/iapctl.db`, or a fresh database's URL on MySQL) → `<db>`.
        let database: String
        /// The server backend's version (`db status` shows it; it is the machine's, not iapctl's).
        var serverVersion: String?
        /// Order numbers the engine generated (random UUIDs) → `<order of TRANSACTIONID   >`.
        var generated: [String: String] = [:]
        /// The scenario's own order numbers (its notification UUIDs start with aaaaaaaa-0000-).
        static let fixed: Set = [
            GoldenOutputTests.alice, GoldenOutputTests.bob, GoldenOutputTests.carol, GoldenOutputTests.dave,
            GoldenOutputTests.erin,
        ]
        /// Wall-clock times within this window are this run's (the scenario's own dates are in 2025).
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3 * 3600))

        func normalise(_ text: String) -> String {
            var out = text.replacingOccurrences(of: database, with: "<db>").replacingOccurrences(of: dir, with: "<tmp>")
            if let serverVersion { out = out.replacingOccurrences(of: serverVersion, with: "<server version>") }
            for (no, name) in generated { out = out.replacingOccurrences(of: no, with: name) }
            // Any other UUID is an order number the engine generated and did not store (--dry-run).
            out = out.replacing(#/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/#) { match in
                let uuid = String(match.output)
                return Self.fixed.contains(uuid) || uuid.hasPrefix("aaaaaaaa-0000-") ? uuid : Self.sameWidth("<generated", uuid)
            }
            // Compact JWS signed with this run's throwaway keys (ECDSA signatures are random).
            out = out.replacing(#/eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+/#, with: "<jws>")
            // The x5c header's length varies with the DER length of those certificates' signatures.
            out = out.replacing(#/compact JWS: header \d+ B/#, with: "compact JWS: header <n> B")
            out = out.replacing(#/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/#) { match in
                let time = String(match.output.0)
                return isNow(iso: time) ? Self.masked(time) : time
            }
            out = out.replacing(#/\b1\d{12}\b/#) { match in
                let ms = Double(match.output) ?? 0
                return isNow(Date(timeIntervalSince1970: ms / 1000)) ? Self.masked(String(match.output)) : String(match.output)
            }
            return out
        }

        /// `time` with every digit replaced by N: its shape (and a table's column width) stays pinned.
        static func masked(_ time: String) -> String {
            String(time.map { $0.isASCII && $0.isNumber ? "N" : $0 })
        }

        /// `label` padded to `value`'s width and closed with >, so tables stay aligned.
        static func sameWidth(_ label: String, _ value: String) -> String {
            label.padding(toLength: max(label.count, value.count - 1), withPad: " ", startingAt: 0) + ">"
        }

        func isNow(_ date: Date) -> Bool { date >= window.0 && date <= window.1 }

        func isNow(iso: String) -> Bool {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = iso.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
            return formatter.date(from: iso).map(isNow) ?? false
        }
    }

    /// Every pass's outputs, compared with (or recorded as) the golden files.
    struct GoldenResults {
        let format: String
        let outputs: [(name: String, command: String, status: Int32, stdout: String)]

        var exitCodes: String {
            outputs.map { "\($0.name) \($0.status)\n" }.joined()
        }

        func check() throws {
            let files = outputs.map { ($0.name, $0.command, $0.stdout) } + [("exit-codes.\(format).txt", "(exit statuses)", exitCodes)]
            if GoldenOutputTests.recording {
                try FileManager.default.createDirectory(at: GoldenOutputTests.directory, withIntermediateDirectories: true)
                for (name, _, text) in files {
                    try Data(text.utf8).write(to: GoldenOutputTests.directory.appendingPathComponent(name))
                }
                return
            }
            for (name, command, actual) in files {
                let url = GoldenOutputTests.directory.appendingPathComponent(name)
                guard let expected = try? Data(contentsOf: url) else {
                    Issue.record("no golden file \(name) for \(command) (record with IAPCTL_GOLDEN_RECORD=1)")
                    continue
                }
                if expected != Data(actual.utf8) {
                    Issue.record(Comment(rawValue: Self.diff(name, command, String(decoding: expected, as: UTF8.self), actual)))
                }
            }
        }

        /// The first differing line, expected against actual, with a little context (quoted, so that a
        /// space or a control character shows).
        static func diff(_ name: String, _ command: String, _ expected: String, _ actual: String) -> String {
            let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
            let first = (0..<min(e.count, a.count)).first { e[$0] != a[$0] } ?? min(e.count, a.count)
            var text = "golden output differs: Fixtures/golden/\(name)\n  command: \(command)\n"
            text += "  first difference at line \(first + 1) (expected \(e.count) lines, got \(a.count)):\n"
            for i in max(0, first - 2)..<min(max(e.count, a.count), first + 3) {
                let mark = i == first ? ">" : " "
                if i < e.count { text += "\(mark) - \(String(reflecting: String(e[i])))\n" }
                if i < a.count { text += "\(mark) + \(String(reflecting: String(a[i])))\n" }
            }
            return text
        }
    }
}
