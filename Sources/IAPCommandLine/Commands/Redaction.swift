import AppStoreJWS
import SubscriptionEngine

/// `--redact`: replaces user ids, order numbers (appAccountTokens), transaction and contract ids,
/// notification UUIDs, actors, e-mail addresses and phone numbers by per-run aliases (`user-1`,
/// `order-2`, `txn-3`, `uuid-1`, `actor-1`, `email-1`, `phone-1`), so the output can be pasted
/// into a ticket.
///
/// How: records are masked field by field before any layout (so a table never cuts a raw id, and
/// JSON/NDJSON/CSV carry the same aliases); free text (reasons, details, messages on stderr and the
/// error) is masked word by word: UUIDs, long Apple ids, e-mail addresses, phone numbers, values
/// named by an id key (`user_id: carol → dave`) and words the database knows as an order number,
/// a transaction or contract id or a user id. Aliases are numbered in order of first appearance
/// within one run: the same value gets the same alias everywhere in that run; nothing about the
/// value (its length, its neighbours, its hash) can be read from the alias, and another run
/// numbers afresh. Dates, counts, statuses and products are kept.
/// Limits: user ids shorter than 3 characters or containing spaces are recognised only in id
/// fields, not in free text.
enum Redaction {
    /// `handler`, redacting its output when `--redact` is on.
    static func wrap(_ handler: @escaping CommandHandler) -> CommandHandler {
        { invocation in
            guard invocation.flag(CommandTree.redactOption) else { return try handler(invocation) }
            return try run(handler, invocation)
        }
    }

    static func run(_ handler: CommandHandler, _ invocation: Invocation) throws -> ExitCode {
        let redactor = Redactor(invocation: invocation)
        let inner = Invocation(
            parsed: invocation.parsed, settings: invocation.settings, environment: invocation.environment,
            stdin: invocation.stdin, stdout: RedactingSink(invocation.stdout, redactor),
            stderr: RedactingSink(invocation.stderr, redactor), isStdoutTTY: invocation.isStdoutTTY,
            root: invocation.root, masking: redactor)
        defer {
            try? inner.stdout.flush()
            try? inner.stderr.flush()
        }
        do {
            return try handler(inner)
        } catch let error as CLIError {
            throw redactor.mask(error)
        } catch let error as CLIErrorConvertible {
            throw redactor.mask(error.cliError)
        }
    }
}

/// A sink that masks each complete line of free text before passing it on (the safety net for
/// text a command writes directly; records are masked by field before they are rendered).
final class RedactingSink: OutputSink {
    private let inner: OutputSink
    private let redactor: Redactor
    private var pending = ""

    init(_ inner: OutputSink, _ redactor: Redactor) {
        self.inner = inner
        self.redactor = redactor
    }

    /// The terminal width of the sink underneath (tables fit the real terminal).
    var terminalColumns: Int? { inner.terminalColumns }

    func write(_ text: String) {
        pending += text
        guard let lastNewline = pending.lastIndex(of: "\n") else { return }
        let complete = pending[...lastNewline]
        inner.write(redactor.text(String(complete)))
        pending = String(pending[pending.index(after: lastNewline)...])
    }

    func flush() throws(CLIError) {
        if !pending.isEmpty {
            inner.write(redactor.text(pending))
            pending = ""
        }
        try inner.flush()
    }
}

/// Per-run aliases for sensitive values, by field and in free text.
final class Redactor: RecordMasking {
    /// What a value is; the alias prefix.
    enum Kind: String {
        case user, order, txn, uuid, actor, email, phone
    }

    private let invocation: Invocation
    private var aliases: [String: String] = [:]
    private var counters: [Kind: Int] = [:]
    /// Database verdicts on words of free text (nil: not sensitive).
    private var lookedUp: [String: Kind?] = [:]
    private var store: (any Store)?
    private var storeOpened = false

    init(invocation: Invocation) {
        self.invocation = invocation
        if let user = invocation.parsed.value(CommandTree.userOption) { _ = alias(user, .user) }
        // The actor (who runs this) is masked wherever it appears, like the ids.
        _ = alias(invocation.actor, .actor)
    }

    /// Record keys whose value is an id of a kind.
    static let idKeys: [String: Kind] = [
        "user_id": .user, "user": .user, "owner": .user, "userId": .user, "from_user": .user, "to_user": .user,
        "no": .order, "order": .order, "order_no": .order, "app_account_token": .order, "appAccountToken": .order,
        "trade_no": .txn, "origin_no": .txn, "transaction_id": .txn, "original_transaction_id": .txn,
        "transaction": .txn, "contract_id": .txn, "contract": .txn, "transactionId": .txn,
        "originalTransactionId": .txn, "notification_uuid": .uuid, "notificationUUID": .uuid, "actor": .actor,
    ]

