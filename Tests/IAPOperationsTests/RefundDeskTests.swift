import AppStoreAPI
import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `RefundDesk`: what a kept request says, what the database knows, and the Send Consumption
/// Information body composed from it.
@Suite("RefundDesk: refund requests answered from the database")
struct RefundDeskTests {
    let hour: Int64 = 3_600_000

    /// user-0's order paid for a 30-day period from `World.t0`, user-0's older refunded order, and a
    /// CONSUMPTION_REQUEST for the paid one signed `asked`, kept in the ledger; the desk's request.
    func request(_ world: World, asked: Int64, type: String = "Auto-Renewable Subscription") throws -> RefundRequest {
        var transaction = world.transaction("t-1", original: "o-1", token: World.token(0))
        transaction.type = type
        let jws = try world.builder.consumptionRequest(
            uuid: "c0000000-0000-4000-8000-00000000000a", signedDate: asked, transaction: transaction, reason: "OTHER")
        let found = try world.store.write { s in
            guard var order = try s.order(no: World.token(0)) else { return RefundRequest?.none }
            order.status = .paid
            order.tradeNo = "t-1"
            order.originNo = "o-1"
            order.purchaseDate = World.t0
            order.expiresDate = World.t0 + 30 * World.day
            try s.updateOrder(order)
            _ = try s.insertOrder(
                Order(
                    no: "old", userId: "user-0", productId: World.product, status: .refunded,
                    purchaseDate: World.t0 - 90 * World.day))
            _ = try s.appendLedger(
                LedgerEntry(
                    receivedAt: asked, source: .apple, notificationUUID: "c0000000-0000-4000-8000-00000000000a",
                    notificationType: "CONSUMPTION_REQUEST", transactionId: "t-1", originalTransactionId: "o-1",
                    signedDate: asked, verdict: .ignored, raw: jws))
            return try RefundRequests.request(transactionId: "t-1", s)
        }
        return try #require(found)
    }

    func choices(
        consented: Bool = false, delivery: AppleChoices.DeliveryStatus? = nil, percentage: Int64? = nil,
        preference: AppleChoices.RefundPreference? = nil
    ) -> RefundDesk.Choices {
        RefundDesk.Choices(
            customerConsented: consented, sampleContentProvided: false, deliveryStatus: delivery,
            consumptionPercentage: percentage, refundPreference: preference)
    }

    @Test(arguments: Backend.available)
    func theBodyComesFromTheDatabaseAndConsentOnlyFromTheOperator(backend: Backend) throws {
        let world = try World(backend)
        let asked = World.t0 + 6 * World.day
        let request = try request(world, asked: asked)
        #expect(RefundDesk.reason(of: request.request) == "OTHER")
        let known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.productType == .autoRenewable)
        #expect(known.delivered == true)
        // Apple computes an auto-renewable subscription's consumption itself.
        #expect(known.consumptionPercentage == nil)
        #expect(known.priorRefunds == 1)
        #expect(known.customerSince == World.t0 - 90 * World.day)

