import AppStoreJWS
import SubscriptionEngine

extension Order: Correctable {
    static func edit(_ field: String, _ value: JSONValue) throws(CLIError) -> OrderEdit {
        switch field {
        case "status":
            return .status(try FieldValue.choice(value, field: "status", of: OrderStatus.self))
        case "user_id": return .userId(try FieldValue.text(value, field: field))
        case "product_id": return .productId(try FieldValue.text(value, field: field))
        case "expires_date": return .expiresDate(try FieldValue.optionalTime(value, field: field))
        case "trade_no": return .tradeNo(try FieldValue.optionalText(value, field: field))
        case "origin_no": return .originNo(try FieldValue.optionalText(value, field: field))
        default: throw CLIError(.dataError, "field '\(field)' cannot be changed")
        }
    }
}

extension Contract: Correctable {
    static func edit(_ field: String, _ value: JSONValue) throws(CLIError) -> ContractEdit {
        switch field {
        case "status":
            return .status(try FieldValue.choice(value, field: "status", of: ContractStatus.self))
        case "auto_renew": return .autoRenew(try FieldValue.flag(value, field: field))
        case "expires_date": return .expiresDate(try FieldValue.optionalTime(value, field: field))
        case "user_id": return .userId(try FieldValue.text(value, field: field))
        case "product_id": return .productId(try FieldValue.text(value, field: field))
        default: throw CLIError(.dataError, "field '\(field)' cannot be changed")
        }
    }
}
