import AppStoreAPI
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

/// `iapctl refunds consents`: the RESCIND_CONSENT notifications received, oldest first.
enum RefundsConsents {
    static let command = CommandSpec(
        name: "consents",
        abstract: "List the RESCIND_CONSENT notifications received (consent withdrawn), oldest first.",
        discussion: """
            A parent or guardian withdrew consent for the app's user: end the user's sessions and \
            delete the data kept under that consent. Apple identifies the app download \
            (appTransactionId), not a transaction, so no order or user is changed.
            """,
        examples: [
            CommandExample("iapctl refunds consents -o json", "Every consent withdrawal kept, with its appTransactionId.")
        ],
        handler: run)

    static func run(_ invocation: Invocation) throws -> ExitCode {
        let withdrawals = try DbOpen.read(invocation) { session in try RefundDesk.consentWithdrawals(session) }
        invocation.emit(
            withdrawals.map { w in
                var r = Record()
                r.append("signed_at", w.entry.signedDate)
                r.append("environment", w.environment)
                r.append("app_transaction_id", w.appTransactionId)
                r.append("user_id", w.userIds.isEmpty ? nil : w.userIds.joined(separator: " "))
                r.append(
                    "original_transaction_ids", w.originalTransactionIds.isEmpty ? nil : w.originalTransactionIds.joined(separator: " "))
                r.append("original_purchase_date", w.originalPurchaseDate)
                r.append("notification_uuid", w.entry.notificationUUID)
                r.append("ledger_id", w.entry.id)
                return r
            },
            columns: [
                Column("signed_at", title: "SIGNED"), Column("environment", title: "ENVIRONMENT"),
                Column("app_transaction_id", title: "APP TRANSACTION"), Column("user_id", title: "USER"),
                Column("ledger_id", title: "LEDGER"),
            ])
        invocation.note(
            "\(withdrawals.count) consent withdrawal\(withdrawals.count == 1 ? "" : "s") (RESCIND_CONSENT)"
                + (withdrawals.isEmpty ? "" : ": end those users' sessions and delete the data kept under that consent"))
        return .success
    }
}
