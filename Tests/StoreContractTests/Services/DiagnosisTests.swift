import SubscriptionEngine
import SubscriptionModel
import Testing

/// `Diagnosis` (doctor's checks) on every backend: which findings, about which rows.
@Suite("Services: diagnosis")
struct DiagnosisTests {
    func order(
        _ no: String, user: String = "u1", status: OrderStatus = .paid, tradeNo: String? = nil, originNo: String? = nil,
        environment: String? = "Production"
    ) -> Order {
        Order(
            no: no, userId: user, productId: "pro.monthly", status: status, tradeNo: tradeNo, originNo: originNo,
            environment: environment, createdAt: 1, updatedAt: 1)
    }

    @Test(arguments: StoreBackend.available)
    func aCleanDatabaseHasNoFindings(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try $0.insertOrder(order("o-1", status: .pending)) }
            let report = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Production"], environmentGiven: false)
            }
            #expect(report.findings.isEmpty)
            #expect(report.orders == 1 && report.contracts == 0 && report.unmatched == 0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func eachBrokenInvariantIsOneFindingInCheckOrder(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let expiry = T.now - 10 * T.day
            let (expired, sandbox) = try store.write { s in
                let expired = try s.insertContract(
                    Contract(
                        contractId: "c-exp", userId: "u1", productId: "pro.monthly", status: .active, expiresDate: expiry,
                        environment: "Production", createdAt: 1, updatedAt: 1))
                let sandbox = try s.insertContract(
                    Contract(
                        contractId: "c-sb", userId: "u3", productId: "pro.monthly", status: .active,
                        expiresDate: T.now + 10 * T.day, environment: "Sandbox", createdAt: 1, updatedAt: 1))
                return (expired, sandbox)
            }
            let (paid, mixed, orphan, duplicate) = try store.write { s in
                (
                    try s.insertOrder(order("o-paid")),
                    try s.insertOrder(order("o-mixed", user: "u2", tradeNo: "t-9", originNo: "c-exp")),
                    try s.insertOrder(order("o-orphan", tradeNo: "t-8", originNo: "gone")),
                    try s.insertOrder(order("o-dup", tradeNo: "T-9"))  // the same id to Apple, whatever the case
                )
            }
            let unmatchedId = try store.write { s in
                try s.appendLedger(
                    LedgerEntry(
                        receivedAt: T.now - 2 * T.day, source: .client, transactionId: "t-7", originalTransactionId: "o-7",
                        appAccountToken: "o-later", signedDate: T.now - 2 * T.day, verdict: .unmatched, detail: "no order",
                        raw: "eyJ.x.y"))
            }
            let unmatched = try #require(try store.read { try $0.ledgerEntry(id: unmatchedId) })

            let report = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Production"], environmentGiven: false)
            }
            #expect(
                report.findings == [
                    .lapsed(expired, Lapse(paidUntil: expiry)),
                    .paidWithoutTransaction(paid, ledgerTransaction: nil),
                    .mixedOwners(mixed, contract: expired),
                    .orderWithoutContract(orphan, originNo: "gone", ledgerOriginal: nil),
                    .sharedTransactionId(duplicate, firstOrder: mixed, transactionId: "T-9"),
                    .oldUnmatched(unmatched),
                    .environmentUnchecked(environment: "Sandbox", rows: 1, accepted: ["Production"]),
                ])
            #expect(report.findings.map(\.check.rawValue).first == "lapsed")
            #expect(report.findings.map(\.key) == ["c-exp", "o-paid", "o-mixed", "o-orphan", "o-dup", "\(unmatchedId)", "-"])

            // With the accepted environments given, each foreign row is its own finding.
            let given = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Production"], environmentGiven: true)
            }
            #expect(
                given.findings.filter { $0.check == .environment } == [
                    .foreignEnvironment(.contract, key: sandbox.contractId, environment: "Sandbox", accepted: ["Production"])
                ])
        }
    }

    /// A paid period that ended with nothing from Apple since is a missed event, found: reported a
    /// day after it ended (or before the threshold given); a renewal moves it, a grace period or
    /// billing retry (Apple's word on a failed renewal) or an expiry ends it.
    @Test(arguments: StoreBackend.available)
    func aContractLapsedForADayIsFoundUntilAppleSaysMore(backend: StoreBackend) throws {
        try withStore(backend) { store in
            func examine(_ lapsedBefore: Int64?) throws -> [DiagnosisFinding] {
                let report = try store.read {
                    try Diagnosis.examine(
                        $0, now: T.now, accepted: ["Sandbox"], environmentGiven: true, lapsedBefore: lapsedBefore)
                }
                return report.findings.filter { $0.check == .lapsed }
            }
            func contract(_ id: String, _ status: ContractStatus, expires: Int64) -> Contract {
                Contract(
                    contractId: id, userId: "u1", productId: "pro.monthly", status: status, expiresDate: expires,
                    environment: "Sandbox", createdAt: 1, updatedAt: 1)
            }
            let rows = [
                contract("c-recent", .active, expires: T.now - 2 * 3_600_000),
                contract("c-canceled", .canceled, expires: T.now - 2 * T.day),
                contract("c-grace", .gracePeriod, expires: T.now - 2 * T.day),
                contract("c-retry", .billingRetry, expires: T.now - 2 * T.day),
                contract("c-expired", .expired, expires: T.now - 2 * T.day),
                contract("c-running", .active, expires: T.now + T.day),
            ]
            var stored: [Contract] = []
            for row in rows { stored.append(try store.write { try $0.insertContract(row) }) }
            let canceled = stored[1]
            let found = try examine(nil)
            #expect(found == [.lapsed(canceled, Lapse(paidUntil: T.now - 2 * T.day))])
            // A threshold an hour back reports the one that ended two hours ago too.
            #expect(try examine(T.now - 3_600_000).map(\.key) == ["c-recent", "c-canceled"])

            // Through the engine: the purchase's period ended long before now.
            try T.purchase(store)
            let bought = try #require(try store.read { try $0.contract(contractId: "1000") })
            #expect(try examine(nil).first { $0.key == "1000" } == .lapsed(bought, Lapse(paidUntil: T.start + 30 * T.day)))
            // A renewal moves the paid period (still ended long ago), a grace period ends the lapse.
            _ = try T.engine.apply(
                T.notification("DID_RENEW", signed: T.start + 30 * T.day, tx: T.tx("1001", period: 1)), to: store,
                context: T.context)
            let renewed = try #require(try store.read { try $0.contract(contractId: "1000") })
            #expect(try examine(nil).first { $0.key == "1000" } == .lapsed(renewed, Lapse(paidUntil: T.start + 60 * T.day)))
            _ = try T.engine.apply(
                T.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", signed: T.start + 60 * T.day, tx: T.tx("1001", period: 1)),
                to: store, context: T.context)
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .gracePeriod)
            #expect(try examine(nil).map(\.key) == ["c-canceled"])
        }
    }

    @Test(arguments: StoreBackend.available)
    func aStatusTheSignedFactsDoNotDeriveIsFound(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let derived = try #require(try store.read { try $0.contract(contractId: "1000") }).status
            try T.correctContract(store, .status(.revoked))
            let report = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Sandbox"], environmentGiven: true)
            }
            let found = report.findings.compactMap { finding -> (ContractStatus, StatusBasis, Override?)? in
                guard case .contractStatusVsFacts(let contract, let expected, let basis, let held) = finding,
                    contract.contractId == "1000"
                else { return nil }
                #expect(contract.status == .revoked)
                return (expected, basis, held)
            }
            #expect(found.count == 1)
            #expect(found.first?.0 == derived)
            if case .facts(let fact, _)? = found.first?.1 { #expect(fact != nil) } else { Issue.record("not from facts") }
            // The hand correction is an override in force: the finding names it, so the fix lifts it.
            let held = try #require(found.first?.2)
            #expect(held.field == "status" && held.value == "revoked")
        }
    }
}
