import IAPFoundation
import SubscriptionModel
import Testing

/// The typing of one batch cell or option value (`BatchField`): text, times, flags and choices, each
/// refusal naming the field and the value.
@Suite("Batch fields")
struct BatchFieldTests {
    static func error<T>(_ body: () throws(BatchFieldError) -> T) -> BatchFieldError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func textFields() throws {
        #expect(try BatchField.text(.string("u42"), field: "user") == "u42")
        #expect(try BatchField.text(.int(2_000_000_123), field: "transaction") == "2000000123")
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.text(.string("  "), field: "user") }
                == .notText(field: "user", found: .string("  ")))
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.text(.bool(true), field: "user") }
                == .notText(field: "user", found: .bool(true)))
        let long = String(repeating: "é", count: BatchField.maxLength + 1)
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.text(.string(long), field: "user") }
                == .tooLong(field: "user", length: 256, limit: 255))
        #expect(try BatchField.optionalText(.null, field: "no") == nil)
        #expect(try BatchField.optionalText(.string(""), field: "no") == nil)
        #expect(try BatchField.optionalText(.string("o1"), field: "no") == "o1")
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.optionalText(.array([]), field: "no") }
                == .notText(field: "no", found: .array([])))
    }

    @Test func timeFields() throws {
        #expect(try BatchField.optionalTime(.int(1_700_000_000_000), field: "expires_date") == 1_700_000_000_000)
        #expect(try BatchField.optionalTime(.string("1700000000000"), field: "expires_date") == 1_700_000_000_000)
        #expect(try BatchField.optionalTime(.string("2025-12-31T00:00:00Z"), field: "expires_date") == 1_767_139_200_000)
        #expect(try BatchField.optionalTime(.null, field: "expires_date") == nil)
        #expect(try BatchField.optionalTime(.string(""), field: "expires_date") == nil)
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.optionalTime(.string("soon"), field: "expires_date") }
                == .notTime(field: "expires_date", value: .string("soon")))
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.optionalTime(.double(1.5), field: "expires_date") }
                == .notTime(field: "expires_date", value: .double(1.5)))
    }

    @Test func flagFields() throws {
        for yes: JSONValue in [.bool(true), .int(1), .string("ON"), .string("yes"), .string("True"), .string("1")] {
            #expect(try BatchField.flag(yes, field: "auto_renew"))
        }
        for no: JSONValue in [.bool(false), .int(0), .string("off"), .string("NO"), .string("false"), .string("0")] {
            #expect(try !BatchField.flag(no, field: "auto_renew"))
        }
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.flag(.int(2), field: "auto_renew") }
                == .notFlag(field: "auto_renew", value: .int(2)))
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.flag(.string("maybe"), field: "auto_renew") }
                == .notFlag(field: "auto_renew", value: .string("maybe")))
    }

    @Test func choiceFields() throws {
        #expect(try BatchField.choice(.string("PAID"), field: "status", of: OrderStatus.self) == .paid)
        #expect(try BatchField.choice(.string("Grace_Period"), field: "status", of: ContractStatus.self) == .gracePeriod)
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.choice(.string("lost"), field: "status", of: OrderStatus.self) }
                == .unknownChoice(field: "status", value: .string("lost"), allowed: ["pending", "paid", "refunded", "revoked"]))
        #expect(
            Self.error { () throws(BatchFieldError) in try BatchField.choice(.int(1), field: "status", of: OrderStatus.self) }
                == .unknownChoice(field: "status", value: .int(1), allowed: OrderStatus.allCases.map(\.rawValue)))
    }
}
