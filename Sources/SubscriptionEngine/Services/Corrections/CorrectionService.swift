import IAPFoundation
import SubscriptionModel

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A row kind that can be corrected by hand (`orders update`, `contracts update`, `audit undo`).
public protocol CorrectableRow: Codable, Sendable {
    /// One typed change to one editable field.
    associatedtype Edit: Sendable
    /// `order` or `contract` (audit entity).
    static var entity: EntityKind { get }
    /// The fields that identify a row, in look-up order (`no`, `trade_no`).
    static var keyFields: [String] { get }
    /// The fields that may be changed by hand, by column name.
    static var editableFields: [String] { get }
    /// The typed edit of editable field `field` from a batch cell or option value (`""`/null clears
    /// a nullable field).
    /// - Throws: ``CorrectionFieldError`` for a field that cannot be changed or a value it does not take.
    static func edit(_ field: String, _ value: JSONValue) throws(CorrectionFieldError) -> Edit
    /// Finds a row by one of its key fields (any of them when `field` is none of them).
    static func find(_ key: String, field: String, in session: any StoreSession) throws -> Self?
    /// The edit that sets column `field` to its value in `row` (nil for a column that cannot be set).
    static func edit(copying field: String, from row: Self) -> Edit?
    /// Sets one field.
    mutating func apply(_ edit: Edit)
    /// Checks uniqueness and other cross-row rules before saving (`before` is the stored row).
    /// - Throws: ``CorrectionError`` for a broken rule; store errors.
    func check(against before: Self, in session: any StoreSession) throws
    /// Writes the row.
    func save(in session: any StoreSession) throws
    /// The audit key (`no`, `contract_id`).
    var auditKey: String { get }
    /// The subscription and transaction the row belongs to (what an override of it is checked against).
    var overrideScope: OverrideScope { get }
    /// The compared columns, as text.
    var columnValues: [(String, String?)] { get }
    var updatedAt: Int64 { get set }
}

/// Why a value given for a field cannot be set.
public enum CorrectionFieldError: Error, Sendable, Equatable {
    /// The field is not one of ``CorrectableRow/editableFields``.
    case notEditable(field: String)
    /// The value is not one the field takes (not text, not a time, not on/off, not a status…).
    case invalid(BatchFieldError)
}

/// A changeable field of an order.
public enum OrderEdit: Sendable, Equatable {
    case status(OrderStatus)
    case userId(String)
    case productId(String)
    case expiresDate(Int64?)
    case tradeNo(String?)
    case originNo(String?)
}

/// A changeable field of a contract.
public enum ContractEdit: Sendable, Equatable {
    case status(ContractStatus)
    case autoRenew(Bool)
    case expiresDate(Int64?)
    case userId(String)
    case productId(String)
}

extension Order: CorrectableRow {
    public static var entity: EntityKind { .order }
    public static var keyFields: [String] { ["no", "trade_no"] }
    public static var editableFields: [String] { ["status", "user_id", "product_id", "expires_date", "trade_no", "origin_no"] }

    public static func edit(_ field: String, _ value: JSONValue) throws(CorrectionFieldError) -> OrderEdit {
        do throws(BatchFieldError) {
            switch field {
            case "status": return .status(try BatchField.choice(value, field: field, of: OrderStatus.self))
            case "user_id": return .userId(try BatchField.text(value, field: field))
            case "product_id": return .productId(try BatchField.text(value, field: field))
            case "expires_date": return .expiresDate(try BatchField.optionalTime(value, field: field))
            case "trade_no": return .tradeNo(try BatchField.optionalText(value, field: field))
            case "origin_no": return .originNo(try BatchField.optionalText(value, field: field))
            default: break
            }
        } catch {
            throw .invalid(error)
        }
        throw .notEditable(field: field)
    }

    public static func find(_ key: String, field: String, in session: any StoreSession) throws -> Order? {
        switch field {
        case "no": return try session.order(no: key)
        case "trade_no": return try session.order(tradeNo: key)
        default: return try session.order(no: key) ?? session.order(tradeNo: key)
        }
    }

    public static func edit(copying field: String, from row: Order) -> OrderEdit? {
        switch field {
        case "status": return .status(row.status)
        case "user_id": return .userId(row.userId)
        case "product_id": return .productId(row.productId)
        case "expires_date": return .expiresDate(row.expiresDate)
        case "trade_no": return .tradeNo(row.tradeNo)
        case "origin_no": return .originNo(row.originNo)
        default: return nil
        }
    }

    public mutating func apply(_ edit: OrderEdit) {
        switch edit {
        case .status(let value): status = value
        case .userId(let value): userId = value
        case .productId(let value): productId = value
        case .expiresDate(let value): expiresDate = value
        case .tradeNo(let value): tradeNo = value
        case .originNo(let value): originNo = value
        }
    }

