import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `CorrectionService` and `AuditUndoService` on every backend: rows changed, audit rows, refusals.
@Suite("Services: corrections and audit undo")
struct CorrectionServiceTests {
    let context = CorrectionContext(actor: "support", command: "orders update", now: T.now)

    @Test(arguments: StoreBackend.available)
    func correctionChangesTheRowAndAuditsBeforeAndAfter(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let request = CorrectionRequest<Order>(
                line: nil, key: "ord-1", keyField: "", values: [.set(.status(.refunded)), .set(.tradeNo("2000"))],
                reason: "refund approved", ticket: "T-1")
            let results = try store.write { try CorrectionService.apply([request], context: context, in: $0) }
            #expect(results.count == 1)
            let result = try #require(results.first)
            #expect(result.entity == .order && result.key == "ord-1")
            #expect(
                result.changes == [
                    FieldChange(column: "status", before: "paid", after: "refunded"),
                    FieldChange(column: "trade_no", before: "1000", after: "2000"),
                ])
            let order = try #require(try store.read { try $0.order(no: "ord-1") })
            #expect(order.status == .refunded && order.tradeNo == "2000" && order.updatedAt == T.now)
            let auditId = try #require(result.auditId)
            let audit = try #require(try store.read { try $0.auditEntry(id: auditId) })
            #expect(audit.actor == "support" && audit.command == "orders update")
            #expect(audit.reason == "refund approved" && audit.ticket == "T-1" && audit.ledgerId == nil)
            #expect(audit.before?.contains("\"status\":\"paid\"") == true)
            #expect(audit.after?.contains("\"status\":\"refunded\"") == true)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aRequestThatChangesNothingWritesNoAuditRow(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let before = try store.read { try $0.auditEntries(matching: AuditFilter()) }.count
            let request = CorrectionRequest<Contract>(
                line: 3, key: "1000", keyField: "contract_id", values: [.set(.status(.active))], reason: "r", ticket: nil)
            let results = try store.write { try CorrectionService.apply([request], context: context, in: $0) }
            #expect(results == [CorrectionResult(line: 3, entity: .contract, key: "1000", changes: [], auditId: nil)])
            #expect(try store.read { try $0.auditEntries(matching: AuditFilter()) }.count == before)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aBatchIsAllOrNothing(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let good = CorrectionRequest<Order>(
                line: 1, key: "ord-1", keyField: "no", values: [.set(.userId("bob"))], reason: "r", ticket: nil)
            // A missing row is reported before the bad value of the same request.
            let missing = CorrectionRequest<Order>(
                line: 2, key: "nope", keyField: "no", fields: [("status", .string("x"))], reason: "r", ticket: nil)
            #expect(throws: CorrectionError.notFound(line: 2, entity: .order, fields: "no", key: "nope")) {
                _ = try store.write { try CorrectionService.apply([good, missing], context: context, in: $0) }
            }
            let bad = CorrectionRequest<Order>(
                line: 2, key: "ord-1", keyField: "no", fields: [("status", .string("x"))], reason: "r", ticket: nil)
            let notAStatus = BatchFieldError.unknownChoice(
                field: "status", value: .string("x"), allowed: ["pending", "paid", "refunded", "revoked"])
            #expect(throws: CorrectionError.invalidValue(line: 2, .invalid(notAStatus))) {
                _ = try store.write { try CorrectionService.apply([good, bad], context: context, in: $0) }
            }
            #expect(try store.read { try $0.order(no: "ord-1") }?.userId == "alice")
        }
    }

    @Test(arguments: StoreBackend.available)
    func cellsAreTypedIntoTheColumnsTheySet(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let order = CorrectionRequest<Order>(
                line: 1, key: "ord-1", keyField: "no",
                fields: [
                    ("status", .string("Refunded")), ("expires_date", .string("2027-01-15T00:00:00Z")),
                    ("trade_no", .string("")), ("user_id", .int(42)),
                ], reason: "r", ticket: nil)
            let results = try store.write { try CorrectionService.apply([order], context: context, in: $0) }
            #expect(Set(results.first?.changes.map(\.column) ?? []) == ["status", "expires_date", "trade_no", "user_id"])
            let saved = try #require(try store.read { try $0.order(no: "ord-1") })
            #expect(saved.status == .refunded && saved.tradeNo == nil && saved.userId == "42")
            #expect(saved.expiresDate == 1_799_971_200_000)

            let contract = CorrectionRequest<Contract>(
                line: 2, key: "1000", keyField: "contract_id",
                fields: [("auto_renew", .string("off")), ("status", .string("GRACE_PERIOD"))], reason: "r", ticket: nil)
            _ = try store.write { try CorrectionService.apply([contract], context: context, in: $0) }
            let stored = try #require(try store.read { try $0.contract(contractId: "1000") })
            #expect(stored.autoRenew == false && stored.status == .gracePeriod)

            let notEditable = CorrectionRequest<Contract>(
                line: 3, key: "1000", keyField: "contract_id", fields: [("contract_id", .string("9"))], reason: "r",
                ticket: nil)
            #expect(throws: CorrectionError.invalidValue(line: 3, .notEditable(field: "contract_id"))) {
                _ = try store.write { try CorrectionService.apply([notEditable], context: context, in: $0) }
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func aTransactionIdOfAnotherOrderIsRefused(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            _ = try store.write {
                try $0.insertOrder(Order(no: "ord-2", userId: "alice", productId: "pro.monthly", createdAt: 1, updatedAt: 1))
            }
            let request = CorrectionRequest<Order>(
                line: nil, key: "ord-2", keyField: "", values: [.set(.tradeNo("1000"))], reason: "r", ticket: nil)
            #expect(throws: CorrectionError.tradeNoTaken(line: nil, tradeNo: "1000", order: "ord-1")) {
                _ = try store.write { try CorrectionService.apply([request], context: context, in: $0) }
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func undoPutsTheOldValuesBackOnceAndRefusesAfterADrift(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)
            let correct = { (edit: ContractEdit) in try T.correctContract(store, edit) }
            let corrected = try #require(try correct(.status(.expired)).first?.auditId)
            let undone = try store.write {
                try AuditUndoService.undo(corrected, reason: "mistake", ticket: nil, actor: "lead", now: T.now + 1, in: $0)
            }
            #expect(undone.map(\.changes) == [[FieldChange(column: "status", before: "expired", after: "active")]])
            #expect(try store.read { try $0.contract(contractId: "1000") }?.status == .active)
            let undoId = try #require(undone.first?.auditId)
            let undoRow = try #require(try store.read { try $0.auditEntry(id: undoId) })
            #expect(undoRow.command == "audit undo \(corrected)" && undoRow.actor == "lead" && undoRow.reason == "mistake")
            #expect(throws: AuditUndoError.alreadyUndone(corrected, by: undoRow.id)) {
                _ = try store.write {
                    try AuditUndoService.undo(corrected, reason: "again", ticket: nil, actor: "lead", now: T.now, in: $0)
                }
            }

            let second = try #require(try correct(.autoRenew(false)).first?.auditId)
            _ = try correct(.status(.revoked))
            #expect(
                throws: AuditUndoError.changedSince(
                    second, .contract, key: "1000", drift: [FieldChange(column: "status", before: "active", after: "revoked")])
            ) {
                _ = try store.write {
                    try AuditUndoService.undo(second, reason: "r", ticket: nil, actor: "lead", now: T.now, in: $0)
                }
            }
            #expect(throws: AuditUndoError.notFound(999_999)) {
                _ = try store.write { try AuditUndoService.undo(999_999, reason: "r", ticket: nil, actor: "a", now: 1, in: $0) }
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func anEngineChangeSetIsUndoneWholeOrNotAtAll(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let outcome = try T.purchase(store)
            let ledgerId = try #require(outcome.ledgerId)
            let rows = try store.read { try $0.auditEntries(matching: AuditFilter()) }.filter { $0.ledgerId == ledgerId }
            let orderRow = try #require(rows.first { $0.entity == .order })
            let contractRow = try #require(rows.first { $0.entity == .contract })
            // The purchase paid the order and created the contract (no earlier state to go back to):
            // the change set cannot be undone, so neither row is.
            do {
                _ = try store.write {
                    try AuditUndoService.undo(orderRow.id, reason: "r", ticket: nil, actor: "a", now: T.now, in: $0)
                }
                Issue.record("the change set was undone")
            } catch AuditUndoError.changeSet(let id, let ledger, let members, let because) {
                #expect(id == orderRow.id && ledger == ledgerId)
                #expect(members == rows.sorted { $0.id > $1.id }.map { .init(id: $0.id, entity: $0.entity) })
                switch because {
                case .creation(let row, .contract, "1000"): #expect(row == contractRow.id)
                case .notEditable(let row, .order, _): #expect(row == orderRow.id)  // purchase_date is Apple's
                default: Issue.record("unexpected reason \(because)")
                }
            }
            #expect(try store.read { try $0.order(no: "ord-1") }?.status == .paid)
        }
    }
}
