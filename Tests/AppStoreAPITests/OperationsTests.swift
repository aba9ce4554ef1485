import AppStoreJWS
import Testing

@testable import AppStoreAPI

/// The typed requests and answers of the `apple` commands (Operations.swift).
@Suite struct OperationsTests {
    @Test func notificationHistoryBodyKeepsApplesOrderAndFilters() {
        let typed = NotificationHistoryQuery(
            start: 1, end: 2, filter: .type("DID_RENEW", subtype: "BILLING_RECOVERY"), onlyFailures: true)
        #expect(
            typed.body.serialized()
                == #"{"startDate":1,"endDate":2,"notificationType":"DID_RENEW","notificationSubtype":"BILLING_RECOVERY","onlyFailures":true}"#
        )
        let byTransaction = NotificationHistoryQuery(start: 5, end: 9, filter: .transaction("2000"))
        #expect(byTransaction.body.serialized() == #"{"startDate":5,"endDate":9,"transactionId":"2000"}"#)
    }

    @Test func transactionHistoryQueryItems() {
        let query = TransactionHistoryQuery(
            start: 10, products: ["a", "b"], productTypes: ["AUTO_RENEWABLE"], sort: "descending", revoked: false)
        #expect(
            query.items.map { "\($0.0)=\($0.1)" } == [
                "startDate=10", "productId=a", "productId=b", "productType=AUTO_RENEWABLE", "sort=DESCENDING",
                "revoked=false",
            ])
        #expect(TransactionHistoryQuery().items.map(\.0) == ["sort"])
    }

    @Test func subscriptionStatusItemsFlattenGroups() throws {
        let json = try JSONParser.parse(
            #"{"data":[{"subscriptionGroupIdentifier":"g1","lastTransactions":[{"status":1,"originalTransactionId":"o1","signedTransactionInfo":"t1","signedRenewalInfo":"r1"},{"status":2,"originalTransactionId":"o2","signedTransactionInfo":"t2"}]}]}"#
        )
        let call = Endpoint.subscriptionStatuses("o1", statuses: [])
        let items = try SubscriptionStatusItem.items(APIAnswer(server: .sandbox, status: 200, json: json), call: call)
        #expect(items.map(\.transaction) == ["t1", "t2"])
        #expect(items.map(\.renewal) == ["r1", nil])
        #expect(items.map(\.status) == [1, 2])
        #expect(items.first?.group == "g1")

        let broken = try JSONParser.parse(#"{"data":[{"lastTransactions":[{"status":1}]}]}"#)
        #expect(throws: AppStoreAPIError.self) {
            try SubscriptionStatusItem.items(APIAnswer(server: .sandbox, status: 200, json: broken), call: call)
        }
    }

    /// The status numbers `--status` offers and the names output shows come from one enumeration.
    @Test func subscriptionStatusNamesFollowApplesNumbers() {
        #expect(
            SubscriptionStatusItem.statusNames
                == [1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked"])
    }

    @Test func orderLookupInvalidStatusAllowsMissingList() throws {
        let call = Endpoint.lookup(orderId: "MK5TTTVWJH")
        let invalid = try OrderLookup(
            APIAnswer(server: .production, status: 200, json: try JSONParser.parse(#"{"status":1}"#)), call: call)
        #expect(invalid.status == 1 && invalid.transactions.items.isEmpty)
        #expect(!invalid.isValid)
        for (json, valid) in [(#"{"status":0,"signedTransactions":[]}"#, true), (#"{"signedTransactions":[]}"#, false)] {
            let lookup = try OrderLookup(
                APIAnswer(server: .production, status: 200, json: try JSONParser.parse(json)), call: call)
            #expect(lookup.isValid == valid, "\(json)")
        }
        #expect(throws: AppStoreAPIError.self) {
            try OrderLookup(
                APIAnswer(server: .production, status: 200, json: try JSONParser.parse(#"{"status":0,"signedTransactions":[1]}"#)),
                call: call)
        }
    }
}
