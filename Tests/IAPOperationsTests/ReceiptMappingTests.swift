import AppStoreReceipt
import AppleFlows
import ItemInput
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import ClientSubmissions
@testable import IAPOperations

/// In-app entries of a receipt → the engine's client facts.
@Suite("Receipt mapping")
struct ReceiptMappingTests {
    func entry(_ id: String, purchased: Int64, expires: Int64? = nil, cancelled: Int64? = nil) -> InAppPurchase {
        var e = InAppPurchase()
        e.transactionId = id
        e.originalTransactionId = "900"
        e.productId = "pro.weekly"
        e.quantity = 1
        e.purchaseDate = purchased
        e.originalPurchaseDate = 1_000
        e.expiresDate = expires
        e.cancellationDate = cancelled
        return e
    }

    @Test func entryBecomesClientFactsFlaggedAsFromAReceipt() throws {
        let receipt = AppReceipt(
            receiptType: "ProductionSandbox", bundleId: "com.example", creationDate: 9_000,
            inApp: [entry("901", purchased: 2_000, expires: 3_000)])
        guard case .facts(let facts) = ReceiptMapping.entry(receipt.inApp[0], of: receipt) else {
            Issue.record("not mapped")
            return
        }
        #expect(facts.isFromReceipt)
        #expect(facts.transactionId == "901")
        #expect(facts.originalTransactionId == "900")
        #expect(facts.productId == "pro.weekly")
        #expect(facts.appAccountToken == nil)
        #expect(facts.purchaseDate == 2_000)
        #expect(facts.originalPurchaseDate == 1_000)
        #expect(facts.expiresDate == 3_000)
        #expect(facts.revocationDate == nil)
        #expect(facts.price == nil)
        #expect(facts.environment == "Sandbox")
        #expect(facts.signedDate == 9_000)
        #expect(facts.isAutoRenewable)
        let event = ReceiptMapping.event(facts, receipt: receipt, raw: "MII…")
        #expect(event.source == .client)
        #expect(event.signedDate == 9_000)
        #expect(event.raw == "MII…")
    }

    @Test func cancelledAndIncompleteEntriesNeverReachTheEngine() {
        let receipt = AppReceipt(creationDate: 9_000)
        if case .skipped(let why) = ReceiptMapping.entry(entry("901", purchased: 2_000, cancelled: 2_500), of: receipt) {
            #expect(why.contains("never revokes"))
        } else {
            Issue.record("a cancelled entry was mapped")
        }
        var noId = entry("", purchased: 2_000)
        noId.transactionId = nil
        guard case .incomplete = ReceiptMapping.entry(noId, of: receipt) else {
            Issue.record("an entry without transaction_id was mapped")
            return
        }
    }

    @Test func entriesAreAppliedOldestPurchaseFirst() {
        let receipt = AppReceipt(
            inApp: [entry("903", purchased: 3_000), entry("901", purchased: 1_000), entry("902", purchased: 1_000)])
        #expect(ReceiptMapping.entries(of: receipt).compactMap(\.transactionId) == ["901", "902", "903"])
    }
}
