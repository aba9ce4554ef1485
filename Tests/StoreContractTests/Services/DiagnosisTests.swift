import SubscriptionEngine
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
                    .expiredStillActive(expired, expiresDate: expiry),
                    .paidWithoutTransaction(paid, ledgerTransaction: nil),
                    .mixedOwners(mixed, contract: expired),
                    .orderWithoutContract(orphan, originNo: "gone", ledgerOriginal: nil),
                    .sharedTransactionId(duplicate, firstOrder: mixed, transactionId: "T-9"),
                    .oldUnmatched(unmatched),
                    .environmentUnchecked(environment: "Sandbox", rows: 1, accepted: ["Production"]),
                ])
            #expect(report.findings.map(\.check.rawValue).first == "expired-still-active")
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

    @Test(arguments: StoreBackend.available)
    func aStatusTheSignedFactsDoNotDeriveIsFound(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let derived = try #require(try store.read { try $0.contract(contractId: "1000") }).status
            try T.correctContract(store, .status(.revoked))
            let report = try store.read {
                try Diagnosis.examine($0, now: T.now, accepted: ["Sandbox"], environmentGiven: true)
            }
            let found = report.findings.compactMap { finding -> (ContractStatus, StatusBasis)? in
                guard case .contractStatusVsFacts(let contract, let expected, let basis) = finding, contract.contractId == "1000"
                else { return nil }
                #expect(contract.status == .revoked)
                return (expected, basis)
            }
            #expect(found.count == 1)
            #expect(found.first?.0 == derived)
            if case .facts(let fact, _)? = found.first?.1 { #expect(fact != nil) } else { Issue.record("not from facts") }
        }
    }
}