        let unconsented = try RefundDesk.answer(request, knowledge: known, choices: choices())
        #expect(unconsented.call.bodyText == #"{"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}"#)
        #expect(unconsented.command == "refunds answer")
        #expect(unconsented.key == "t-1")
        let consented = try RefundDesk.answer(
            request, knowledge: known, choices: choices(consented: true, delivery: .undeliveredOther))
        #expect(
            consented.call.bodyText
                == #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"UNDELIVERED_OTHER"}"#)
        // GRANT_PRORATED is Apple's to compute for a subscription: sent without a percentage.
        let prorated = try RefundDesk.answer(
            request, knowledge: known, choices: choices(consented: true, preference: .grantProrated))
        #expect(!(prorated.call.bodyText ?? "").contains("consumptionPercentage"))
        #expect(throws: RefundDesk.Refusal.percentageForAutoRenewable(transactionId: "t-1")) {
            try RefundDesk.answer(request, knowledge: known, choices: choices(consented: true, percentage: 5))
        }
    }

    @Test func aNonRenewingSubscriptionSendsTheShareOfItsPeriodPassed() throws {
        let world = try World(.sqlite)
        let request = try request(world, asked: World.t0 + 6 * World.day, type: "Non-Renewing Subscription")
        let known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.consumptionPercentage == 20_000)  // 6 of 30 days
        let body = try RefundDesk.answer(request, knowledge: known, choices: choices()).call.bodyText
        #expect(body == #"{"sampleContentProvided":false,"deliveryStatus":"DELIVERED","consumptionPercentage":20000}"#)
    }

    @Test func aOneTimePurchaseFollowsApplesRulesOrIsRefusedBeforeSending() throws {
        let world = try World(.sqlite)
        let request = try request(world, asked: World.t0 + 6 * World.day, type: "Consumable")
        let known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.productType == .consumable)
        #expect(known.consumptionPercentage == nil, "only the operator knows a consumable's consumption")
        func body(_ c: RefundDesk.Choices) throws -> String? {
            try RefundDesk.answer(request, knowledge: known, choices: c).call.bodyText
        }
        #expect(try body(choices()) == #"{"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}"#)
        #expect(
            try body(choices(percentage: 40_000, preference: .grantProrated))
                == #"{"sampleContentProvided":false,"deliveryStatus":"DELIVERED","consumptionPercentage":40000,"refundPreference":"GRANT_PRORATED"}"#
        )
        // Not delivered: 0.
        #expect(
            try body(choices(delivery: .undeliveredQualityIssue))
                == #"{"sampleContentProvided":false,"deliveryStatus":"UNDELIVERED_QUALITY_ISSUE","consumptionPercentage":0}"#)
        #expect(
            throws: RefundDesk.Refusal.undeliveredPercentageNonZero(
                transactionId: "t-1", percentage: 5, deliveryStatus: "UNDELIVERED_QUALITY_ISSUE")
        ) { try body(choices(delivery: .undeliveredQualityIssue, percentage: 5)) }
        // GRANT_PRORATED needs a share above 0 and below all of it.
        for percentage: Int64? in [nil, 0, 100_000] {
            #expect(throws: RefundDesk.Refusal.proratedNeedsPercentage(transactionId: "t-1", percentage: percentage)) {
                try body(choices(percentage: percentage, preference: .grantProrated))
            }
        }
        var untyped = known
        untyped.productType = nil
        #expect(throws: RefundDesk.Refusal.productTypeUnknown(transactionId: "t-1")) {
            try RefundDesk.answer(request, knowledge: untyped, choices: choices())
        }
    }

    @Test func aPeriodLongOverCountsAsAllUsedAndAnUnknownDeliveryIsRefused() throws {
        let world = try World(.sqlite)
        let request = try request(world, asked: World.t0 + 45 * World.day, type: "Non-Renewing Subscription")
        var known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.consumptionPercentage == 100_000)
        known.delivered = nil
        #expect(throws: RefundDesk.Refusal.deliveryUnknown(transactionId: "t-1")) {
            try RefundDesk.answer(request, knowledge: known, choices: choices())
        }
    }

    /// `apple consumption` by hand: the same product-type rules as a composed answer, refused
    /// before sending; what the rules allow passes.
    @Test func aHandComposedAnswerFollowsTheSameProductTypeRules() throws {
        func check(
            _ type: ProductTypeName, _ delivery: String = "DELIVERED", _ percentage: Int64? = nil, _ preference: String? = nil
        ) -> RefundDesk.Refusal? {
            do {
                try RefundDesk.check(
                    transactionId: "t", productType: type, deliveryStatus: delivery, consumptionPercentage: percentage,
                    refundPreference: preference)
                return nil
            } catch { return error }
        }
        #expect(check(.autoRenewable, "DELIVERED", 25_000) == .percentageForAutoRenewable(transactionId: "t"))
        #expect(check(.autoRenewable, "DELIVERED", nil, "GRANT_PRORATED") == nil)
        #expect(
            check(.consumable, "UNDELIVERED_OTHER", 10)
                == .undeliveredPercentageNonZero(transactionId: "t", percentage: 10, deliveryStatus: "UNDELIVERED_OTHER"))
        #expect(check(.consumable, "UNDELIVERED_OTHER", 0) == nil)
        #expect(check(.consumable, "DELIVERED", nil, "GRANT_PRORATED") == .proratedNeedsPercentage(transactionId: "t", percentage: nil))
        #expect(
            check(.nonConsumable, "DELIVERED", 100_000, "GRANT_PRORATED")
                == .proratedNeedsPercentage(transactionId: "t", percentage: 100_000))
        #expect(check(.nonRenewing, "DELIVERED", 40_000, "GRANT_PRORATED") == nil)
        #expect(check(.consumable, "DELIVERED", 100_001) == .percentageOutOfRange(transactionId: "t", percentage: 100_001))
    }

    @Test func aRescindConsentSaysItsAppTransaction() throws {
        let world = try World(.sqlite)
        let jws = try world.builder.rescindConsent(
            uuid: "d0000000-0000-4000-8000-00000000000a", signedDate: World.t0, appTransactionId: "704289572311",
            originalPurchaseDate: World.t0 - World.day)
        let entry = LedgerEntry(receivedAt: World.t0, source: .apple, verdict: .ignored, raw: jws)
        let withdrawal = RefundDesk.consentWithdrawal(entry)
        #expect(withdrawal.appTransactionId == "704289572311")
        #expect(withdrawal.environment == "Sandbox")
        #expect(withdrawal.originalPurchaseDate == World.t0 - World.day)
    }
}
