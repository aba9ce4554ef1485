import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Refund-answer claims (`iap_refund_answers`): a unique key per refund request, taken before
/// anything is sent, so a request is answered at most once.
@Suite("Store contract: refund answer claims")
struct RefundAnswerClaimTests {
    func claim(_ by: String, at: Int64 = 10) -> RefundAnswerClaim {
        RefundAnswerClaim(
            requestKey: "c0000000-0000-4000-8000-000000000001", transactionId: "1000", claimedAt: at, claimedBy: by,
            rule: "legal", body: #"{"deliveryStatus":"DELIVERED"}"#)
    }

    @Test(arguments: StoreBackend.available)
    func aRequestIsClaimedOnceAndItsAnswerRecorded(backend: StoreBackend) throws {
        try withStore(backend) { store in
            #expect(try store.write { try $0.claimRefundAnswer(claim("a")) })
            #expect(try store.write { try $0.claimRefundAnswer(claim("b")) } == false)
            var held = try #require(try store.read { try $0.refundAnswerClaim(requestKey: claim("a").requestKey) })
            #expect(held.claimedBy == "a" && held.state == .claimed && held.rule == "legal" && held.id > 0)
            // A rolled-back claim leaves nothing.
            let taken = try store.write(commit: false) {
                try $0.claimRefundAnswer(RefundAnswerClaim(requestKey: "k2", transactionId: "2", claimedAt: 1, claimedBy: "x"))
            }
            #expect(taken)
            #expect(try store.read { try $0.refundAnswerClaim(requestKey: "k2") } == nil)
            held.state = .answered
            held.appleStatus = 202
            held.answeredAt = 20
            try store.write { try $0.updateRefundAnswerClaim(held) }
            #expect(try store.read { try $0.refundAnswerClaims() } == [held])
        }
    }

    @Test(arguments: StoreBackend.available)
    func aClaimIsTakenOverOnlyAsItWasRead(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try $0.claimRefundAnswer(claim("dead")) }
            let read = try #require(try store.read { try $0.refundAnswerClaim(requestKey: claim("a").requestKey) })
            #expect(try store.write { try $0.takeOverRefundAnswerClaim(read, by: "rerun", at: 30, rule: nil) })
            // The same reading again: the claim changed since, so a second taker loses.
            #expect(try store.write { try $0.takeOverRefundAnswerClaim(read, by: "other", at: 31, rule: nil) } == false)
            let now = try #require(try store.read { try $0.refundAnswerClaim(requestKey: read.requestKey) })
            #expect(now.claimedBy == "rerun" && now.claimedAt == 30 && now.state == .claimed && now.body == nil)
        }
    }

    /// A second connection claiming a request an open transaction holds waits for it: after a
    /// commit it is refused, after a rollback it gets the claim.
    @Test(arguments: StoreBackend.available)
    func aConcurrentClaimWaitsForTheHolder(backend: StoreBackend) throws {
        try ConcurrentClaim.waitsForTheHolder(backend) { session, key, claimant in
            try session.claimRefundAnswer(
                RefundAnswerClaim(requestKey: key, transactionId: "1", claimedAt: 1, claimedBy: claimant))
        }
    }
}
