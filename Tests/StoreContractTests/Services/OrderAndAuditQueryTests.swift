import IAPFoundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `OrderCreation` and `AuditQuery` on every backend.
@Suite("Services: order creation, audit queries")
struct OrderAndAuditQueryTests {
    let context = CorrectionContext(actor: "shop", command: "orders create", now: T.now)

    func pending(_ no: String, user: String = "alice") -> Order {
        Order(no: no, userId: user, productId: "pro.monthly", status: .pending)
    }

    @Test(arguments: StoreBackend.available)
    func newOrdersAreInsertedWithAnAuditRowEach(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let created = try store.write {
                try OrderCreation.create([(1, pending("a")), (2, pending("b", user: "bob"))], context: context, in: $0)
            }
            #expect(created.map(\.no) == ["a", "b"])
            #expect(created.allSatisfy { $0.id > 0 && $0.createdAt == T.now && $0.updatedAt == T.now })
            let audit = try store.read { try $0.auditEntries(matching: AuditFilter()) }
            #expect(audit.map(\.key).sorted() == ["a", "b"])
            #expect(audit.allSatisfy { $0.before == nil && $0.actor == "shop" && $0.command == "orders create" })
            #expect(audit.allSatisfy { $0.after?.contains("\"status\":\"pending\"") == true })
        }
    }

    @Test(arguments: StoreBackend.available)
    func draftsOfRowsAreCreatedWithNewNumbersWhereNoneIsGiven(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let rows: [[(key: String, value: JSONValue)]] = [
                [("user", .string("alice")), ("product", .string("pro.monthly")), ("no", .string("imported-1"))],
                [("user_id", .string("bob")), ("product_id", .string("pro.yearly"))],
            ]
            let orders = try rows.map { try OrderCreation.Draft(fields: $0).order() }
            let created = try store.write {
                try OrderCreation.create(orders.enumerated().map { ($0.offset + 1, $0.element) }, context: context, in: $0)
            }
            #expect(created.count == 2 && created[0].no == "imported-1" && created[1].no.count == 36)
            let bob = try #require(try store.read { try $0.order(no: created[1].no) })
            #expect(bob.userId == "bob" && bob.productId == "pro.yearly" && bob.status == .pending && bob.createdAt == T.now)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aRepeatedOrExistingNumberRefusesTheWholeBatch(backend: StoreBackend) throws {
        try withStore(backend) { store in
            _ = try store.write { try OrderCreation.create([(nil, pending("a"))], context: context, in: $0) }
            #expect(throws: OrderCreationError.repeated(line: 3, no: "b")) {
                _ = try store.write {
                    try OrderCreation.create([(2, pending("b")), (3, pending("b"))], context: context, in: $0)
                }
            }
            #expect(throws: OrderCreationError.exists(line: 5, no: "a")) {
                _ = try store.write {
                    try OrderCreation.create([(4, pending("c")), (5, pending("a"))], context: context, in: $0)
                }
            }
            #expect(try store.read { try $0.orders(matching: OrderFilter()) }.map(\.no) == ["a"])
        }
    }

    @Test(arguments: StoreBackend.available)
    func auditRowsNarrowedByUserOrderContractAndCommand(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try T.purchase(store)  // ord-1 of alice, paid by transaction 1000; contract 1000
            _ = try store.write { try OrderCreation.create([(nil, pending("ord-2", user: "bob"))], context: context, in: $0) }
            let moved = CorrectionContext(actor: "support", command: "orders update", now: T.now + 1)
            _ = try store.write {
                try CorrectionService.apply(
                    [
                        CorrectionRequest<Order>(
                            line: nil, key: "ord-2", keyField: "", values: [.set(.userId("carol"))], reason: "r", ticket: nil)
                    ], context: moved, in: $0)
            }
            let query = { (narrowing: AuditQuery.Narrowing, limit: Int?) in
                try store.read { try AuditQuery.entries(AuditFilter(), narrowing: narrowing, limit: limit, in: $0) }
            }
            let all = try query(.init(), nil)
            #expect(all.map(\.id) == all.map(\.id).sorted(by: >))  // newest first
            #expect(try query(.init(), 2).count == 2)
            // By transaction id, the order's number is found.
            #expect(try query(.init(order: "1000"), nil).allSatisfy { $0.entity == .order && $0.key == "ord-1" })
            #expect(try query(.init(contract: "1000"), nil).map(\.entity) == [.contract])
            #expect(try query(.init(command: "orders"), nil).map(\.command).sorted() == ["orders create", "orders update"])
            #expect(try query(.init(command: "orders c"), nil).isEmpty)
            // Bob no longer holds ord-2, but the row that moved it away names him.
            let bob = try query(.init(user: "bob"), nil)
            #expect(bob.map(\.command).sorted() == ["orders create", "orders update"])
            #expect(try query(.init(user: "alice"), nil).allSatisfy { ["ord-1", "1000"].contains($0.key) })
            #expect(try query(.init(user: "alice", command: "orders update"), nil).isEmpty)
        }
    }
}
