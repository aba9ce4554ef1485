import AppStoreAPI
import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import JWSForge
import PersonalData
import SubscriptionEngine
import Testing

/// `RefundDesk`: what a kept request says, what the database knows, and the Send Consumption
/// Information body composed from it.
@Suite("RefundDesk: refund requests answered from the database")
struct RefundDeskTests {
    let hour: Int64 = 3_600_000

    /// user-0's order paid for a 30-day period from `World.t0`, user-0's older refunded order, and a
    /// CONSUMPTION_REQUEST for the paid one signed `asked`, kept in the ledger; the desk's request.
    func request(_ world: World, asked: Int64) throws -> RefundRequest {
        let jws = try world.builder.consumptionRequest(
            uuid: "c0000000-0000-4000-8000-00000000000a", signedDate: asked,
            transaction: world.transaction("t-1", original: "o-1", token: World.token(0)), reason: "OTHER")
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

    func choices(consented: Bool = false, delivery: AppleChoices.DeliveryStatus? = nil, percentage: Int64? = nil)
        -> RefundDesk.Choices
    {
        RefundDesk.Choices(
            customerConsented: consented, sampleContentProvided: false, deliveryStatus: delivery,
            consumptionPercentage: percentage, refundPreference: nil)
    }

    @Test(arguments: Backend.available)
    func theBodyComesFromTheDatabaseAndConsentOnlyFromTheOperator(backend: Backend) throws {
        let world = try World(backend)
        let asked = World.t0 + 6 * World.day
        let request = try request(world, asked: asked)
        #expect(RefundDesk.reason(of: request.request) == "OTHER")
        let known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.delivered == true)
        #expect(known.consumptionPercentage == 20_000)  // 6 of 30 days
        #expect(known.priorRefunds == 1)
        #expect(known.customerSince == World.t0 - 90 * World.day)

        let unconsented = try RefundDesk.answer(request, knowledge: known, choices: choices())
        #expect(
            unconsented.call.bodyText == #"{"sampleContentProvided":false,"deliveryStatus":"DELIVERED","consumptionPercentage":20000}"#)
        #expect(unconsented.command == "refunds answer")
        #expect(unconsented.key == "t-1")
        let consented = try RefundDesk.answer(
            request, knowledge: known, choices: choices(consented: true, delivery: .undeliveredOther, percentage: 5))
        #expect(
            consented.call.bodyText
                == #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"UNDELIVERED_OTHER","consumptionPercentage":5}"#
        )
    }

    @Test func aPeriodLongOverCountsAsAllUsedAndAnUnknownDeliveryIsRefused() throws {
        let world = try World(.sqlite)
        let request = try request(world, asked: World.t0 + 45 * World.day)
        var known = try world.store.read { try RefundDesk.knowledge(request, $0) }
        #expect(known.consumptionPercentage == 100_000)
        known.delivered = nil
        #expect(throws: RefundDesk.Refusal.deliveryUnknown(transactionId: "t-1")) {
            try RefundDesk.answer(request, knowledge: known, choices: choices())
        }
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
