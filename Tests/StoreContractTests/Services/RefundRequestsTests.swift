import SubscriptionEngine
import SubscriptionModel
import Testing

/// `RefundRequests` (the refund-request desk's reading of the store) on every backend: the requests
/// kept in the ledger, their deadline, the audited answer and the later REFUND / REFUND_DECLINED.
@Suite("Services: refund requests")
struct RefundRequestsTests {
    let hour: Int64 = 3_600_000

    func entry(
        _ type: String, uuid: String, tx: String? = nil, signed: Int64, verdict: Verdict = .ignored
    ) -> LedgerEntry {
        LedgerEntry(
            receivedAt: signed, source: .apple, notificationUUID: uuid, notificationType: type, transactionId: tx,
            originalTransactionId: tx.map { "o-\($0)" }, signedDate: signed, verdict: verdict, detail: "kept",
            raw: "eyJ.\(uuid).sig")
    }

    func answer(_ tx: String, at: Int64, status: Int, command: String = "refunds answer") -> AuditEntry {
        AuditEntry(
            at: at, actor: "sam", command: command, reason: "refund request", entity: .order, key: tx, before: nil,
            after: #"{"apple_request":{"method":"PUT"},"apple_response":{"status":\#(status),"body":null}}"#)
    }

    @Test(arguments: StoreBackend.available)
    func requestsAreListedOldestDeadlineFirstWithTheirAnswerAndOutcome(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let (answerId, refundId) = try store.write { s in
                _ = try s.insertOrder(
                    Order(no: "ord-a", userId: "alice", productId: "pro.monthly", status: .paid, tradeNo: "t-a", originNo: "o-t-a"))
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-late", tx: "t-b", signed: T.now - hour))
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-early", tx: "t-a", signed: T.now - 5 * hour))
                // The same request delivered again, and one that did not verify: neither is listed twice.
                _ = try s.appendLedger(
                    entry("CONSUMPTION_REQUEST", uuid: "u-early", tx: "t-a", signed: T.now - 5 * hour, verdict: .duplicate))
                _ = try s.appendLedger(
                    entry("CONSUMPTION_REQUEST", uuid: "u-forged", tx: "t-c", signed: T.now - 2 * hour, verdict: .rejected))
                // A refused answer does not count; an accepted one does.
                _ = try s.appendAudit(answer("t-a", at: T.now - 4 * hour, status: 400))
                let answerId = try s.appendAudit(answer("t-a", at: T.now - 3 * hour, status: 202))
                let refundId = try s.appendLedger(entry("REFUND", uuid: "u-refund", tx: "t-a", signed: T.now, verdict: .applied))
                _ = try s.appendLedger(entry("REFUND_DECLINED", uuid: "u-declined", tx: "t-b", signed: T.now - 2 * hour))
                return (answerId, refundId)
            }
            let requests = try store.read { try RefundRequests.list($0) }
            #expect(requests.map(\.transactionId) == ["t-a", "t-b"])
            let first = try #require(requests.first)
            #expect(first.deadline == T.now - 5 * hour + 12 * hour)
            #expect(first.userId == "alice")
            #expect(first.productId == "pro.monthly")
            #expect(first.order?.no == "ord-a")
            #expect(first.answer == RefundRequestAnswer(auditId: answerId, at: T.now - 3 * hour, actor: "sam", command: "refunds answer"))
            #expect(first.outcome?.id == refundId)
            #expect(first.outcomeWord == "refunded")
            #expect(first.status(now: T.now) == .answered)
            // t-b: its REFUND_DECLINED was signed before the request, so it is not the request's outcome.
            let second = try #require(requests.last)
            #expect(second.answer == nil)
            #expect(second.outcome == nil)
            #expect(second.userId == nil)
            #expect(second.status(now: T.now) == .open)
            #expect(second.status(now: T.now + 9 * hour + 1) == .dueSoon)
            #expect(second.status(now: second.deadline) == .missed)
            #expect(try store.read { try RefundRequests.request(transactionId: "t-b", $0) }?.request.notificationUUID == "u-late")
            #expect(try store.read { try RefundRequests.request(transactionId: "t-c", $0) } == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func doctorWarnsOnlyOfUnansweredRequestsWithLessThanThreeHoursLeft(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s in
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-due", tx: "t-due", signed: T.now - 10 * hour))
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-open", tx: "t-open", signed: T.now - 8 * hour))
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-done", tx: "t-done", signed: T.now - 11 * hour))
                _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-gone", tx: "t-gone", signed: T.now - 13 * hour))
                _ = try s.appendAudit(answer("t-done", at: T.now - hour, status: 202, command: "apple consumption"))
            }
            let findings = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Production"], environmentGiven: true)
            }.findings
            #expect(findings.map(\.check) == [.refundRequestDue])
            #expect(findings.map(\.key) == ["t-due"])
        }
    }

    /// A claim still `claimed` after 15 minutes is a sender that died before recording Apple's
    /// answer: doctor reports it (before the deadline) with `--resend-claimed`; a fresh claim (a
    /// send under way), an answered one and one past its deadline are not reported.
    @Test(arguments: StoreBackend.available)
    func doctorWarnsOfAClaimWhoseSenderDiedBeforeItsDeadline(backend: StoreBackend) throws {
        let minute: Int64 = 60_000
        try withStore(backend) { store in
            try store.write { s in
                for (tx, signed) in [
                    ("t-dead", T.now - 2 * hour), ("t-busy", T.now - 2 * hour), ("t-done", T.now - 2 * hour),
                    ("t-late", T.now - 13 * hour),
                ] {
                    _ = try s.appendLedger(entry("CONSUMPTION_REQUEST", uuid: "u-\(tx)", tx: tx, signed: signed))
                }
                _ = try s.claimRefundAnswer(
                    RefundAnswerClaim(
                        requestKey: "u-t-dead", transactionId: "t-dead", claimedAt: T.now - 16 * minute, claimedBy: "sam pid 1"))
                _ = try s.claimRefundAnswer(
                    RefundAnswerClaim(
                        requestKey: "u-t-busy", transactionId: "t-busy", claimedAt: T.now - 14 * minute, claimedBy: "sam pid 2"))
                _ = try s.claimRefundAnswer(
                    RefundAnswerClaim(
                        requestKey: "u-t-done", transactionId: "t-done", state: .answered, claimedAt: T.now - hour,
                        claimedBy: "sam pid 3", answeredAt: T.now - hour))
                _ = try s.claimRefundAnswer(
                    RefundAnswerClaim(requestKey: "u-t-late", transactionId: "t-late", claimedAt: T.now - 12 * hour, claimedBy: "sam pid 4")
                )
            }
            let findings = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Production"], environmentGiven: true)
            }.findings
            #expect(findings.map(\.check) == [.refundAnswerClaimed], "\(findings)")
            #expect(findings.map(\.key) == ["t-dead"])
            #expect(findings.map(\.entity) == ["refund-request"])
        }
    }

    @Test(arguments: StoreBackend.available)
    func consentWithdrawalsAreListedOnce(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s in
                _ = try s.appendLedger(entry("RESCIND_CONSENT", uuid: "u-r1", signed: T.now - hour))
                _ = try s.appendLedger(entry("RESCIND_CONSENT", uuid: "u-r1", signed: T.now - hour, verdict: .duplicate))
                _ = try s.appendLedger(entry("RESCIND_CONSENT", uuid: "u-r0", signed: T.now - 2 * hour))
                _ = try s.appendLedger(entry("TEST", uuid: "u-t", signed: T.now))
            }
            let listed = try store.read { try RefundRequests.consentWithdrawals($0) }
            #expect(listed.map(\.notificationUUID) == ["u-r0", "u-r1"])
        }
    }
}
