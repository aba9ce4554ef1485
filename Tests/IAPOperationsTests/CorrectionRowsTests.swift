import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `--from` rows as hand corrections (`orders update --from`): the key field each row is looked up
/// by, per-row `reason`/`ticket`, the typing of values, and each way a row is refused.
@Suite("Correction rows")
struct CorrectionRowsTests {
    static let orderFields = [
        "no", "trade_no", "status", "user_id", "product_id", "expires_date", "origin_no", "reason", "ticket",
    ]
    static let contractFields = [
        "contract_id", "status", "auto_renew", "expires_date", "user_id", "product_id", "reason", "ticket",
    ]

    /// NDJSON text as rows (one object per line, numbered from 1).
    static func rows(_ text: String) throws -> [BatchRow] { try BatchRows.parse(text, path: "-") }

    static func orders(_ text: String, reason: String = "default", ticket: String? = nil) throws
        -> [CorrectionRequest<Order>]
    {
        try CorrectionRows.requests(rows(text), for: Order.self, reason: reason, ticket: ticket)
    }

    /// The error `text` is refused with as order corrections, or nil when it is not refused.
    static func orderError(_ text: String) throws -> CorrectionRowError? {
        let rows = try rows(text)
        do {
            _ = try CorrectionRows.requests(rows, for: Order.self, reason: "r", ticket: nil)
            return nil
        } catch {
            return error
        }
    }

    static func contractError(_ text: String) throws -> CorrectionRowError? {
        let rows = try rows(text)
        do {
            _ = try CorrectionRows.requests(rows, for: Contract.self, reason: "r", ticket: nil)
            return nil
        } catch {
            return error
        }
    }

    /// The typed edits of a request (nil for a value its field does not take).
    static func edits<Row>(_ request: CorrectionRequest<Row>) -> [Row.Edit?] {
        request.values.map { value in
            if case .set(let edit) = value { return edit }
            return nil
        }
    }

    static func invalid<Row>(_ request: CorrectionRequest<Row>) -> [CorrectionFieldError] {
        request.values.compactMap { value in
            if case .invalid(let error) = value { return error }
            return nil
        }
    }

    @Test func anOrderIsLookedUpByNoElseByTradeNo() throws {
        let requests = try Self.orders(
            """
            {"no": "o1", "status": "paid"}
            {"trade_no": 2000000000000001, "status": "refunded"}
            {"no": "o3", "trade_no": "t3"}
            {"trade_no": "t4", "no": "o4", "status": "revoked"}
            """)
        #expect(requests.map(\.line) == [1, 2, 3, 4])
        #expect(requests.map(\.keyField) == ["no", "trade_no", "no", "no"])
        #expect(requests.map(\.key) == ["o1", "2000000000000001", "o3", "o4"])
        #expect(Self.edits(requests[0]) == [.status(.paid)])
        #expect(Self.edits(requests[1]) == [.status(.refunded)])
        // With `no` as the key, `trade_no` is a field to set, in the row's order.
        #expect(Self.edits(requests[2]) == [.tradeNo("t3")])
        #expect(Self.edits(requests[3]) == [.tradeNo("t4"), .status(.revoked)])
    }

