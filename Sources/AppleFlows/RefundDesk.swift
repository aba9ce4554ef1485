import AppStoreAPI
import AppStoreJWS
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionEngine

/// The refund-request desk: what a kept request or withdrawn consent says (decoded from the ledger's
/// raw JWS, verified when it was kept), what the database knows about the purchase, and the Send
/// Consumption Information (v2) request composed from it.
public enum RefundDesk {
    /// Apple's `consumptionRequestReason` of a kept CONSUMPTION_REQUEST (`UNINTENDED_PURCHASE`, …).
    public static func reason(of entry: LedgerEntry) -> String? {
        notification(entry)?.data?.consumptionRequestReason
    }

    /// A kept RESCIND_CONSENT and what its `appData` says.
    public struct ConsentWithdrawal: Sendable, Equatable {
        public var entry: LedgerEntry
        public var environment: String?
        /// The AppTransaction's `appTransactionId` (the app's download, per Apple account).
        public var appTransactionId: String?
        public var originalPurchaseDate: Int64?
        /// The purchases whose signed transactions carry that appTransactionId, and their users: who
        /// withdrew consent, where the ids allow (none when no kept transaction carries it).
        public var originalTransactionIds: [String] = []
        public var userIds: [String] = []
    }

    /// The kept RESCIND_CONSENTs (``RefundRequests/consentWithdrawals(_:)``), each mapped to the users
    /// whose purchases' signed transactions carry its appTransactionId.
    public static func consentWithdrawals(_ session: any StoreSession) throws -> [ConsentWithdrawal] {
        try RefundRequests.consentWithdrawals(session).map { entry in
            var withdrawal = consentWithdrawal(entry)
            guard let app = withdrawal.appTransactionId else { return withdrawal }
            for original in try session.originalTransactionIds(appTransactionId: app) {
                withdrawal.originalTransactionIds.append(original)
                let owner = try session.contract(contractId: original)?.userId ?? session.orders(originNo: original).first?.userId
                if let owner, !withdrawal.userIds.contains(owner) { withdrawal.userIds.append(owner) }
            }
            return withdrawal
        }
    }

    /// What a kept RESCIND_CONSENT says.
    public static func consentWithdrawal(_ entry: LedgerEntry) -> ConsentWithdrawal {
        let appData = notification(entry)?.appData
        let app = appData?.signedAppTransactionInfo.flatMap(FactRebuild.payload)
            .flatMap { try? AppTransactionPayload(json: $0) }
        return ConsentWithdrawal(
            entry: entry, environment: appData?.environment, appTransactionId: app?.appTransactionId,
            originalPurchaseDate: app?.originalPurchaseDate)
    }

    private static func notification(_ entry: LedgerEntry) -> NotificationPayload? {
        guard let token = (try? WebhookBody.jwsTokens(in: entry.raw))?.first, let json = FactRebuild.payload(token) else {
            return nil
        }
        return try? NotificationPayload(json: json)
    }

    /// What the database knows about a request's purchase and customer.
    public struct Knowledge: Sendable, Equatable {
        /// The order exists and was paid (refunded or revoked since): the purchase was delivered.
        /// Nil: the database has no order for the transaction.
        public var delivered: Bool?
        /// How much of the paid period had passed when Apple asked, in thousandths of a percent;
        /// nil for a purchase without a period (a consumable: only the operator knows).
        public var consumptionPercentage: Int64?
        /// The customer's other orders that were refunded; nil when the customer is unknown.
        public var priorRefunds: Int?
        /// The customer's first purchase (or order) in this database; nil when unknown.
        public var customerSince: Int64?
    }

    /// What the database knows about `request`'s purchase and customer.
    public static func knowledge(_ request: RefundRequest, _ session: any StoreSession) throws -> Knowledge {
        var known = Knowledge()
        let asked = request.request.signedDate ?? request.request.receivedAt
        if let order = request.order {
            known.delivered = order.status != .pending
            if let start = order.purchaseDate, let end = order.expiresDate, end > start {
                let used = (asked - start) * WriteRequest.consumptionPercentage.upperBound / (end - start)
                known.consumptionPercentage = min(
                    max(used, WriteRequest.consumptionPercentage.lowerBound), WriteRequest.consumptionPercentage.upperBound)
            }
        }
        if let user = request.userId {
            let orders = try session.orders(matching: OrderFilter(userId: user))
            known.priorRefunds = orders.filter { $0.status == .refunded && $0.no != request.order?.no }.count
            known.customerSince = orders.map { $0.purchaseDate ?? $0.createdAt }.filter { $0 > 0 }.min()
        }
        return known
    }

    /// What the operator decides (each overrides what the database knows).
    public struct Choices: Sendable, Equatable {
        /// Only true when the operator asserts the customer consented (`--customer-consented`).
        public var customerConsented: Bool
        public var sampleContentProvided: Bool
        public var deliveryStatus: AppleChoices.DeliveryStatus?
        public var consumptionPercentage: Int64?
        public var refundPreference: AppleChoices.RefundPreference?

        public init(
            customerConsented: Bool, sampleContentProvided: Bool, deliveryStatus: AppleChoices.DeliveryStatus?,
            consumptionPercentage: Int64?, refundPreference: AppleChoices.RefundPreference?
        ) {
            self.customerConsented = customerConsented
            self.sampleContentProvided = sampleContentProvided
            self.deliveryStatus = deliveryStatus
            self.consumptionPercentage = consumptionPercentage
            self.refundPreference = refundPreference
        }
    }

    /// Why no request can be composed.
    public enum Refusal: Error, Sendable, Equatable {
        /// The database has no order for the transaction and no `--delivery-status` was given.
        case deliveryUnknown(transactionId: String)
    }

    /// The Send Consumption Information request answering `request`: the operator's choices, else what
    /// the database knows. `customerConsented` is in the body only when the operator asserted it.
    public static func answer(_ request: RefundRequest, knowledge: Knowledge, choices: Choices) throws(Refusal)
        -> AppleWrite
    {
        let delivery: AppleChoices.DeliveryStatus
        if let given = choices.deliveryStatus {
            delivery = given
        } else if knowledge.delivered == true {
            delivery = .delivered
        } else {
            throw .deliveryUnknown(transactionId: request.transactionId)
        }
        return AppleWrite.consumption(
            transaction: request.transactionId, customerConsented: choices.customerConsented,
            sampleContentProvided: choices.sampleContentProvided, deliveryStatus: delivery.rawValue,
            consumptionPercentage: choices.consumptionPercentage ?? knowledge.consumptionPercentage,
            refundPreference: choices.refundPreference?.rawValue, command: "refunds answer")
    }
}