    public func check(against before: Order, in session: any StoreSession) throws {
        if let tradeNo, tradeNo != before.tradeNo, let other = try session.order(tradeNo: tradeNo), other.id != id {
            throw CorrectionError.tradeNoTaken(line: nil, tradeNo: tradeNo, order: other.no)
        }
    }

    public func save(in session: any StoreSession) throws { try session.updateOrder(self) }

    public var auditKey: String { no }

    public var overrideScope: OverrideScope { OverrideScope(originalTransactionId: originNo, tradeNo: tradeNo) }
}

extension Contract: CorrectableRow {
    public static var entity: EntityKind { .contract }
    public static var keyFields: [String] { ["contract_id"] }
    public static var editableFields: [String] { ["status", "auto_renew", "expires_date", "user_id", "product_id"] }

    public static func edit(_ field: String, _ value: JSONValue) throws(CorrectionFieldError) -> ContractEdit {
        do throws(BatchFieldError) {
            switch field {
            case "status": return .status(try BatchField.choice(value, field: field, of: ContractStatus.self))
            case "auto_renew": return .autoRenew(try BatchField.flag(value, field: field))
            case "expires_date": return .expiresDate(try BatchField.optionalTime(value, field: field))
            case "user_id": return .userId(try BatchField.text(value, field: field))
            case "product_id": return .productId(try BatchField.text(value, field: field))
            default: break
            }
        } catch {
            throw .invalid(error)
        }
        throw .notEditable(field: field)
    }

    public static func find(_ key: String, field: String, in session: any StoreSession) throws -> Contract? {
        try session.contract(contractId: key)
    }

    public static func edit(copying field: String, from row: Contract) -> ContractEdit? {
        switch field {
        case "status": return .status(row.status)
        case "auto_renew": return .autoRenew(row.autoRenew)
        case "expires_date": return .expiresDate(row.expiresDate)
        case "user_id": return .userId(row.userId)
        case "product_id": return .productId(row.productId)
        default: return nil
        }
    }

    public mutating func apply(_ edit: ContractEdit) {
        switch edit {
        case .status(let value): status = value
        case .autoRenew(let value): autoRenew = value
        case .expiresDate(let value): expiresDate = value
        case .userId(let value): userId = value
        case .productId(let value): productId = value
        }
    }

    public func check(against before: Contract, in session: any StoreSession) throws {}

    public func save(in session: any StoreSession) throws { try session.updateContract(self) }

    public var auditKey: String { contractId }

    public var overrideScope: OverrideScope { OverrideScope(originalTransactionId: contractId, tradeNo: nil) }
}

/// One requested correction: which row, what to set, why.
public struct CorrectionRequest<Row: CorrectableRow>: Sendable {
    /// One field to set, or why the value given for it is not valid (reported when the row is
    /// reached, so a missing row is reported first, as the request is processed in order).
    public enum Value: Sendable {
        case set(Row.Edit)
        case invalid(CorrectionFieldError)
    }

    /// The input line of a batch row (nil for the command line).
    public var line: Int?
    public var key: String
    /// The key field the key is for; any key field when it is none of ``CorrectableRow/keyFields``.
    public var keyField: String
    public var values: [Value]
    public var reason: String
    public var ticket: String?

    public init(line: Int?, key: String, keyField: String, values: [Value], reason: String, ticket: String?) {
        self.line = line
        self.key = key
        self.keyField = keyField
        self.values = values
        self.reason = reason
        self.ticket = ticket
    }

    /// A request whose values are typed from batch cells or option values (``CorrectableRow/edit(_:_:)``);
    /// a value that does not fit is kept as ``Value/invalid(_:)``, refused when the request is applied.
    public init(
        line: Int?, key: String, keyField: String, fields: [(key: String, value: JSONValue)], reason: String,
        ticket: String?
    ) {
        let values = fields.map { field, value -> Value in
            do throws(CorrectionFieldError) { return .set(try Row.edit(field, value)) } catch { return .invalid(error) }
        }
        self.init(line: line, key: key, keyField: keyField, values: values, reason: reason, ticket: ticket)
    }
}

/// What happened to one requested correction (or one undone audit row).
public struct CorrectionResult: Sendable, Equatable {
    /// The input line of a batch row (nil for the command line and for undo).
    public var line: Int?
    public var entity: EntityKind
    /// The row's audit key (`no`, `contract_id`).
    public var key: String
    /// Column-level changes, values as stored (dates as ms); empty when nothing changed.
    public var changes: [FieldChange]
    /// The audit row written for the change (nil when nothing changed).
    public var auditId: Int64?

    public init(line: Int?, entity: EntityKind, key: String, changes: [FieldChange], auditId: Int64?) {
        self.line = line
        self.entity = entity
        self.key = key
        self.changes = changes
        self.auditId = auditId
    }
}

