import SubscriptionEngine
import SubscriptionModel
import Testing

/// Orders and member contracts: round-trips, unique keys, filters and ordering.
@Suite("Store contract: orders and contracts")
struct OrderAndContractTests {
    @Test(arguments: StoreBackend.available)
    func orderRoundTripsEveryColumn(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let sample = Sample.order("no-1", tradeNo: "t-1", originNo: "o-1")
            let inserted = try store.write { try $0.insertOrder(sample) }
            #expect(inserted.id > 0)
            var expected = sample
            expected.id = inserted.id
            #expect(inserted == expected)
            try store.read { s throws in
                #expect(try s.order(no: "no-1") == expected)
                #expect(try s.order(tradeNo: "t-1") == expected)
                #expect(try s.order(no: "missing") == nil)
                #expect(try s.order(tradeNo: "missing") == nil)
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func orderWithNullsRoundTrips(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let bare = Order(no: "bare", userId: "", productId: "p", createdAt: 1, updatedAt: 2)
            let inserted = try store.write { try $0.insertOrder(bare) }
            let read = try store.read { try $0.order(no: "bare") }
            #expect(read == inserted)
            #expect(read?.userId == "")  // empty text stays empty, not NULL
            #expect(read?.tradeNo == nil && read?.price == nil && read?.status == .pending)
        }
    }

    @Test(arguments: StoreBackend.available)
    func updateOrderWritesEveryColumn(backend: StoreBackend) throws {
        try withStore(backend) { store in
            var order = try store.write { try $0.insertOrder(Sample.order("no-1")) }
            order.status = .refunded
            order.tradeNo = "t-9"
            order.originNo = "o-9"
            order.purchaseDate = nil
            order.expiresDate = 42
            order.environment = nil
            order.price = 0
            order.currency = "USD"
            order.updatedAt = 1_800_000_000_000
            let updated = order
            try store.write { try $0.updateOrder(updated) }
            #expect(try store.read { try $0.order(no: "no-1") } == updated)
            #expect(try store.read { try $0.order(tradeNo: "t-9") } == updated)

            var ghost = updated
            ghost.id = 999_999
            ghost.no = "ghost"
            _ = expectStoreError(.failure) { try store.write { try $0.updateOrder(ghost) } }
        }
    }

    @Test(arguments: StoreBackend.available)
    func contractRoundTripsAndUpdates(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let sample = Sample.contract("o-1")
            var contract = try store.write { try $0.insertContract(sample) }
            #expect(contract.id > 0)
            var expected = sample
            expected.id = contract.id
            #expect(contract == expected)
            #expect(try store.read { try $0.contract(contractId: "o-1") } == expected)
            #expect(try store.read { try $0.contract(contractId: "nope") } == nil)

            contract.status = .billingRetry
            contract.autoRenew = true
            contract.expiresDate = nil
            contract.nextProductId = nil
            contract.lastEventDate = 1_800_000_000_000
            let updated = contract
            try store.write { try $0.updateContract(updated) }
            #expect(try store.read { try $0.contract(contractId: "o-1") } == updated)

            for status in ContractStatus.allCases {
                var c = updated
                c.status = status
                let changed = c
                try store.write { try $0.updateContract(changed) }
                #expect(try store.read { try $0.contract(contractId: "o-1") }?.status == status)
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func uniqueKeysConflict(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("no-1", tradeNo: "t-1"))
                _ = try s.insertContract(Sample.contract("o-1"))
                // Many orders may have no trade_no yet.
                _ = try s.insertOrder(Sample.order("no-2"))
                _ = try s.insertOrder(Sample.order("no-3"))
            }
            let byNo = expectStoreError(.conflict) {
                try store.write { _ = try $0.insertOrder(Sample.order("no-1", tradeNo: "t-2")) }
            }
            #expect(byNo?.description.contains("no") == true)
            let byTradeNo = expectStoreError(.conflict) {
                try store.write { _ = try $0.insertOrder(Sample.order("no-4", tradeNo: "t-1")) }
            }
            #expect(byTradeNo?.description.contains("trade_no") == true)
            let byContract = expectStoreError(.conflict) {
                try store.write { _ = try $0.insertContract(Sample.contract("o-1")) }
            }
            #expect(byContract?.description.contains("contract_id") == true)
            // An update onto an existing key conflicts too.
            var second = try #require(try store.read { try $0.order(no: "no-2") })
            second.tradeNo = "t-1"
            let moved = second
            _ = expectStoreError(.conflict) { try store.write { try $0.updateOrder(moved) } }

            #expect(try store.read { try $0.counts() }.orders == 3)
        }
    }

