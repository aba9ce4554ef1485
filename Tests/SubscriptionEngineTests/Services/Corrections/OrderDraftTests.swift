import IAPFoundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `orders create`'s rules for a new order: which users, products and numbers are taken, and the
/// number of an order given none.
@Suite("Order creation: drafts of new orders")
struct OrderDraftTests {
    static func refusal(_ body: () throws(OrderCreation.DraftError) -> Order) -> OrderCreation.DraftError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    static func rowRefusal(_ fields: [(key: String, value: JSONValue)]) -> OrderCreation.DraftError? {
        refusal { () throws(OrderCreation.DraftError) in try OrderCreation.Draft(fields: fields).order() }
    }

    @Test func aDraftBecomesAPendingOrder() throws {
        let order = try OrderCreation.Draft(user: "u 42", product: "com.example.pro", no: "ord-1").order()
        #expect(order.no == "ord-1" && order.userId == "u 42" && order.productId == "com.example.pro")
        #expect(order.status == .pending && order.id == 0 && order.tradeNo == nil)
    }

    @Test func anOrderWithoutANumberGetsANewLowercaseUUID() throws {
        #expect(try OrderCreation.Draft(user: "u", product: "p").order { "fixed" }.no == "fixed")
        let first = try OrderCreation.Draft(user: "u", product: "p").order().no
        let second = try OrderCreation.Draft(user: "u", product: "p").order().no
        #expect(first != second)
        #expect(first.count == 36 && first == first.lowercased())
        #expect(first.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
    }

    @Test func usersAndProductsMustBePrintableAndFitAColumn() {
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in try OrderCreation.Draft(user: "", product: "p").order() }
                == .notPrintable(field: "user"))
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in try OrderCreation.Draft(user: "u", product: "  ").order() }
                == .notPrintable(field: "product"))
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in
                try OrderCreation.Draft(user: "a\u{7F}b", product: "p").order()
            } == .notPrintable(field: "user"))
        let long = String(repeating: "x", count: BatchField.maxLength + 1)
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in try OrderCreation.Draft(user: "u", product: long).order() }
                == .field(.tooLong(field: "product", length: long.count, limit: BatchField.maxLength)))
        let longest = String(repeating: "x", count: BatchField.maxLength)
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in try OrderCreation.Draft(user: longest, product: "p").order() }
                == nil)
    }

    @Test func orderNumbersAreOneTo128CharactersWithoutSpaces() {
        for bad in ["", "a b", "tab\there", String(repeating: "n", count: 129)] {
            #expect(
                Self.refusal { () throws(OrderCreation.DraftError) in
                    try OrderCreation.Draft(user: "u", product: "p", no: bad).order()
                } == .badNumber(bad))
        }
        let longest = String(repeating: "n", count: 128)
        #expect(
            Self.refusal { () throws(OrderCreation.DraftError) in
                try OrderCreation.Draft(user: "u", product: "p", no: longest).order()
            } == nil)
    }

    @Test func rowsNameTheirFieldsEitherWay() throws {
        let draft = try OrderCreation.Draft(fields: [("user_id", .string("u1")), ("product_id", .string("p")), ("no", .null)])
        #expect(draft == OrderCreation.Draft(user: "u1", product: "p", no: nil))
        let numbered = try OrderCreation.Draft(fields: [("no", .string("o-7")), ("product", .string("p")), ("user", .int(42))])
        #expect(numbered == OrderCreation.Draft(user: "42", product: "p", no: "o-7"))
        // An empty number in a row asks for a new one (on the command line it is refused).
        #expect(try OrderCreation.Draft(fields: [("user", .string("u")), ("product", .string("p")), ("no", .string(""))]).no == nil)
    }

    @Test func rowsAreRefusedAtTheirFirstBadField() {
        #expect(Self.rowRefusal([("user", .string("u")), ("price", .int(1)), ("product", .bool(true))]) == .unknownField("price"))
        #expect(
            Self.rowRefusal([("user", .string("u")), ("product", .bool(true)), ("price", .int(1))])
                == .field(.notText(field: "product", found: .bool(true))))
        #expect(Self.rowRefusal([("product", .string("p"))]) == .missing("user"))
        #expect(Self.rowRefusal([("user", .string("u"))]) == .missing("product"))
        #expect(Self.rowRefusal([("user", .string("u")), ("product", .string("p")), ("no", .string("a b"))]) == .badNumber("a b"))
    }
}
