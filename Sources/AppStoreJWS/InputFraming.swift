/// Finds the JWS in what users feed the CLI: raw compact JWS, Apple's webhook body
/// `{"signedPayload": "…"}`, and App Store Server API responses that carry several JWS.
public enum WebhookBody {
    /// One JWS found in the input, with its 1-based line number.
    public struct Item: Sendable, Equatable {
        public let line: Int
        /// The JWS, or why this line could not be read.
        public let result: Result<String, VerificationFailure>

        public init(line: Int, result: Result<String, VerificationFailure>) {
            self.line = line
            self.result = result
        }
    }

    /// The JWS carried by one input line.
    ///
    /// Accepts a raw compact JWS; a JSON string holding one; `{"signedPayload": …}`;
    /// `{"signedTransactionInfo": …}` / `{"signedRenewalInfo": …}`; `{"signedTransactions": […]}`
    /// and `{"notificationHistory": [{"signedPayload": …}, …]}` (several). A blank line gives none.
    /// A line that starts like JSON but is not is ``VerificationFailure/Code/invalidJSON``; JSON of
    /// another shape is ``VerificationFailure/Code/invalidPayload`` (both malformed).
    public static func jwsTokens(in line: String) throws(VerificationFailure) -> [String] {
        let text = line.trimmed(.spacesAndNewlines)
        guard let first = text.utf8.first else { return [] }
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "\"") else { return [String(text)] }
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(text.utf8))
        } catch {
            throw VerificationFailure(.invalidJSON, "input is not valid JSON: \(error)")
        }
        return try tokens(in: json)
    }

    /// The JWS in a decoded JSON input document.
    public static func tokens(in json: JSONValue) throws(VerificationFailure) -> [String] {
        if case .string(let jws) = json { return [jws] }
        guard case .object = json else {
            throw VerificationFailure(.invalidPayload, "JSON input is \(json.typeName), expected an object")
        }
        for key in ["signedPayload", "signedTransactionInfo", "signedRenewalInfo"] {
            if let value = json[key] {
                guard case .string(let jws) = value else {
                    throw VerificationFailure(.invalidPayload, "\(key) must be a string, found \(value.typeName)")
                }
                return [jws]
            }
        }
        if let value = json["signedTransactions"] {
            guard case .array(let items) = value else {
                throw VerificationFailure(.invalidPayload, "signedTransactions must be an array, found \(value.typeName)")
            }
            var out: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let jws) = item else {
                    throw VerificationFailure(.invalidPayload, "signedTransactions[\(i)] must be a string, found \(item.typeName)")
                }
                out.append(jws)
            }
            return out
        }
        if let value = json["notificationHistory"] {
            guard case .array(let items) = value else {
                throw VerificationFailure(.invalidPayload, "notificationHistory must be an array, found \(value.typeName)")
            }
            var out: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let jws)? = item["signedPayload"] else {
                    throw VerificationFailure(.invalidPayload, "notificationHistory[\(i)].signedPayload must be a string")
                }
                out.append(jws)
            }
            return out
        }
        throw VerificationFailure(
            .invalidPayload,
            "JSON input has none of signedPayload, signedTransactionInfo, signedRenewalInfo, signedTransactions, notificationHistory")
    }

    /// Every JWS in a whole input text: one item per JWS, numbered by line. When the whole
    /// text is one (possibly pretty-printed) JSON document it is read as such; otherwise each
    /// non-blank line is read with ``jwsTokens(in:)``.
    public static func items(in text: String) -> [Item] {
        let trimmed = text.trimmed(.spacesAndNewlines)
        if trimmed.utf8.first == UInt8(ascii: "{"), trimmed.contains("\n"),
            let json = try? JSONParser.parse(Array(trimmed.utf8))
        {
            do {
                return try tokens(in: json).map { Item(line: 1, result: .success($0)) }
            } catch {
                return [Item(line: 1, result: .failure(error))]
            }
        }
        var items: [Item] = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            do {
                for jws in try jwsTokens(in: String(line)) { items.append(Item(line: number, result: .success(jws))) }
            } catch {
                items.append(Item(line: number, result: .failure(error)))
            }
        }
        return items
    }
}
