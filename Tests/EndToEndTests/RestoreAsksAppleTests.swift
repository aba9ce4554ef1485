import Foundation
import JWSForge
import Testing

/// `restore --apply --policy transfer-if-inactive` on a lapsed contract (paid until a past date,
/// nothing from Apple since): with the Apple API settings it asks the loopback stand-in of Apple's
/// API and applies the answer before deciding; without them it refuses with the reconcile command.
/// Runs on SQLite and, in the MariaDB pass, on MariaDB.
@Suite("restore asks Apple about a lapsed owner before a transfer-if-inactive, end to end")
struct RestoreAsksAppleTests {
    typealias Route = AppleReconcileTests.Route
    static let day: Int64 = 86_400_000
    let cli: CLI
    let world: AppleWorld
    let server: AppleAPIServer
    let now: Int64
    let sub = "2000000500000001"
    let token = "a1ce0000-0000-4000-8000-00000000000a"
    let until: Int64
    /// The device's restored transaction: alice's only period, ended ten days ago.
    let restored: String
    let period: TransactionPayload

    init() throws {
        cli = try CLI()
        world = try AppleWorld(cli: cli)
        server = try AppleAPIServer(cli: cli)
        for (name, value) in server.environment { cli.environment[name] = value }
        now = Int64(Date().timeIntervalSince1970) * 1000
        until = now - 10 * Self.day
        period = TransactionPayload(
            transactionId: sub, originalTransactionId: sub, bundleId: AppleWorld.bundleId, productId: AppleWorld.product,
            purchaseDate: until - 30 * Self.day, originalPurchaseDate: until - 30 * Self.day, expiresDate: until,
            appAccountToken: token, signedDate: until - 30 * Self.day, environment: "Sandbox", transactionReason: "PURCHASE")
        try world.database(orders: [(token, "alice")])
        let buy = try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: until - 30 * Self.day, tx: period)
        try cli.ok(["notify", "-q"] + world.trust, stdin: buy)
        restored = try world.signedTransaction(period)
    }

    var restore: [String] {
        ["restore", "--user", "dave", "--apply", "--policy", "transfer-if-inactive", "--reason", "new phone", "-o", "ndjson"]
            + world.trust
    }

    func renewalInfo(autoRenew: Int64, signed: Int64, intent: Int64? = nil) throws -> String {
        try world.pki.sign(
            payload: RenewalInfoPayload(
                originalTransactionId: sub, autoRenewProductId: AppleWorld.product, productId: AppleWorld.product,
                autoRenewStatus: autoRenew, expirationIntent: intent, signedDate: signed, environment: "Sandbox",
                renewalDate: signed + 30 * Self.day
            ).json)
    }

    /// Apple's answers for the subscription: its history and its status (1 active, 2 expired).
    func apple(history items: [String], status: Int, latest: String, renewal: String) throws {
        let path = "/inApps/v2/history/\(sub)"
        let page: [String: Any] = [
            "revision": "r1", "hasMore": false, "bundleId": AppleWorld.bundleId, "environment": "Sandbox",
            "signedTransactions": items,
        ]
        let body: [String: Any] = [
            "environment": "Sandbox", "bundleId": AppleWorld.bundleId,
            "data": [
                [
                    "subscriptionGroupIdentifier": "g1",
                    "lastTransactions": [
                        ["status": status, "originalTransactionId": sub, "signedTransactionInfo": latest, "signedRenewalInfo": renewal]
                    ],
                ]
            ],
        ]
        try server.routes([
            ("sandbox", "GET", path, [:], [.ok(page)]),
            ("sandbox", "GET", "/inApps/v1/subscriptions/\(sub)", [:], [.ok(body)]),
        ])
    }

    func askedApple() throws -> Bool {
        try server.requests().contains { ($0["path"] as? String)?.contains("/inApps/v1/subscriptions/\(sub)") == true }
    }

    @Test func appleConfirmsTheExpiryAndTheTransferGoesThrough() throws {
        let latest = try world.signedTransaction(period)
        try apple(
            history: [latest], status: 2, latest: latest, renewal: try renewalInfo(autoRenew: 0, signed: until, intent: 1))
        let result = try cli.run(restore, stdin: restored)
        #expect(result.status == 0, "\(result)")
        #expect(try askedApple())
        #expect(result.stderr.contains("contract \(sub) lapsed: paid until"), "\(result.stderr)")
        #expect(result.stderr.contains("asked Apple before deciding the transfer: changes applied"), "\(result.stderr)")
        let row = try #require(try result.ndjson().first)
        #expect(row["verdict"] as? String == "transferred", "\(row)")
        let contract = try #require(try world.contract(sub))
        #expect(contract["user_id"] as? String == "dave", "\(contract)")
        #expect(contract["status"] as? String == "expired", "Apple's expiry was applied: \(contract)")
        let audit = try cli.ok(["audit", "list", "-o", "json"]).jsonArray()
        #expect(
            audit.contains { ($0["command"] as? String ?? "").contains("restore --apply (apple reconcile)") },
            "the reconcile's changes are audited as restore's: \(audit)")
    }

    @Test func appleSaysStillActiveSoTheTransferIsRefusedAfterTheDatabaseIsBroughtInLine() throws {
        let first = try world.signedTransaction(period)
        var next = period
        next.transactionId = "2000000500000002"
        next.purchaseDate = until
        next.expiresDate = now + 20 * Self.day
        next.signedDate = until
        next.transactionReason = "RENEWAL"
        let renewed = try world.signedTransaction(next)
        try apple(history: [first, renewed], status: 1, latest: renewed, renewal: try renewalInfo(autoRenew: 1, signed: until))
        let result = try cli.run(restore, stdin: restored)
        #expect(result.status == 4, "\(result)")
        #expect(try askedApple())
        let row = try #require(try result.ndjson().first)
        #expect(row["verdict"] as? String == "owned-by-other", "\(row)")
        #expect((row["detail"] as? String ?? "").contains("refused by policy: contract is active"), "\(row)")
        let contract = try #require(try world.contract(sub))
        #expect(contract["user_id"] as? String == "alice", "not moved: \(contract)")
        #expect(contract["status"] as? String == "active", "\(contract)")
        #expect(try world.order(tradeNo: "2000000500000002")?["user_id"] as? String == "alice", "the renewal Apple reported is recorded")
        #expect(contract["lapsed"] as? Bool == false, "no longer lapsed: \(contract)")
        #expect(
            contract["expires_date_ms"] as? Int == Int(next.expiresDate ?? 0), "paid until Apple's renewal: \(contract)")
    }

    @Test func withoutTheAppleSettingsTheTransferIsRefusedWithTheReconcileCommand() throws {
        cli.environment["IAPCTL_APPLE_KEY_FILE"] = nil
        let before = try world.tables(maskGeneratedNumbers: [token])
        let result = try cli.run(restore, stdin: restored)
        #expect(result.status == 4, "\(result)")
        #expect(try !askedApple())
        let row = try #require(try result.ndjson().first)
        #expect((row["detail"] as? String ?? "").contains("iapctl apple reconcile --contract \(sub)"), "\(row)")
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
    }

    @Test func aDryRunDoesNotAskApple() throws {
        let result = try cli.run(restore + ["--dry-run"], stdin: restored)
        #expect(result.status == 4, "\(result)")
        #expect(try !askedApple())
    }

    @Test func aKeyFileWithoutAKeyIdStopsWithAConfigurationError() throws {
        // A key file whose name does not carry the key id (AuthKey_KEYID.p8 would give it).
        let renamed = cli.path("key.p8")
        try FileManager.default.copyItem(atPath: server.keyPath, toPath: renamed)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: renamed)
        cli.environment["IAPCTL_APPLE_KEY_FILE"] = renamed
        cli.environment["IAPCTL_APPLE_KEY_ID"] = nil
        let before = try world.tables(maskGeneratedNumbers: [token])
        let result = try cli.run(restore, stdin: restored)
        #expect(result.status == 78, "\(result)")
        #expect(result.stderr.contains("--key-id"), "\(result.stderr)")
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
    }
}
