import AppStoreJWS
import SubscriptionEngine

extension Order: Correctable {
    static var entity: EntityKind { .order }
    static var keyFields: [String] { ["no", "trade_no"] }
    static var editableFields: [String] {
        ["status", "user_id", "product_id", "expires_date", "trade_no", "origin_no"]
    }

    static func find(_ key: String, field: String, in session: any StoreSession) throws -> Order? {
        switch field {
        case "no": return try session.order(no: key)
        case "trade_no": return try session.order(tradeNo: key)
        default: return try session.order(no: key) ?? session.order(tradeNo: key)
        }
    }

    mutating func set(_ field: String, _ value: JSONValue) throws(CLIError) {
        switch field {
        case "status":
            status = try FieldValue.choice(value, field: "status", of: OrderStatus.self)
        case "user_id": userId = try FieldValue.text(value, field: field)
        case "product_id": productId = try FieldValue.text(value, field: field)
        case "expires_date": expiresDate = try FieldValue.optionalTime(value, field: field)
        case "trade_no": tradeNo = try FieldValue.optionalText(value, field: field)
        case "origin_no": originNo = try FieldValue.optionalText(value, field: field)
        default: throw CLIError(.dataError, "field '\(field)' cannot be changed")
        }
    }

    func check(against before: Order, in session: any StoreSession) throws {
        if let tradeNo, tradeNo != before.tradeNo, let other = try session.order(tradeNo: tradeNo), other.id != id {
            throw CLIError(.conflict, "trade_no \(tradeNo) already belongs to order \(other.no)")
        }
    }

    func save(in session: any StoreSession) throws { try session.updateOrder(self) }

    var auditKey: String { no }
}

extension Contract: Correctable {
    static var entity: EntityKind { .contract }
    static var keyFields: [String] { ["contract_id"] }
    static var editableFields: [String] {
        ["status", "auto_renew", "expires_date", "user_id", "product_id"]
    }

    static func find(_ key: String, field: String, in session: any StoreSession) throws -> Contract? {
        try session.contract(contractId: key)
    }

    mutating func set(_ field: String, _ value: JSONValue) throws(CLIError) {
        switch field {
        case "status":
            status = try FieldValue.choice(value, field: "status", of: ContractStatus.self)
        case "auto_renew": autoRenew = try FieldValue.flag(value, field: field)
        case "expires_date": expiresDate = try FieldValue.optionalTime(value, field: field)
        case "user_id": userId = try FieldValue.text(value, field: field)
        case "product_id": productId = try FieldValue.text(value, field: field)
        default: throw CLIError(.dataError, "field '\(field)' cannot be changed")
        }
    }

    func check(against before: Contract, in session: any StoreSession) throws {}

    func save(in session: any StoreSession) throws { try session.updateContract(self) }

    var auditKey: String { contractId }
}
