import IAPFoundation
import SubscriptionEngine
import SubscriptionModel

/// Why a `--from` row is not a hand correction (`orders update`, `contracts update`): the row's
/// input line and what the command needs to say about it.
public enum CorrectionRowError: Error, Sendable, Equatable {
    /// The row has none of `keyFields` (``CorrectableRow/keyFields``), so it names no `entity`.
    case missingKey(line: Int, entity: EntityKind, keyFields: [String])
    /// `field` is none of `allowed`: the key fields, the editable fields, `reason` and `ticket`.
    case unknownField(line: Int, field: String, allowed: [String])
    /// The row has a key but no field to set; `editableFields` are those it could set.
    case nothingToChange(line: Int, editableFields: [String])
    /// The key, `reason` or `ticket` is not the text it must be.
    case field(line: Int, BatchFieldError)
    /// The row has no `reason` (or a blank one) and none was given for the batch.
    case missingReason(line: Int)

    /// The input line of the row.
    public var line: Int {
        switch self {
        case .missingKey(let line, _, _), .unknownField(let line, _, _), .nothingToChange(let line, _), .field(let line, _),
            .missingReason(let line):
            return line
        }
    }
}

/// `--from` rows as hand corrections: which field of a row is its key, that every other field is
/// an editable field or a per-row `reason`/`ticket`, that the row sets something, and each value
/// typed for its field (``CorrectionRequest/init(line:key:keyField:fields:reason:ticket:)``: a
/// value its field does not take is refused when the request is applied, after the row is found).
public enum CorrectionRows {
    /// The fields a row may carry besides ``CorrectableRow/keyFields`` and ``CorrectableRow/editableFields``.
    public static let perRowFields = ["reason", "ticket"]

    /// One request per row, in order. The key is the first of `Row`'s key fields the row has (for
    /// an order `no`, else `trade_no`); the row's `reason` and `ticket` replace `reason` and
    /// `ticket` for that row (a `ticket` of null or "" clears it). `reason` may be nil when every
    /// row carries its own.
    ///
    /// - Throws: ``CorrectionRowError`` for the first row that is not a correction or has no reason.
    public static func requests<Row: CorrectableRow>(
        _ rows: [BatchRow], for type: Row.Type, reason: String?, ticket: String?
    ) throws(CorrectionRowError) -> [CorrectionRequest<Row>] {
        let checked = check(rows, for: type, reason: reason, ticket: ticket)
        if let first = checked.problems.first { throw first }
        return checked.requests
    }

    /// Every row checked: a request for each row that is a correction, and why each other row is
    /// not (in input order), so one report can name every bad row.
    public static func check<Row: CorrectableRow>(
        _ rows: [BatchRow], for _: Row.Type, reason: String?, ticket: String?
    ) -> (requests: [CorrectionRequest<Row>], problems: [CorrectionRowError]) {
        var requests: [CorrectionRequest<Row>] = []
        var problems: [CorrectionRowError] = []
        for row in rows {
            do throws(CorrectionRowError) {
                requests.append(try request(row, for: Row.self, reason: reason, ticket: ticket))
            } catch {
                problems.append(error)
            }
        }
        return (requests, problems)
    }

    /// The request of one row.
    static func request<Row: CorrectableRow>(
        _ row: BatchRow, for _: Row.Type, reason: String?, ticket: String?
    ) throws(CorrectionRowError) -> CorrectionRequest<Row> {
        guard let keyField = Row.keyFields.first(where: { row.value($0) != nil }),
            let keyValue = row.value(keyField)
        else {
            throw .missingKey(line: row.line, entity: Row.entity, keyFields: Row.keyFields)
        }
        let key: String
        do { key = try BatchField.text(keyValue, field: keyField) } catch { throw .field(line: row.line, error) }
        var values: [(key: String, value: JSONValue)] = []
        var rowReason = reason
        var rowTicket = ticket
        for (name, value) in row.fields where name != keyField {
            switch name {
            case "reason":
                do { rowReason = try BatchField.text(value, field: name) } catch { throw .field(line: row.line, error) }
            case "ticket":
                do { rowTicket = try BatchField.optionalText(value, field: name) } catch {
                    throw .field(line: row.line, error)
                }
            default:
                guard Row.editableFields.contains(name) else {
                    // Each once (trade_no both says which order and can be set).
                    let allowed = (Row.keyFields + Row.editableFields + perRowFields).reduce(into: [String]()) {
                        if !$0.contains($1) { $0.append($1) }
                    }
                    throw .unknownField(line: row.line, field: name, allowed: allowed)
                }
                values.append((name, value))
            }
        }
        guard !values.isEmpty else { throw .nothingToChange(line: row.line, editableFields: Row.editableFields) }
        guard let rowReason else { throw .missingReason(line: row.line) }
        return CorrectionRequest(
            line: row.line, key: key, keyField: keyField, fields: values, reason: rowReason, ticket: rowTicket)
    }
}
