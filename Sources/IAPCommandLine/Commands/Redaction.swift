import SubscriptionEngine

/// `--redact`: masks user ids, order numbers (appAccountTokens), transaction ids, contract ids and
/// notification UUIDs in everything a command prints, so the output can be pasted into a ticket.
///
/// How: the command runs into buffers; then every word of its stdout, stderr and error message is
/// classified — UUID-shaped, a long Apple id, or (looked up in the database) an order number, a
/// transactionId, an originalTransactionId or a user id — and replaced by a mask of the same width
/// (`u_3f9a0`, `o_…`, `t_…`, `x_…`). The same value masks the same way everywhere in one run; the
/// key is random per run, so masks cannot be matched across runs. Dates and counts are kept.
/// Limits: user ids shorter than 3 characters or containing spaces are not recognised.
enum Redaction {
    /// Every handler of `handlers`, redacting its output when `--redact` is on.
    static func wrap(_ handlers: [String: CommandHandler]) -> [String: CommandHandler] {
        handlers.mapValues { handler in
            { invocation in
                guard invocation.flag("redact") else { return try handler(invocation) }
                return try run(handler, invocation)
            }
        }
    }

    static func run(_ handler: CommandHandler, _ invocation: Invocation) throws -> ExitCode {
        let out = BufferSink()
        let err = BufferSink()
        let inner = Invocation(
            parsed: invocation.parsed, settings: invocation.settings, environment: invocation.environment,
            stdin: invocation.stdin, stdout: out, stderr: err, isStdoutTTY: invocation.isStdoutTTY,
            root: invocation.root)
        var failure: CLIError?
        var code = ExitCode.success
        do {
            code = try handler(inner)
        } catch let error as CLIError {
            failure = error
        } catch let error as CLIErrorConvertible {
            failure = error.cliError
        }
        let masker = Masker(invocation: invocation)
        var texts = [out.text, err.text]
        if let failure { texts += [failure.message, failure.hint ?? ""] }
        let masked = masker.mask(texts)
        invocation.stdout.write(masked[0])
        invocation.stderr.write(masked[1])
        if var failure {
            failure.message = masked[2]
            failure.hint = failure.hint == nil ? nil : masked[3]
            throw failure
        }
        return code
    }
}

/// Classifies words and replaces the sensitive ones by stable per-run masks.
final class Masker {
    private let invocation: Invocation
    private let key: UInt64
    private var masks: [String: String] = [:]
    private var used: Set<String> = []

    init(invocation: Invocation) {
        self.invocation = invocation
        var generator = SystemRandomNumberGenerator()
        key = generator.next()
    }

    /// The texts with every sensitive word masked (one mapping for all of them).
    func mask(_ texts: [String]) -> [String] {
        let pieces = texts.map(Self.split)
        var words = Set<String>()
        for list in pieces { for piece in list where piece.isWord { words.insert(piece.text) } }
        // Values named as users (`"user_id": "carol"`, `user_id  carol`, `user_id: carol → dave`)
        // are users even when no row holds them any more (transferred away); so is --user.
        for list in pieces {
            for (index, piece) in list.enumerated() where piece.isWord && Self.userKeys.contains(piece.text) {
                for value in Self.valuesAfterKey(list, index) { assign(value, "u_") }
            }
        }
        if let user = invocation.parsed.value("user") { assign(user, "u_") }
        classify(words)
        return pieces.map { list in
            list.map { piece in piece.isWord ? (masks[piece.text] ?? piece.text) : piece.text }.joined()
        }
    }

    /// Field names whose value is a user id.
    static let userKeys: Set<String> = ["user_id", "userId", "user", "owner"]

    /// Words that are structure, never values: JSON keys of changes, nulls.
    static let structureWords: Set<String> = ["field", "before", "after", "null", "column", "changes"]

    /// The value(s) named by the key at `index`: the next word that is not structure (skipping
    /// `null`, `before`, …), and after a `→` the next one too (`user_id: alice → dave`).
    static func valuesAfterKey(_ list: [Piece], _ index: Int) -> [String] {
        var values: [String] = []
        var scanned = 0
        var next = index + 1
        while next < list.count, scanned < 6 {
            let piece = list[next]
            next += 1
            if !piece.isWord {
                if !values.isEmpty, !piece.text.contains("→") { break }
                continue
            }
            scanned += 1
            if structureWords.contains(piece.text) || userKeys.contains(piece.text) { continue }
            if piece.text.contains("_"), RowRendering.schemaOrder.contains(piece.text) { break }
            values.append(piece.text)
        }
        return values
    }

    /// Decides a mask for each sensitive word.
    private func classify(_ words: Set<String>) {
        var unknown: [String] = []
        for word in words.sorted() {
            if let prefix = Self.patternPrefix(word) { assign(word, prefix) } else { unknown.append(word) }
        }
        guard !unknown.isEmpty, let store = try? DbOpen.existing(invocation) else { return }
        _ = try? store.read { session in
            for word in unknown {
                if let prefix = try Self.lookupPrefix(word, in: session) { assign(word, prefix) }
            }
        }
        for word in words.sorted() where masks[word] == nil && Self.isUUID(word) { assign(word, "x_") }
    }

    /// UUIDs (order numbers, appAccountTokens, notification UUIDs) and Apple-length ids, without the database.
    static func patternPrefix(_ word: String) -> String? {
        if isUUID(word) { return nil }  // decided after the lookup: an order number or another UUID
        if word.count >= 12, word.allSatisfy(\.isASCIIDigit) {
            // 13-digit millisecond times of 2000–2100 are dates, not ids.
            if word.count == 13, let ms = Int64(word), ms >= 946_684_800_000, ms < 4_102_444_800_000 { return nil }
            return "t_"
        }
        return nil
    }

    /// What the database knows the word as.
    static func lookupPrefix(_ word: String, in session: any StoreSession) throws -> String? {
        if try session.order(no: word) != nil { return "o_" }
        if try session.order(tradeNo: word) != nil { return "t_" }
        if try session.contract(contractId: word) != nil { return "t_" }
        guard word.count >= 3 else { return nil }
        if try !session.orders(matching: OrderFilter(userId: word, limit: 1)).isEmpty { return "u_" }
        if try !session.contracts(matching: ContractFilter(userId: word, limit: 1)).isEmpty { return "u_" }
        return nil
    }

    private func assign(_ word: String, _ prefix: String) {
        guard masks[word] == nil else { return }
        let width = max(word.count, prefix.count + 3)
        var salt: UInt64 = 0
        while true {
            var hex = ""
            var round: UInt64 = 0
            while hex.count < width - prefix.count {
                let h = Self.hash(word, key: key &+ salt &* 0x9E37_79B9_7F4A_7C15 &+ round)
                hex += String(h, radix: 16).leftPadded(to: 16)
                round += 1
            }
            let mask = prefix + hex.prefix(width - prefix.count)
            if used.insert(mask).inserted {
                masks[word] = mask
                return
            }
            salt += 1
        }
    }

    /// FNV-1a over the key and the word.
    static func hash(_ word: String, key: UInt64) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in withUnsafeBytes(of: key.littleEndian, Array.init) + Array(word.utf8) {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h ^ (h >> 29)
    }

    static func isUUID(_ word: String) -> Bool {
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
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

extension String {
    /// Zeros in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
