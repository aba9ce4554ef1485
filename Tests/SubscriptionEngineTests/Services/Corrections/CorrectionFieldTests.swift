import IAPFoundation
import SubscriptionEngine
import SubscriptionModel
import Testing

/// Which fields of orders and contracts can be corrected by hand, and how a batch cell or option
/// value becomes the column's typed value.
@Suite("Corrections: typed edits from cells")
struct CorrectionFieldTests {
    static func refusal<Row: CorrectableRow>(_: Row.Type, _ field: String, _ value: JSONValue) -> CorrectionFieldError? {
        do {
            _ = try Row.edit(field, value)
            return nil
        } catch {
            return error
        }
    }

    @Test func orderFieldsTakeTheirTypes() throws {
        #expect(try Order.edit("status", .string("PAID")) == .status(.paid))
        #expect(try Order.edit("user_id", .string("alice")) == .userId("alice"))
        #expect(try Order.edit("product_id", .int(7)) == .productId("7"))
        #expect(try Order.edit("expires_date", .int(1_700_000_000_000)) == .expiresDate(1_700_000_000_000))
        #expect(try Order.edit("expires_date", .string("1700000000000")) == .expiresDate(1_700_000_000_000))
        #expect(try Order.edit("expires_date", .string("2027-01-15T00:00:00Z")) == .expiresDate(1_799_971_200_000))
        #expect(try Order.edit("expires_date", .null) == .expiresDate(nil))
        #expect(try Order.edit("trade_no", .int(2_000_000_123)) == .tradeNo("2000000123"))
        #expect(try Order.edit("trade_no", .string("")) == .tradeNo(nil))
        #expect(try Order.edit("origin_no", .null) == .originNo(nil))
    }

    @Test func contractFieldsTakeTheirTypes() throws {
        #expect(try Contract.edit("status", .string("billing_retry")) == .status(.billingRetry))
        for on: JSONValue in [.bool(true), .int(1), .string("on"), .string("Yes"), .string("TRUE")] {
            #expect(try Contract.edit("auto_renew", on) == .autoRenew(true))
        }
        for off: JSONValue in [.bool(false), .int(0), .string("off"), .string("no"), .string("0")] {
            #expect(try Contract.edit("auto_renew", off) == .autoRenew(false))
        }
        #expect(try Contract.edit("expires_date", .string("")) == .expiresDate(nil))
        #expect(try Contract.edit("user_id", .string("bob")) == .userId("bob"))
        #expect(try Contract.edit("product_id", .string("pro.yearly")) == .productId("pro.yearly"))
    }

    @Test func onlyEditableFieldsCanBeChanged() {
        for field in Order.editableFields { #expect(Self.refusal(Order.self, field, .string("")) != .notEditable(field: field)) }
        for field in Contract.editableFields {
            #expect(Self.refusal(Contract.self, field, .string("")) != .notEditable(field: field))
        }
        #expect(Self.refusal(Order.self, "no", .string("x")) == .notEditable(field: "no"))
        #expect(Self.refusal(Order.self, "auto_renew", .string("on")) == .notEditable(field: "auto_renew"))
        #expect(Self.refusal(Contract.self, "contract_id", .string("x")) == .notEditable(field: "contract_id"))
        #expect(Self.refusal(Contract.self, "trade_no", .string("x")) == .notEditable(field: "trade_no"))
    }

    @Test func valuesAFieldDoesNotTakeAreRefusedWithTheReason() {
        #expect(
            Self.refusal(Order.self, "status", .string("lost"))
                == .invalid(.unknownChoice(field: "status", value: .string("lost"), allowed: ["pending", "paid", "refunded", "revoked"])))
        #expect(
            Self.refusal(Contract.self, "status", .string("paid"))
                == .invalid(
                    .unknownChoice(
                        field: "status", value: .string("paid"),
                        allowed: ["active", "canceled", "grace_period", "billing_retry", "expired", "revoked"])))
        #expect(Self.refusal(Contract.self, "auto_renew", .int(2)) == .invalid(.notFlag(field: "auto_renew", value: .int(2))))
        #expect(
            Self.refusal(Order.self, "expires_date", .string("soon")) == .invalid(.notTime(field: "expires_date", value: .string("soon"))))
        #expect(Self.refusal(Order.self, "user_id", .string("")) == .invalid(.notText(field: "user_id", found: .string(""))))
        #expect(Self.refusal(Contract.self, "user_id", .null) == .invalid(.notText(field: "user_id", found: .null)))
        let long = String(repeating: "x", count: BatchField.maxLength + 1)
        #expect(
            Self.refusal(Order.self, "trade_no", .string(long))
                == .invalid(.tooLong(field: "trade_no", length: long.count, limit: BatchField.maxLength)))
    }
}
