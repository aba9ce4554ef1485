import AppStoreAPI
import AppStoreJWS
import ClientSubmissions
import IAPFoundation
import IAPOperations
import SubscriptionEngine
import SubscriptionModel

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
        /// The kind of product, from the signed transaction Apple sent with the request: it decides
        /// what may be sent (``answer(_:knowledge:choices:)``). Nil: the request carried none.
        public var productType: ProductTypeName?
        /// The order exists and was paid (refunded or revoked since): the purchase was delivered.
        /// Nil: the database has no order for the transaction.
        public var delivered: Bool?
        /// How much was consumed, in thousandths of a percent, where the database knows it: for a
        /// non-renewing subscription with a paid period, the share of it passed when Apple asked.
        /// Never for an auto-renewable subscription (Apple computes it) nor for a consumable or
        /// non-consumable purchase (only the operator or a policy knows).
        public var consumptionPercentage: Int64?
        /// The customer's other orders that were refunded; nil when the customer is unknown.
        public var priorRefunds: Int?
        /// The customer's first purchase (or order) in this database; nil when unknown.
        public var customerSince: Int64?
        /// The signed transaction's storefront (ISO 3166-1 alpha-3, `USA`), price (milli-units) and currency.
        public var storefront: String?
        public var price: Int64?
        public var currency: String?

        public init(
            productType: ProductTypeName? = nil, delivered: Bool? = nil, consumptionPercentage: Int64? = nil,
            priorRefunds: Int? = nil, customerSince: Int64? = nil, storefront: String? = nil, price: Int64? = nil,
            currency: String? = nil
        ) {
            self.productType = productType
            self.delivered = delivered
            self.consumptionPercentage = consumptionPercentage
            self.priorRefunds = priorRefunds
            self.customerSince = customerSince
            self.storefront = storefront
            self.price = price
            self.currency = currency
        }
    }

    /// The signed transaction Apple sent with a kept request, decoded (verified when it was kept).
    public static func transaction(of entry: LedgerEntry) -> TransactionPayload? {
        notification(entry)?.data?.signedTransactionInfo.flatMap(FactRebuild.payload)
            .flatMap { try? TransactionPayload(json: $0) }
    }

    /// What the database knows about `request`'s purchase and customer.
    public static func knowledge(_ request: RefundRequest, _ session: any StoreSession) throws -> Knowledge {
        var known = Knowledge()
        let signed = transaction(of: request.request)
        if case .known(let type)? = signed?.type { known.productType = type }
        known.storefront = signed?.storefront
        known.price = signed?.price
        known.currency = signed?.currency
        let asked = request.request.signedDate ?? request.request.receivedAt
        if let order = request.order {
            known.delivered = order.status != .pending
            if known.productType == .nonRenewing, let start = order.purchaseDate, let end = order.expiresDate, end > start {
                let used = (asked - start) * WriteRequest.consumptionPercentage.upperBound / (end - start)
                known.consumptionPercentage = min(
                    max(used, WriteRequest.consumptionPercentage.lowerBound), WriteRequest.consumptionPercentage.upperBound)
            }
            if known.price == nil { known.price = order.price }
            if known.currency == nil { known.currency = order.currency }
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

    /// Why no request can be composed: the first two for want of input, the others because Apple's
    /// documented rules for Send Consumption Information (App Store Server API 1.19+,
    /// `ConsumptionRequest`, `consumptionPercentage`, `refundPreference`) refuse the request.
    public enum Refusal: Error, Sendable, Equatable {
        /// The database has no order for the transaction and no `--delivery-status` was given.
        case deliveryUnknown(transactionId: String)
        /// The request carried no signed transaction with a product type: what may be sent depends on it.
        case productTypeUnknown(transactionId: String)
        /// A consumptionPercentage for an auto-renewable subscription (Apple:
        /// ConsumptionPercentageAutoRenewableSubscriptionError, errorCode 4000209).
        case percentageForAutoRenewable(transactionId: String)
        /// A non-zero consumptionPercentage with a deliveryStatus other than DELIVERED (Apple:
        /// UndeliveredConsumptionPercentageNonZeroError).
        case undeliveredPercentageNonZero(transactionId: String, percentage: Int64, deliveryStatus: String)
        /// GRANT_PRORATED for a product other than an auto-renewable subscription without a
        /// consumptionPercentage above 0 and below 100000.
        case proratedNeedsPercentage(transactionId: String, percentage: Int64?)
        /// A consumptionPercentage outside 0…100000 (Apple: ConsumptionPercentageOutOfRangeError).
        case percentageOutOfRange(transactionId: String, percentage: Int64)
    }

    /// The Send Consumption Information request answering `request`: the operator's choices, else what
    /// the database knows, shaped by the product type as Apple's rules say — an auto-renewable
    /// subscription never carries `consumptionPercentage` (Apple computes it from elapsed time); other
    /// products carry it when known, and 0 when the item was not delivered; GRANT_PRORATED needs a
    /// percentage above 0 and below 100000 except for an auto-renewable subscription. What Apple would
    /// refuse is refused here (``Refusal``), before anything is sent. `customerConsented` is in the
    /// body only when the operator asserted it. `command`: the audit row's.
    public static func answer(
        _ request: RefundRequest, knowledge: Knowledge, choices: Choices, command: String = "refunds answer"
    ) throws(Refusal) -> AppleWrite {
        let tx = request.transactionId
        guard let productType = knowledge.productType else { throw .productTypeUnknown(transactionId: tx) }
        let delivery: AppleChoices.DeliveryStatus
        if let given = choices.deliveryStatus {
            delivery = given
        } else if knowledge.delivered == true {
            delivery = .delivered
        } else {
            throw .deliveryUnknown(transactionId: tx)
        }
        var percentage: Int64?
        if productType == .autoRenewable {
            if choices.consumptionPercentage != nil { throw .percentageForAutoRenewable(transactionId: tx) }
        } else if delivery != .delivered {
            if let given = choices.consumptionPercentage, given != 0 {
                throw .undeliveredPercentageNonZero(transactionId: tx, percentage: given, deliveryStatus: delivery.rawValue)
            }
            percentage = 0
        } else {
            percentage = choices.consumptionPercentage ?? knowledge.consumptionPercentage
        }
        if let percentage, !WriteRequest.consumptionPercentage.contains(percentage) {
            throw .percentageOutOfRange(transactionId: tx, percentage: percentage)
        }
        if choices.refundPreference == .grantProrated, productType != .autoRenewable {
            guard let percentage, percentage > 0, percentage < WriteRequest.consumptionPercentage.upperBound else {
                throw .proratedNeedsPercentage(transactionId: tx, percentage: percentage)
            }
        }
        return AppleWrite.consumption(
            transaction: tx, customerConsented: choices.customerConsented,
            sampleContentProvided: choices.sampleContentProvided, deliveryStatus: delivery.rawValue,
            consumptionPercentage: percentage, refundPreference: choices.refundPreference?.rawValue, command: command)
    }
}
