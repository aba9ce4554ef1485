/// A transactionId, originalTransactionId or appTransactionId as Apple issues them: decimal digits.
/// Checked when the line is parsed, so a mistyped id is a usage error before any connection.
struct AppleTransactionId: OptionValue {
    let text: String

    init(optionText text: String) throws(OptionValueProblem) {
        guard !text.isEmpty, text.count <= 20, Self.isDigits(text) else {
            let hint =
                AppleOrderId.isOrderIdShape(text) && !Self.isDigits(text)
                ? "'\(text)' looks like the order ID of a receipt e-mail: iapctl apple lookup \(text)"
                : "a transactionId is digits only, e.g. 2000000123456789"
            throw OptionValueProblem("'\(text)' is not a transactionId", hint: hint)
        }
        self.text = text
    }

    /// Only ASCII digits.
    static func isDigits(_ text: String) -> Bool { text.allSatisfy { ("0"..."9").contains($0) } }
}

/// The order ID of a customer's receipt e-mail (`MK5TTTVWJH`): letters and digits.
struct AppleOrderId: OptionValue {
    let text: String

    init(optionText text: String) throws(OptionValueProblem) {
        guard Self.isOrderIdShape(text) else {
            throw OptionValueProblem(
                "'\(text)' is not an order ID",
                hint: "copy the order ID from the customer's receipt e-mail: letters and digits, e.g. MK5TTTVWJH")
        }
        self.text = text
    }

    /// 1–64 ASCII letters and digits.
    static func isOrderIdShape(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}