/// Why a correction was refused. Nothing is written when one is thrown (the transaction rolls back).
public enum CorrectionError: Error, Equatable, Sendable {
    /// No row with that key; `fields` names the key fields searched.
    case notFound(line: Int?, entity: EntityKind, fields: String, key: String)
    /// A value that does not fit its field, or a field that cannot be changed.
    case invalidValue(line: Int?, CorrectionFieldError)
    /// The transactionId is already another order's.
    case tradeNoTaken(line: Int?, tradeNo: String, order: String)
    /// A unique key was violated when saving.
    case conflict(line: Int?, String)

    /// The same error, about input line `line` (if it names none yet).
    func at(line: Int?) -> CorrectionError {
        switch self {
        case .notFound(nil, let entity, let fields, let key): return .notFound(line: line, entity: entity, fields: fields, key: key)
        case .invalidValue(nil, let error): return .invalidValue(line: line, error)
        case .tradeNoTaken(nil, let tradeNo, let order): return .tradeNoTaken(line: line, tradeNo: tradeNo, order: order)
        case .conflict(nil, let message): return .conflict(line: line, message)
        default: return self
        }
    }
}

/// Who makes a hand correction, when, and why: what its audit rows record.
public struct CorrectionContext: Sendable, Equatable {
    public var actor: String
    /// The command recorded in the audit rows (`orders update`, `audit undo 12`).
    public var command: String
    /// The time recorded as `updated_at` and in the audit rows (ms since the epoch).
    public var now: Int64

    public init(actor: String, command: String, now: Int64) {
        self.actor = actor
        self.command = command
        self.now = now
    }
}

/// Hand corrections of orders and contracts: each change is audited (the row before and after),
/// in the caller's transaction, so a batch is all or nothing.
public enum CorrectionService {
    /// Applies `requests` in order inside `session`. A request that changes nothing writes nothing.
    ///
    /// - Throws: ``CorrectionError`` naming the request's input line, or a store error; the caller's
    ///   transaction must then be rolled back (``Store/write(commit:_:)`` does so).
    public static func apply<Row: CorrectableRow>(
        _ requests: [CorrectionRequest<Row>], context: CorrectionContext, in session: any StoreSession
    ) throws -> [CorrectionResult] {
        var results: [CorrectionResult] = []
        for request in requests {
            guard let before = try Row.find(request.key, field: request.keyField, in: session) else {
                let fields = request.line == nil ? Row.keyFields.joined(separator: " or ") : request.keyField
                throw CorrectionError.notFound(line: request.line, entity: Row.entity, fields: fields, key: request.key)
            }
            var row = before
            for value in request.values {
                switch value {
                case .set(let edit): row.apply(edit)
                case .invalid(let error): throw CorrectionError.invalidValue(line: request.line, error)
                }
            }
            results.append(
                try save(
                    row, replacing: before, reason: request.reason, ticket: request.ticket, context: context,
                    in: session, line: request.line))
        }
        return results
    }

    /// Saves `row` over `before` with an audit row, unless no compared column changed. A changed
    /// derived field becomes an ``Override`` unless `keepsOverrides` is false (`audit undo` of a correction).
    static func save<Row: CorrectableRow>(
        _ row: Row, replacing before: Row, reason: String?, ticket: String?, context: CorrectionContext,
        in session: any StoreSession, line: Int? = nil, keepsOverrides: Bool = true
    ) throws -> CorrectionResult {
        var row = row
        let changes = diff(before.columnValues, row.columnValues)
        guard !changes.isEmpty else {
            return CorrectionResult(line: line, entity: Row.entity, key: row.auditKey, changes: [], auditId: nil)
        }
        row.updatedAt = context.now
        let auditId: Int64
        do {
            try row.check(against: before, in: session)
            do { try row.save(in: session) } catch StoreError.conflict(let message) { throw CorrectionError.conflict(line: line, message) }
            auditId = try session.appendAudit(
                AuditEntry(
                    at: context.now, actor: context.actor, command: context.command, reason: reason, ticket: ticket,
                    entity: Row.entity, key: row.auditKey, before: auditJSON(before), after: auditJSON(row)))
            if keepsOverrides {
                try OverrideService.record(
                    changes, entity: Row.entity, key: row.auditKey, scope: row.overrideScope, auditId: auditId, reason: reason,
                    ticket: ticket, context: context, in: session)
            }
        } catch let error as CorrectionError {
            throw error.at(line: line)
        }
        return CorrectionResult(line: line, entity: Row.entity, key: row.auditKey, changes: changes, auditId: auditId)
    }

    /// A row as the audit trail stores it written by hand (JSON, sorted keys).
    public static func auditJSON<T: Encodable>(_ value: T) -> String? { EngineAuditJSON.encode(value) }
}
