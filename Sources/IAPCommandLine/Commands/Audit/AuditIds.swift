/// The `ID` of `audit show` and `audit undo`: an audit row id, a positive integer (`#12` accepted).
struct AuditRowId: OptionValue {
    let value: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        value = try AuditIds.parse(text, what: "audit", hint: "the ID column of: iapctl audit list")
    }
}

/// The `ID` of `audit raw`: a ledger item id, a positive integer (`#12` accepted).
struct LedgerItemId: OptionValue {
    let value: Int64

    init(optionText text: String) throws(OptionValueProblem) {
        value = try AuditIds.parse(text, what: "ledger item", hint: "the ledger_id of: iapctl audit show")
    }
}

/// The one grammar of both ids.
enum AuditIds {
    /// `text` (a leading `#` dropped) as a positive integer, or a problem saying `what` id it is not.
    static func parse(_ text: String, what: String, hint: String) throws(OptionValueProblem) -> Int64 {
        var raw = text
        if raw.hasPrefix("#") { raw.removeFirst() }
        guard let id = Int64(raw), id > 0 else {
            throw OptionValueProblem("\(what) id '\(raw)' is not a number", hint: hint, naming: .none)
        }
        return id
    }
}
