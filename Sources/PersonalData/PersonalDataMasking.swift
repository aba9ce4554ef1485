import IAPFoundation
import SubscriptionModel

/// Masks personal data with stable aliases: user ids, order numbers (appAccountTokens),
/// transaction and contract ids, notification UUIDs, actors, e-mail addresses and phone numbers
/// become `user-1`, `order-2`, `txn-3`, `uuid-1`, `actor-1`, `email-1`, `phone-1` (what `--redact`
/// prints, so the output can be pasted into a ticket).
///
/// JSON documents and records are masked member by member: a member named in ``fieldKinds`` is an
/// id of that kind; every other text is masked as free text. Free text is masked word by word:
/// UUIDs, long Apple ids, e-mail addresses, phone numbers, values named by an id key
/// (`user_id: carol → dave`) and words the database knows as an order number, a transaction or
/// contract id or a user id. Aliases are numbered in order of first appearance within one masker:
/// the same value gets the same alias everywhere (JSON, records and text alike); nothing about the
/// value (its length, its neighbours, its hash) can be read from the alias, and another masker
/// numbers afresh. Dates, counts, statuses and products are kept; an alias masked again is kept.
/// Limits: user ids shorter than 3 characters or containing spaces are recognised only in id
/// fields, not in free text.
public final class PersonalDataMasker {
    /// What a value is; the alias prefix.
    public enum Kind: String, Sendable, CaseIterable {
        case user, order, txn, uuid, actor, email, phone
    }

    /// Which fields hold which kind of personal data (record fields, JSON members, and keys named
    /// in free text, `user_id: carol`).
    public static let fieldKinds: [String: Kind] = [
        "user_id": .user, "user": .user, "owner": .user, "userId": .user, "from_user": .user, "to_user": .user,
        "no": .order, "order": .order, "order_no": .order, "app_account_token": .order, "appAccountToken": .order,
        "trade_no": .txn, "origin_no": .txn, "transaction_id": .txn, "original_transaction_id": .txn,
        "transaction": .txn, "contract_id": .txn, "contract": .txn, "transactionId": .txn,
        "originalTransactionId": .txn, "notification_uuid": .uuid, "notificationUUID": .uuid, "actor": .actor,
        "answered_by": .actor, "claimed_by": .actor, "app_transaction_id": .txn, "appTransactionId": .txn,
    ]

    private var aliases: [String: String] = [:]
    private var counters: [Kind: Int] = [:]
    /// Database verdicts on words of free text (nil: not sensitive).
    private var lookedUp: [String: Kind?] = [:]
    private let openStore: (() -> (any Store)?)?
    private var store: (any Store)?
    private var storeOpened = false

    /// A masker with no aliases yet. `store` opens the database that says which words of free text
    /// are order numbers, transaction or contract ids or user ids; it is called once, on the first
    /// word that needs it (nil, or a nil store: words are recognised by their shape only).
    public init(store: (() -> (any Store)?)? = nil) {
        self.openStore = store
    }

    /// The alias of `value` (made on first sight).
    public func alias(_ value: String, _ kind: Kind) -> String {
        if let known = aliases[value] { return known }
        let number = (counters[kind] ?? 0) + 1
        counters[kind] = number
        let made = "\(kind.rawValue)-\(number)"
        aliases[value] = made
        return made
    }

    /// Gives every id member of `document` its alias without masking anything (a first pass, so
    /// free text that names an id before its member is masked too).
    public func collect(_ document: JSONValue) {
        collect(document, kind: nil)
    }

    /// A JSON document with every id member aliased and all other text masked.
    public func json(_ document: JSONValue) -> JSONValue {
        collect(document, kind: nil)
        return value(document, kind: nil)
    }

    /// A record's fields with every id field replaced by its alias and every other text masked as
    /// free text (a `key` field by its `entity`: an order's number or a contract's id).
    public func fields(_ fields: [(key: String, value: JSONValue)]) -> [(key: String, value: JSONValue)] {
        collect(.object(fields), kind: nil)
        let entity = fields.first { $0.key == "entity" }.flatMap { Self.string($0.value) }
        return fields.map { key, value in (key, self.value(value, kind: Self.memberKind(key, field: nil, entity: entity))) }
    }

    /// The kind of the member `key` of an object: by ``fieldKinds``; the `before` and `after` of a
    /// change `{"field": "user_id", "before": …, "after": …}` by the field it names; a `key` by the
    /// `entity` beside it.
    private static func memberKind(_ key: String, field: String?, entity: String?) -> Kind? {
        if key == "key", let entity { return entity == "order" ? .order : .txn }
        if key == "before" || key == "after" { return field.flatMap { fieldKinds[$0] } }
        return fieldKinds[key]
    }

    private static func string(_ value: JSONValue) -> String? {
        if case .string(let text) = value { text } else { nil }
    }