    @Test(arguments: StoreBackend.available)
    func orderFiltersLimitAndNewestFirst(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("a", user: "u1", product: "p1", status: .paid, originNo: "o-1"))
                _ = try s.insertOrder(Sample.order("b", user: "u2", product: "p1", status: .pending))
                _ = try s.insertOrder(Sample.order("c", user: "u1", product: "p2", status: .refunded, originNo: "o-1"))
                _ = try s.insertOrder(Sample.order("d", user: "u1", product: "p1", status: .paid))
            }
            try store.read { s throws in
                func nos(_ filter: OrderFilter) throws -> [String] { try s.orders(matching: filter).map(\.no) }
                #expect(try nos(OrderFilter()) == ["d", "c", "b", "a"])
                #expect(try nos(OrderFilter(userId: "u1")) == ["d", "c", "a"])
                #expect(try nos(OrderFilter(status: .paid)) == ["d", "a"])
                #expect(try nos(OrderFilter(productId: "p1")) == ["d", "b", "a"])
                #expect(try nos(OrderFilter(originNo: "o-1")) == ["c", "a"])
                #expect(try nos(OrderFilter(userId: "u1", status: .paid, productId: "p1")) == ["d", "a"])
                #expect(try nos(OrderFilter(userId: "u1", limit: 2)) == ["d", "c"])
                #expect(try nos(OrderFilter(limit: 0)) == [])
                #expect(try nos(OrderFilter(userId: "nobody")) == [])
                #expect(try nos(OrderFilter(status: .revoked)) == [])
            }
        }
    }

    @Test(arguments: StoreBackend.available)
    func ordersOfOneSubscriptionOldestPurchaseFirst(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s throws in
                _ = try s.insertOrder(Sample.order("late", originNo: "o-1", purchaseDate: 3_000))
                _ = try s.insertOrder(Sample.order("early", originNo: "o-1", purchaseDate: 1_000))
                _ = try s.insertOrder(Sample.order("tie-1", originNo: "o-1", purchaseDate: 2_000))
                _ = try s.insertOrder(Sample.order("tie-2", originNo: "o-1", purchaseDate: 2_000))
                _ = try s.insertOrder(Sample.order("other", originNo: "o-2", purchaseDate: 500))
            }
            let nos = try store.read { try $0.orders(originNo: "o-1") }.map(\.no)
            #expect(nos == ["early", "tie-1", "tie-2", "late"])
            #expect(try store.read { try $0.orders(originNo: "none") }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.available)
    func contractFiltersLimitAndNewestFirst(backend: StoreBackend) throws {
        try withStore(backend) { store in
            try store.write { s throws in
                _ = try s.insertContract(Sample.contract("c1", user: "u1", product: "p1", status: .active))
                _ = try s.insertContract(Sample.contract("c2", user: "u2", product: "p1", status: .expired))
                _ = try s.insertContract(Sample.contract("c3", user: "u1", product: "p2", status: .gracePeriod))
            }
            try store.read { s throws in
                func ids(_ filter: ContractFilter) throws -> [String] {
                    try s.contracts(matching: filter).map(\.contractId)
                }
                #expect(try ids(ContractFilter()) == ["c3", "c2", "c1"])
                #expect(try ids(ContractFilter(userId: "u1")) == ["c3", "c1"])
                #expect(try ids(ContractFilter(status: .gracePeriod)) == ["c3"])
                #expect(try ids(ContractFilter(productId: "p1")) == ["c2", "c1"])
                #expect(try ids(ContractFilter(userId: "u1", productId: "p1")) == ["c1"])
                #expect(try ids(ContractFilter(limit: 1)) == ["c3"])
            }
        }
    }

    /// PostgreSQL's text cannot hold a NUL character: such a value is refused with a typed error
    /// that says so, and nothing of the transaction is kept.
    @Test(arguments: StoreBackend.available.filter { $0 == .postgres })
    func aNulCharacterIsRefusedWhereTextCannotHoldIt(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let order = Order(no: "o-nul", userId: "u", productId: "p", status: .paid, tradeNo: "\u{0}nul", createdAt: 1, updatedAt: 1)
            let error = expectStoreError(.failure) {
                try store.write { s throws in
                    _ = try s.insertContract(Sample.contract("o-nul"))
                    _ = try s.insertOrder(order)
                }
            }
            #expect(error?.description.contains("NUL character") == true, "\(String(describing: error))")
            let (orders, contract) = try store.read { s throws in (try s.counts().orders, try s.contract(contractId: "o-nul")) }
            #expect(orders == 0)
            #expect(contract == nil)
        }
    }

    @Test(arguments: StoreBackend.available)
    func sqlMetacharactersAreStoredVerbatim(backend: StoreBackend) throws {
        try withStore(backend) { store in
            let evil = "x'; DROP TABLE orders;--"
            let quotes = #"a"b\c`d%_e"#
            // (PostgreSQL's text cannot hold a NUL: aNulCharacterIsRefusedWhereTextCannotHoldIt.)
            let nul = backend == .postgres ? "nul" : "\u{0}nul"
            let order = Order(
                no: evil, userId: quotes, productId: "p?1 OR 1=1", status: .paid, tradeNo: nul,
                originNo: "ünï😀", createdAt: 1, updatedAt: 1)
            let contract = Sample.contract(evil, user: quotes)
            let inserted = try store.write { s throws in
                _ = try s.insertContract(contract)
                return try s.insertOrder(order)
            }
            try store.read { s throws in
                #expect(try s.order(no: evil) == inserted)
                #expect(try s.order(tradeNo: nul)?.no == evil)
                #expect(try s.orders(matching: OrderFilter(userId: quotes)).map(\.no) == [evil])
                #expect(try s.orders(matching: OrderFilter(productId: "p?1 OR 1=1")).count == 1)
                #expect(try s.orders(matching: OrderFilter(userId: "%")).isEmpty)  // no LIKE semantics
                #expect(try s.orders(originNo: "ünï😀").map(\.no) == [evil])
                #expect(try s.contract(contractId: evil)?.userId == quotes)
                #expect(try s.counts().orders == 1)
            }
        }
    }
}
