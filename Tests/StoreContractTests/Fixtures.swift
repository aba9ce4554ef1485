import SubscriptionEngine
import SubscriptionModel

/// Sample rows with every optional field set, so round-trips check every column.
enum Sample {
    static func order(
        _ no: String, user: String = "u1", product: String = "com.example.monthly", status: OrderStatus = .paid,
        tradeNo: String? = nil, originNo: String? = nil, purchaseDate: Int64? = 1_700_000_000_000
    ) -> Order {
        Order(
            no: no, userId: user, productId: product, status: status, tradeNo: tradeNo, originNo: originNo,
            purchaseDate: purchaseDate, expiresDate: 1_702_592_000_000, environment: "Sandbox", price: 10_990,
            currency: "EUR", createdAt: 1_699_999_999_000, updatedAt: 1_700_000_001_000)
    }

    static func contract(
        _ id: String, user: String = "u1", product: String = "com.example.monthly", status: ContractStatus = .active
    ) -> Contract {
        Contract(
            contractId: id, userId: user, productId: product, status: status, autoRenew: false,
            expiresDate: 1_702_592_000_000, environment: "Production", nextProductId: "com.example.yearly",
            lastEventDate: 1_700_000_000_500, createdAt: 1_699_999_999_000, updatedAt: 1_700_000_001_000)
    }

    static func ledger(
        uuid: String? = "n-1", verdict: Verdict = .applied, transactionId: String? = "t-1",
        originalTransactionId: String? = "o-1", token: String? = "tok-1", signedDate: Int64? = 1_700_000_000_000
    ) -> LedgerEntry {
        LedgerEntry(
            receivedAt: 1_700_000_002_000, source: .apple, notificationUUID: uuid, notificationType: "DID_RENEW",
            subtype: "BILLING_RECOVERY", transactionId: transactionId, originalTransactionId: originalTransactionId,
            appAccountToken: token, signedDate: signedDate, verdict: verdict, detail: "renewed until …",
            raw: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
    }
}