    /// The alias of `value` (made on first sight).
    func alias(_ value: String, _ kind: Kind) -> String {
        if let known = aliases[value] { return known }
        let number = (counters[kind] ?? 0) + 1
        counters[kind] = number
        let made = "\(kind.rawValue)-\(number)"
        aliases[value] = made
        return made
    }

    /// Gives every id field of `value` its alias (a first pass, so free text that names an id
    /// before its field is masked too).
    func collect(_ value: JSONValue, kind: Kind?) {
        switch value {
        case .string(let text): if let kind, !text.isEmpty { _ = alias(text, kind) }
        case .array(let items): for item in items { collect(item, kind: kind) }
        case .object(let members):
            let field = members.first { $0.key == "field" }.flatMap { if case .string(let f) = $0.value { f } else { nil } }
            let entity = members.first { $0.key == "entity" }.flatMap {
                if case .string(let e) = $0.value { e } else { nil }
            }
            for (key, member) in members {
                var memberKind = (key == "before" || key == "after") ? field.flatMap { Self.idKeys[$0] } : Self.idKeys[key]
                if key == "key", let entity { memberKind = entity == "order" ? .order : .txn }
                collect(member, kind: memberKind)
            }
        default: break
        }
    }

    /// A JSON document with every id member aliased and all other text masked.
    func json(_ document: JSONValue) -> JSONValue {
        collect(document, kind: nil)
        return value(document, kind: nil)
    }

    /// A record with every id field replaced by its alias and every other text masked as free text.
    func record(_ record: Record) -> Record {
        collect(record.jsonObject(), kind: nil)
        var masked = Record()
        let entity = record["entity"].flatMap { if case .string(let e) = $0 { e } else { nil } }
        for (key, value) in record.fields {
            var kind = Self.idKeys[key]
            if key == "key", let entity { kind = entity == "order" ? .order : .txn }
            masked.fields.append((key, self.value(value, kind: kind)))
        }
        return masked
    }

    /// A value: aliased when it is an id of `kind`, else masked as free text (recursively).
    func value(_ value: JSONValue, kind: Kind?) -> JSONValue {
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
            // A change `{"field": "user_id", "before": …, "after": …}` masks by the field it names.
            let field = members.first { $0.key == "field" }.flatMap { if case .string(let f) = $0.value { f } else { nil } }
            let named = field.flatMap { Self.idKeys[$0] }
            let entity = members.first { $0.key == "entity" }.flatMap {
                if case .string(let e) = $0.value { e } else { nil }
            }
            return .object(
                members.map { key, member in
                    var memberKind = (key == "before" || key == "after") ? named : Self.idKeys[key]
                    if key == "key", let entity { memberKind = entity == "order" ? .order : .txn }
                    return (key, key == "field" ? member : self.value(member, kind: memberKind))
                })
        case .null, .bool, .double:
            return value
        }
    }

    /// A detail view with every record masked.
    func detail(_ view: DetailView) -> DetailView {
        collect(view.jsonObject(), kind: nil)
        var masked = view
        for index in masked.sections.indices {
            switch masked.sections[index].content {
            case .fields(let record): masked.sections[index].content = .fields(self.record(record))
            case .table(let records, let columns):
                masked.sections[index].content = .table(records.map(self.record), columns: columns)
            }
        }
        return masked
    }

    /// An error with its message and hint masked.
    func mask(_ error: CLIError) -> CLIError {
        var masked = error
        masked.message = text(error.message)
        masked.hint = error.hint.map(text)
        return masked
    }

    // MARK: free text

    /// `text` with every sensitive word replaced by its alias.
    ///
    /// A value right after an id key (`user_id: carol`, `"user_id": "carol"`) is an id of that
    /// kind, and so is one after a `→` that follows it (`user_id: carol → dave`).
    func text(_ text: String) -> String {
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
            if let kind = Self.idKeys[word], word.contains("_") || word.contains(where: \.isUppercase) {
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

    /// Whether `word` is one of our own aliases (`user-3`).
    static func isAlias(_ word: String) -> Bool {
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
            store = try? DbOpen.existing(invocation, readOnly: true)
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

    static func isUUID(_ word: String) -> Bool {
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// `name@domain.tld`.
    static func isEmail(_ word: String) -> Bool {
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