    private func collect(_ value: JSONValue, kind: Kind?) {
        switch value {
        case .string(let text): if let kind, !text.isEmpty { _ = alias(text, kind) }
        case .array(let items): for item in items { collect(item, kind: kind) }
        case .object(let members):
            let field = members.first { $0.key == "field" }.flatMap { Self.string($0.value) }
            let entity = members.first { $0.key == "entity" }.flatMap { Self.string($0.value) }
            for (key, member) in members {
                collect(member, kind: Self.memberKind(key, field: field, entity: entity))
            }
        default: break
        }
    }

    /// A value: aliased when it is an id of `kind`, else masked as free text (recursively).
    private func value(_ value: JSONValue, kind: Kind?) -> JSONValue {
        switch value {
        case .string(let text):
            if let kind, !text.isEmpty { return .string(alias(text, kind)) }
            return .string(self.text(text))
        case .int(let number):
            // Apple's ids can be numbers in a payload; times and counts are kept.
            if let kind, kind == .txn || kind == .user { return .string(alias(String(number), kind)) }
            return value
        case .array(let items):
            return .array(items.map { self.value($0, kind: kind) })
        case .object(let members):
            let field = members.first { $0.key == "field" }.flatMap { Self.string($0.value) }
            let entity = members.first { $0.key == "entity" }.flatMap { Self.string($0.value) }
            return .object(
                members.map { key, member in
                    // A change's `field` names a column: it is kept as it is.
                    if key == "field" { return (key, member) }
                    return (key, self.value(member, kind: Self.memberKind(key, field: field, entity: entity)))
                })
        case .null, .bool, .double:
            return value
        }
    }

    // MARK: free text

    /// `text` with every sensitive word replaced by its alias.
    ///
    /// A value right after an id key (`user_id: carol`, `"user_id": "carol"`) is an id of that
    /// kind, and so is one after a `→` that follows it (`user_id: carol → dave`).
    public func text(_ text: String) -> String {
        let pieces = Self.split(maskPhones(text))
        var result = ""
        var keyKind: Kind?
        var pendingKind: Kind?
        var afterValue = false
        for piece in pieces {
            guard piece.isWord else {
                // A key names the value after it only when a `:` or `=` follows it.
                if let kind = keyKind, piece.text.contains(where: { $0 == ":" || $0 == "=" }) { pendingKind = kind }
                keyKind = nil
                if afterValue, !piece.text.contains("→") { pendingKind = nil }
                if pendingKind != nil, !afterValue, piece.text.contains("\n") { pendingKind = nil }
                afterValue = false
                result += piece.text
                continue
            }
            let word = piece.text
            if let kind = Self.fieldKinds[word], word.contains("_") || word.contains(where: \.isUppercase) {
                keyKind = kind
                pendingKind = nil
                result += word
            } else if let known = aliases[word] {
                result += known
                if pendingKind != nil { afterValue = true }
            } else if let kind = pendingKind, !Self.structureWords.contains(word) {
                result += Self.isAlias(word) ? word : alias(word, kind)
                afterValue = true
            } else if let kind = classify(word) {
                result += alias(word, kind)
            } else {
                result += word
            }
        }
        return result
    }

    /// Words that are structure, never values: JSON keys of changes, nulls.
    static let structureWords: Set<String> = ["field", "before", "after", "null", "column", "changes", "none"]

    /// Whether `word` is one of the aliases a masker makes (`user-3`).
    public static func isAlias(_ word: String) -> Bool {
        guard let dash = word.lastIndex(of: "-"), Kind(rawValue: String(word[..<dash])) != nil else { return false }
        return !word[word.index(after: dash)...].isEmpty && word[word.index(after: dash)...].allSatisfy(\.isASCIIDigit)
    }

    /// What a word of free text is, by its shape or by what the database knows it as.
    func classify(_ word: String) -> Kind? {
        if Self.isAlias(word) { return nil }
        if Self.isEmail(word) { return .email }
        if word.count >= 12, word.allSatisfy(\.isASCIIDigit) {
            // 13-digit millisecond times of 2000–2100 are dates, not ids.
            if word.count == 13, let ms = Int64(word), ms >= 946_684_800_000, ms < 4_102_444_800_000 { return nil }
            return .txn
        }
        if let known = lookedUp[word] { return known }
        let kind = lookup(word) ?? (Self.isUUID(word) ? .uuid : nil)
        lookedUp[word] = kind
        return kind
    }

    /// What the database knows the word as (nil without a database).
    private func lookup(_ word: String) -> Kind? {
        guard word.count >= 3, word.count <= 255, !word.allSatisfy(\.isASCIIDigit) || word.count >= 8 else {
            return nil
        }
        if !storeOpened {
            storeOpened = true
            store = openStore?()
        }
        guard let store else { return nil }
        return
            (try? store.read { session -> Kind? in
                if try session.order(no: word) != nil { return .order }
                if try session.order(tradeNo: word) != nil { return .txn }
                if try session.contract(contractId: word) != nil { return .txn }
                if try !session.orders(matching: OrderFilter(userId: word, limit: 1)).isEmpty { return .user }
                if try !session.contracts(matching: ContractFilter(userId: word, limit: 1)).isEmpty { return .user }
                return nil
            }) ?? nil
    }