    @Test func aContractIsLookedUpByContractId() throws {
        let rows = try Self.rows(#"{"auto_renew": "off", "contract_id": "c1", "expires_date": "1750000000000"}"#)
        let requests = try CorrectionRows.requests(rows, for: Contract.self, reason: "r", ticket: "T")
        #expect(requests.count == 1)
        #expect(requests[0].keyField == "contract_id")
        #expect(requests[0].key == "c1")
        #expect(Self.edits(requests[0]) == [.autoRenew(false), .expiresDate(1_750_000_000_000)])
        #expect(
            try Self.contractError(#"{"no": "o1", "status": "active"}"#)
                == .missingKey(line: 1, entity: .contract, keyFields: ["contract_id"]))
        #expect(
            try Self.contractError(#"{"contract_id": "c1", "trade_no": "t"}"#)
                == .unknownField(line: 1, field: "trade_no", allowed: Self.contractFields))
        #expect(
            try Self.contractError(#"{"contract_id": "c1", "ticket": "T"}"#)
                == .nothingToChange(
                    line: 1, editableFields: ["status", "auto_renew", "expires_date", "user_id", "product_id"]))
    }

    @Test func aRowsReasonAndTicketReplaceTheCommandsForThatRowOnly() throws {
        let requests = try Self.orders(
            """
            {"no": "o1", "status": "paid"}
            {"no": "o2", "status": "paid", "reason": "chargeback"}
            {"no": "o3", "status": "paid", "ticket": "T-9"}
            {"no": "o4", "status": "paid", "ticket": ""}
            {"no": "o5", "status": "paid", "ticket": null, "reason": "r5"}
            {"no": "o6", "ticket": 42, "status": "paid"}
            """,
            reason: "batch", ticket: "T-1")
        #expect(requests.map(\.reason) == ["batch", "chargeback", "batch", "batch", "r5", "batch"])
        #expect(requests.map(\.ticket) == ["T-1", "T-1", "T-9", nil, nil, "42"])
        // reason and ticket are not fields to set.
        #expect(requests.allSatisfy { Self.edits($0) == [.status(.paid)] })
        let noTicket = try Self.orders(#"{"no": "o1", "status": "paid"}"#, reason: "batch", ticket: nil)
        #expect(noTicket[0].ticket == nil)
    }

    @Test func aValueItsFieldDoesNotTakeIsKeptForTheServiceToRefuse() throws {
        let requests = try Self.orders(
            #"{"no": "o1", "status": "payed", "expires_date": "soon", "user_id": "u2"}"#)
        #expect(Self.edits(requests[0]) == [nil, nil, .userId("u2")])
        #expect(
            Self.invalid(requests[0]) == [
                .invalid(.unknownChoice(field: "status", value: .string("payed"), allowed: ["pending", "paid", "refunded", "revoked"])),
                .invalid(.notTime(field: "expires_date", value: .string("soon"))),
            ])
    }

    @Test func aRowWithoutAKeyIsRefused() throws {
        #expect(
            try Self.orderError("{\"no\": \"o1\", \"status\": \"paid\"}\n{\"status\": \"paid\"}")
                == .missingKey(line: 2, entity: .order, keyFields: ["no", "trade_no"]))
        #expect(
            try Self.orderError(#"{"origin_no": "x"}"#)
                == .missingKey(line: 1, entity: .order, keyFields: ["no", "trade_no"]))
    }

    @Test func aKeyThatIsNotTextIsRefused() throws {
        #expect(
            try Self.orderError(#"{"no": true, "status": "paid"}"#)
                == .field(line: 1, .notText(field: "no", found: .bool(true))))
        // A null `no` is still the key the row gives: it is refused, not skipped for `trade_no`.
        #expect(
            try Self.orderError(#"{"no": null, "trade_no": "t1", "status": "paid"}"#)
                == .field(line: 1, .notText(field: "no", found: .null)))
        #expect(
            try Self.orderError(#"{"trade_no": " ", "status": "paid"}"#)
                == .field(line: 1, .notText(field: "trade_no", found: .string(" "))))
    }

    @Test func aReasonOrTicketThatIsNotTextIsRefused() throws {
        #expect(
            try Self.orderError(#"{"no": "o1", "status": "paid", "reason": ""}"#)
                == .field(line: 1, .notText(field: "reason", found: .string(""))))
        #expect(
            try Self.orderError(#"{"no": "o1", "status": "paid", "ticket": false}"#)
                == .field(line: 1, .notText(field: "ticket", found: .bool(false))))
        let long = String(repeating: "r", count: 256)
        #expect(
            try Self.orderError(#"{"no": "o1", "status": "paid", "reason": "\#(long)"}"#)
                == .field(line: 1, .tooLong(field: "reason", length: 256, limit: 255)))
    }

    @Test func aFieldThatIsNeitherEditableNorReasonOrTicketIsRefused() throws {
        #expect(
            try Self.orderError("{\"no\": \"o1\", \"status\": \"paid\"}\n{\"no\": \"o2\", \"colour\": \"red\"}")
                == .unknownField(line: 2, field: "colour", allowed: Self.orderFields))
        // `created_at` is a column, but not one a correction sets.
        #expect(
            try Self.orderError(#"{"trade_no": "t1", "created_at": 1}"#)
                == .unknownField(line: 1, field: "created_at", allowed: Self.orderFields))
    }

    @Test func aRowThatSetsNothingIsRefused() throws {
        let editable = ["status", "user_id", "product_id", "expires_date", "trade_no", "origin_no"]
        #expect(try Self.orderError(#"{"no": "o1"}"#) == .nothingToChange(line: 1, editableFields: editable))
        #expect(
            try Self.orderError("{\"no\": \"o1\", \"status\": \"paid\"}\n{\"no\": \"o2\", \"reason\": \"x\", \"ticket\": \"T\"}")
                == .nothingToChange(line: 2, editableFields: editable))
    }

    @Test func theFirstBadRowAndWithinItTheFirstBadFieldIsReported() throws {
        // A number is text (its digits), so this row's first bad field is `colour`.
        #expect(
            try Self.orderError(#"{"no": "o1", "reason": 5, "colour": "red"}"#)
                == .unknownField(line: 1, field: "colour", allowed: Self.orderFields))
        #expect(
            try Self.orderError(#"{"no": "o1", "reason": [], "colour": "red"}"#)
                == .field(line: 1, .notText(field: "reason", found: .array([]))))
        #expect(
            try Self.orderError(#"{"no": "o1", "colour": "red", "reason": []}"#)
                == .unknownField(line: 1, field: "colour", allowed: Self.orderFields))
        #expect(
            try Self.orderError("{\"no\": \"o1\"}\n{\"colour\": 1}")
                == .nothingToChange(
                    line: 1, editableFields: ["status", "user_id", "product_id", "expires_date", "trade_no", "origin_no"]))
    }

    @Test func noRowsAreNoRequests() throws {
        #expect(try CorrectionRows.requests([], for: Order.self, reason: "r", ticket: nil).isEmpty)
    }
}
