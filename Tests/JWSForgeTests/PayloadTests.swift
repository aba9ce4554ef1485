import Foundation
import JWSForge
import Testing

@Suite("Payload builders")
struct PayloadTests {
    let pki: TestPKI

    init() throws {
        pki = try TestPKI.make()
    }

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// Decodes a JWS payload after checking its signature with the leaf key.
    func verifiedPayload(_ jws: String) throws -> [String: Any] {
        #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
        return try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[1])))
    }

    static let transaction = TransactionPayload(
        transactionId: "2000000000000002", originalTransactionId: "2000000000000001", webOrderLineItemId: "3000",
        bundleId: "com.example.iapctl", productId: "com.example.iapctl.monthly", purchaseDate: 1_735_689_600_000,
        originalPurchaseDate: 1_733_011_200_000, expiresDate: 1_738_281_600_000,
        appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138", signedDate: 1_735_689_605_000,
        environment: "Sandbox", transactionReason: "RENEWAL", currency: "EUR", price: 4990)

    @Test func transactionFieldsAndOrder() throws {
        let json = Self.transaction.json
        #expect(json.hasPrefix(#"{"transactionId":"2000000000000002","originalTransactionId":"2000000000000001","#))
        let o = try Self.object(json)
        #expect(o["bundleId"] as? String == "com.example.iapctl")
        #expect(o["type"] as? String == "Auto-Renewable Subscription")
        #expect(o["inAppOwnershipType"] as? String == "PURCHASED")
        #expect(o["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect((o["purchaseDate"] as? NSNumber)?.int64Value == 1_735_689_600_000)
        #expect((o["expiresDate"] as? NSNumber)?.int64Value == 1_738_281_600_000)
        #expect((o["price"] as? NSNumber)?.int64Value == 4990)
        #expect(o["currency"] as? String == "EUR")
        #expect(o["transactionReason"] as? String == "RENEWAL")
        #expect(o["webOrderLineItemId"] as? String == "3000")
        #expect(o["storefront"] as? String == "USA")
        #expect(o["revocationDate"] == nil && o["revocationReason"] == nil)

        var revoked = Self.transaction
        revoked.appAccountToken = nil
        revoked.revocationDate = 1_736_000_000_000
        revoked.revocationReason = 1
        let r = try Self.object(revoked.json)
        #expect((r["revocationDate"] as? NSNumber)?.int64Value == 1_736_000_000_000)
        #expect((r["revocationReason"] as? NSNumber)?.intValue == 1)
        #expect(r["appAccountToken"] == nil)
    }

    @Test func renewalInfoFields() throws {
        let renewal = RenewalInfoPayload(
            originalTransactionId: "1", autoRenewProductId: "p2", productId: "p1", autoRenewStatus: 0,
            isInBillingRetryPeriod: false, signedDate: 5, environment: "Production", renewalDate: 9,
            gracePeriodExpiresDate: 12)
        let o = try Self.object(renewal.json)
        #expect(o["originalTransactionId"] as? String == "1")
        #expect(o["autoRenewProductId"] as? String == "p2")
        #expect(o["productId"] as? String == "p1")
        #expect((o["autoRenewStatus"] as? NSNumber)?.intValue == 0)
        #expect(o["isInBillingRetryPeriod"] as? Bool == false)
        #expect((o["renewalDate"] as? NSNumber)?.intValue == 9)
        #expect((o["gracePeriodExpiresDate"] as? NSNumber)?.intValue == 12)
        #expect(o["environment"] as? String == "Production")
    }

    @Test func escapingKeepsJSONValid() throws {
        var t = Self.transaction
        t.productId = "a\"b\\c\nd\u{01}é/"
        let o = try Self.object(t.json)
        #expect(o["productId"] as? String == "a\"b\\c\nd\u{01}é/")
    }

    @Test func notificationNestsSignedPayloads() throws {
        let builder = PayloadBuilder(pki: pki, bundleId: "com.example.iapctl", environment: "Sandbox")
        let renewal = RenewalInfoPayload(
            originalTransactionId: "2000000000000001", autoRenewProductId: "com.example.iapctl.monthly",
            productId: "com.example.iapctl.monthly", signedDate: 1_735_689_605_000, environment: "Sandbox",
            renewalDate: 1_738_281_600_000)
        let jws = try builder.notification(
            type: "DID_RENEW", uuid: "11111111-2222-4333-8444-555555555555", signedDate: 1_735_689_606_000,
            transaction: Self.transaction, renewal: renewal)
        let outer = try verifiedPayload(jws)
        #expect(outer["notificationType"] as? String == "DID_RENEW")
        #expect(outer["subtype"] == nil)
        #expect(outer["notificationUUID"] as? String == "11111111-2222-4333-8444-555555555555")
        #expect(outer["version"] as? String == "2.0")
        #expect((outer["signedDate"] as? NSNumber)?.int64Value == 1_735_689_606_000)
        let data = try #require(outer["data"] as? [String: Any])
        #expect((data["appAppleId"] as? NSNumber)?.int64Value == 1_234_567_890)
        #expect(data["bundleId"] as? String == "com.example.iapctl")
        #expect(data["bundleVersion"] as? String == "1")
        #expect(data["environment"] as? String == "Sandbox")
        #expect((data["status"] as? NSNumber)?.intValue == 1)
        let transaction = try verifiedPayload(try #require(data["signedTransactionInfo"] as? String))
        #expect(transaction["transactionId"] as? String == "2000000000000002")
        let renewalDecoded = try verifiedPayload(try #require(data["signedRenewalInfo"] as? String))
        #expect(renewalDecoded["originalTransactionId"] as? String == "2000000000000001")
    }

    @Test func notificationStatusDefaultsAndOverrides() throws {
        let builder = PayloadBuilder(pki: pki, bundleId: "b", environment: "Sandbox")
        func status(_ type: String, _ subtype: String?, _ override: Int64?? = .none) throws -> Any? {
            let jws = try builder.notification(
                type: type, subtype: subtype, uuid: "u", signedDate: 1, transaction: Self.transaction, status: override)
            return (try verifiedPayload(jws)["data"] as? [String: Any])?["status"]
        }
        #expect((try status("EXPIRED", "VOLUNTARY") as? NSNumber)?.intValue == 2)
        #expect((try status("DID_FAIL_TO_RENEW", "GRACE_PERIOD") as? NSNumber)?.intValue == 4)
        #expect((try status("REVOKE", nil) as? NSNumber)?.intValue == 5)
        #expect((try status("SUBSCRIBED", "INITIAL_BUY", .some(3)) as? NSNumber)?.intValue == 3)
        #expect(try status("SUBSCRIBED", "INITIAL_BUY", .some(nil)) == nil)
    }

    @Test func testNotificationHasOnlyIdentifiers() throws {
        var builder = PayloadBuilder(pki: pki, bundleId: "com.example.iapctl", environment: "Sandbox")
        builder.appAppleId = nil
        let outer = try verifiedPayload(try builder.testNotification(uuid: "t", signedDate: 7))
        #expect(outer["notificationType"] as? String == "TEST")
        let data = try #require(outer["data"] as? [String: Any])
        #expect(data.keys.sorted() == ["bundleId", "environment"])
    }
}

@Suite("Subscription series")
struct SeriesTests {
    @Test func seriesShapeIdsAndDates() throws {
        let pki = try TestPKI.make()
        let builder = PayloadBuilder(pki: pki, bundleId: "com.example.iapctl", environment: "Sandbox")
        let tokens = (0..<3).map { SubscriptionSeries.uuid(seed: 9, counter: Int64($0)) }
        let series = SubscriptionSeries(orders: 3, renewals: 2, tokens: tokens)
        var lines: [String] = []
        try series.generate(with: builder) { lines.append($0) }
        #expect(lines.count == 9 && series.count == 9)

        var transactionIds = Set<String>()
        var uuids = Set<String>()
        for (n, line) in lines.enumerated() {
            #expect(OpenSSLCheck.verifyES256(jws: line, certificate: pki.leafDER))
            let outer = try #require(OpenSSLCheck.json(segment: String(line.split(separator: ".")[1])))
            let round = n / 3
            let i = n % 3
            #expect(outer["notificationType"] as? String == (round == 0 ? "SUBSCRIBED" : "DID_RENEW"))
            #expect(outer["subtype"] as? String == (round == 0 ? "INITIAL_BUY" : nil))
            uuids.insert(try #require(outer["notificationUUID"] as? String))
            let data = try #require(outer["data"] as? [String: Any])
            let jws = try #require(data["signedTransactionInfo"] as? String)
            #expect(OpenSSLCheck.verifyES256(jws: jws, certificate: pki.leafDER))
            let t = try #require(OpenSSLCheck.json(segment: String(jws.split(separator: ".")[1])))
            transactionIds.insert(try #require(t["transactionId"] as? String))
            #expect(t["appAccountToken"] as? String == tokens[i])
            #expect(t["originalTransactionId"] as? String == String(2_000_000_000_000_000 + i))
            let start = Int64(1_735_689_600_000) + Int64(i) * 1000
            let period = Int64(30 * 86_400_000)
            #expect((t["originalPurchaseDate"] as? NSNumber)?.int64Value == start)
            #expect((t["purchaseDate"] as? NSNumber)?.int64Value == start + Int64(round) * period)
            #expect((t["expiresDate"] as? NSNumber)?.int64Value == start + Int64(round + 1) * period)
            #expect(t["transactionReason"] as? String == (round == 0 ? "PURCHASE" : "RENEWAL"))
        }
        #expect(transactionIds.count == 9)
        #expect(uuids.count == 9)
        #expect(uuids.allSatisfy { UUID(uuidString: $0) != nil })
    }

    @Test func seriesRefusesTooFewTokens() throws {
        let builder = PayloadBuilder(pki: try TestPKI.make(), bundleId: "b", environment: "Sandbox")
        #expect(throws: ForgeError.self) {
            try SubscriptionSeries(orders: 2, renewals: 0, tokens: ["only-one"]).generate(with: builder) { _ in }
        }
    }
}