    /// `8-4-4-4-12` hexadecimal digits.
    public static func isUUID(_ word: String) -> Bool {
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// `name@domain.tld`.
    public static func isEmail(_ word: String) -> Bool {
        guard let at = word.firstIndex(of: "@"), at != word.startIndex else { return false }
        let domain = word[word.index(after: at)...]
        guard let dot = domain.lastIndex(of: "."), dot != domain.startIndex else { return false }
        return domain[domain.index(after: dot)...].count >= 2
    }

    /// Phone numbers in `text` replaced by aliases: a `+` or a digit, then digits with single
    /// spaces, dashes, dots or parentheses between them, 8 to 15 digits in all, with a separator
    /// or a leading `+` (so plain numbers, dates like 2025-09-05 and ms times are not phones).
    func maskPhones(_ text: String) -> String {
        let characters = Array(text)
        var result = ""
        var index = 0
        func isSeparator(_ c: Character) -> Bool { c == " " || c == "-" || c == "." || c == "(" || c == ")" }
        while index < characters.count {
            let c = characters[index]
            let startsRun = (c == "+" || c == "(" || c.isASCIIDigit)
            let afterWord =
                index > 0
                && (characters[index - 1].isLetter || characters[index - 1].isNumber
                    || characters[index - 1] == "_" || characters[index - 1] == "-" || characters[index - 1] == ".")
            guard startsRun, !afterWord else {
                result.append(c)
                index += 1
                continue
            }
            var end = index + 1
            var digits = c.isASCIIDigit ? 1 : 0
            var separators = 0
            var openParenthesis = c == "("
            var lastDigitEnd = c.isASCIIDigit ? end : index
            while end < characters.count {
                let d = characters[end]
                if d.isASCIIDigit {
                    digits += 1
                    end += 1
                    lastDigitEnd = end
                } else if isSeparator(d), d != ")" || openParenthesis, end + 1 < characters.count,
                    characters[end + 1].isASCIIDigit || characters[end + 1] == "("
                        || (d == ")" && characters[end + 1] == " ")
                {
                    if d == "(" { openParenthesis = true }
                    if d == ")" { openParenthesis = false }
                    separators += 1
                    end += 1
                } else {
                    break
                }
            }
            let candidate = String(characters[index..<lastDigitEnd])
            let followedByWord =
                lastDigitEnd < characters.count
                && (characters[lastDigitEnd].isLetter || characters[lastDigitEnd] == "_")
            if digits >= 8, digits <= 15, separators > 0 || c == "+", !followedByWord, !Self.isDateLike(candidate) {
                result += alias(candidate, .phone)
                index = lastDigitEnd
            } else {
                // Not a phone: copy the run's first character and go on (the rest is scanned as usual).
                result.append(c)
                index += 1
                while index < characters.count, characters[index].isASCIIDigit {
                    result.append(characters[index])
                    index += 1
                }
            }
        }
        return result
    }

    /// `2025-09-05`, `2025-09-05 01`, a version `1.2.3`: not phones.
    static func isDateLike(_ text: String) -> Bool {
        let groups = text.split(whereSeparator: { !$0.isASCIIDigit }).map(\.count)
        return groups.count >= 3 && groups[0] == 4 && groups[1] == 2 && groups[2] == 2
    }

    /// A word, or the text between words.
    struct Piece {
        var text: String
        var isWord: Bool
    }

    /// Splits text into words (letters, digits, `-_@+.` inside) and the rest; a trailing `.` is not part of a word.
    static func split(_ text: String) -> [Piece] {
        var pieces: [Piece] = []
        var current = ""
        var inWord = false
        func isWordCharacter(_ c: Character) -> Bool {
            c.isLetter || c.isNumber || c == "-" || c == "_" || c == "@" || c == "+" || c == "."
        }
        func flush() {
            guard !current.isEmpty else { return }
            if inWord {
                var word = Substring(current)
                var tail = ""
                while let last = word.last, last == "." || last == "-" {
                    tail = String(last) + tail
                    word = word.dropLast()
                }
                if !word.isEmpty { pieces.append(Piece(text: String(word), isWord: true)) }
                if !tail.isEmpty { pieces.append(Piece(text: tail, isWord: false)) }
            } else {
                pieces.append(Piece(text: current, isWord: false))
            }
            current = ""
        }
        for c in text {
            let word = isWordCharacter(c)
            if word != inWord {
                flush()
                inWord = word
            }
            current.append(c)
        }
        flush()
        return pieces
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
