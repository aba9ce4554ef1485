import Foundation
import JWSForge
import Testing

/// `contracts show` says in words why a subscription ended or may not renew, from Apple's renewal
/// info as kept (billing retry and grace with their dates, price increase not consented, auto-renew
/// off, a product change, an offer, the reason it expired), and `contracts list --risk KIND` finds
/// each kind. On the backend `IAPCTL_E2E_BACKEND` names.
@Suite("renewal risk in words, end to end")
struct RenewalRiskTests {
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    func token(_ original: String) -> String { "3c1f6b0e-7a52-4d8e-9f10-00000000\(original)" }

    /// One subscription `original` bought at t0, then `type/subtype` signed at t0 + 10 days with `renewal`.
    func subscription(
        _ cli: CLI, _ world: AppleWorld, _ original: String, _ type: String, _ subtype: String?,
        renewal: (inout RenewalInfoPayload) -> Void
    ) throws {
        try cli.ok(["orders", "create", "--user", "u\(original)", "--product", AppleWorld.product, "--no", token(original)])
        let first = world.transaction(original, original: original, token: token(original))
        var info = world.renewal(original, signed: t0 + 10 * day)
        renewal(&info)
        let lines = [
            try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: first),
            try world.builder.notification(
                type: type, subtype: subtype, uuid: UUID().uuidString.lowercased(), signedDate: t0 + 10 * day,
                transaction: first, renewal: info),
        ]
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: lines.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
    }

    /// Every kind of risk, one subscription each.
    func world() throws -> CLI {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database()
        try subscription(cli, world, "3001", "DID_FAIL_TO_RENEW", nil) {
            $0.isInBillingRetryPeriod = true
        }
        try subscription(cli, world, "3002", "DID_FAIL_TO_RENEW", "GRACE_PERIOD") {
            $0.isInBillingRetryPeriod = true
            $0.gracePeriodExpiresDate = self.t0 + 46 * self.day
        }
        try subscription(cli, world, "3003", "PRICE_INCREASE", nil) {
            $0.priceIncreaseStatus = 0
            $0.renewalPrice = 12990
        }
        try subscription(cli, world, "3004", "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED") {
            $0.autoRenewStatus = 0
        }
        try subscription(cli, world, "3005", "EXPIRED", "VOLUNTARY") {
            $0.autoRenewStatus = 0
            $0.expirationIntent = 1
        }
        try subscription(cli, world, "3006", "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE") {
            $0.autoRenewProductId = "com.example.app.basic"
            $0.offerType = 2
            $0.offerIdentifier = "winback10"
        }
        return cli
    }

    /// `contracts show ID -o json`'s renewal_risk, and the table's words.
    func risk(_ cli: CLI, _ id: String) throws -> (json: [String: Any], table: String) {
        let doc = try cli.ok(["contracts", "show", id, "-o", "json"]).jsonObject()
        let risk = try #require(doc["renewal_risk"] as? [String: Any], "\(doc)")
        return (risk, try cli.ok(["contracts", "show", id]).stdout)
    }

    @Test func billingRetryWithItsWindow() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3001")
        #expect(json["kinds"] as? [String] == ["billing-retry"], "\(json)")
        #expect(json["is_in_billing_retry_period"] as? Bool == true)
        // Apple retries up to 60 days from the expiry (t0 + 30 days): until t0 + 90 days.
        #expect(table.contains("billing error") && table.contains("2025-04-01T00:00:00Z"), "\(table)")
    }

    @Test func graceWithItsEnd() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3002")
        #expect(json["kinds"] as? [String] == ["grace"], "\(json)")
        #expect(table.contains("grace period until 2025-02-16T00:00:00Z"), "\(table)")
    }

    @Test func priceIncreaseNotConsentedAndItsDate() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3003")
        #expect(json["kinds"] as? [String] == ["price-consent"], "\(json)")
        #expect(json["price_increase_status"] as? Int == 0)
        #expect(table.contains("price increase not consented (Apple told the customer 2025-01-11T00:00:00Z)"), "\(table)")
        #expect(table.contains("12.99 USD"), "\(table)")
    }

    @Test func autoRenewOffIsVoluntary() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3004")
        #expect(json["kinds"] as? [String] == ["auto-renew-off"], "\(json)")
        #expect(table.contains("auto-renew off: the customer cancelled"), "\(table)")
    }

    @Test func whyItEnded() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3005")
        #expect((json["kinds"] as? [String])?.isEmpty == true, "\(json)")
        #expect(json["expiration_intent"] as? Int == 1)
        #expect((json["ended"] as? String)?.contains("the customer cancelled (voluntary)") == true, "\(json)")
        #expect(table.contains("ended at"), "\(table)")
    }

    @Test func productChangeAndOfferAtTheNextRenewal() throws {
        let cli = try world()
        let (json, table) = try risk(cli, "3006")
        #expect(json["next_product_id"] as? String == "com.example.app.basic", "\(json)")
        #expect(table.contains("renews into com.example.app.basic"), "\(table)")
        #expect(table.contains("promotional offer winback10"), "\(table)")
    }

    @Test func listFiltersByEachRisk() throws {
        let cli = try world()
        for (kind, expected) in [
            ("billing-retry", ["3001"]), ("grace", ["3002"]), ("price-consent", ["3003"]), ("auto-renew-off", ["3004"]),
        ] {
            let listed = try cli.ok(["contracts", "list", "--risk", kind, "-o", "json"]).jsonArray()
            #expect(listed.compactMap { $0["contract_id"] as? String } == expected, "\(kind): \(listed)")
            #expect((listed.first?["risk"] as? [String])?.contains(kind) == true, "\(listed)")
            let table = try cli.ok(["contracts", "list", "--risk", kind]).stdout
            #expect(table.contains(expected[0]) && table.contains("WHY"), "\(table)")
        }
        #expect(try cli.run(["contracts", "list", "--risk", "churn"]).status == 64)
    }
}
