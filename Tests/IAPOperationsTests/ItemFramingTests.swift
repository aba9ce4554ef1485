import AppStoreJWS
import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import PersonalData
import Testing

/// In-memory ``ItemSource``: lines split like `InputReader` does (`\n`, `\r\n`), with its own
/// errors for a line too long, not UTF-8, or (at `brokenAtLine`) a failed read.
final class MemorySource: ItemSource {
    enum ReadError: Error, Equatable {
        case tooLong, invalidUTF8, broken
    }

    private let bytes: [UInt8]
    private var start = 0
    private(set) var lineNumber = 0
    let isTerminal: Bool
    let brokenAtLine: Int?

    init(bytes: [UInt8], isTerminal: Bool = false, brokenAtLine: Int? = nil) {
        self.bytes = bytes
        self.isTerminal = isTerminal
        self.brokenAtLine = brokenAtLine
    }

    convenience init(_ text: String, isTerminal: Bool = false, brokenAtLine: Int? = nil) {
        self.init(bytes: Array(text.utf8), isTerminal: isTerminal, brokenAtLine: brokenAtLine)
    }

    func readLine(maxLength: Int) throws(ReadError) -> String? {
        guard start < bytes.count else { return nil }
        let end = bytes[start...].firstIndex(of: 10) ?? bytes.count
        var line = bytes[start..<end]
        start = min(end + 1, bytes.count)
        lineNumber += 1
        if lineNumber == brokenAtLine { throw .broken }
        if line.last == 13 { line = line.dropLast() }
        if line.count > maxLength { throw .tooLong }
        guard let text = String(validating: line, as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }

    func peek(_ count: Int) throws(ReadError) -> [UInt8] { Array(bytes[start..<min(bytes.count, start + count)]) }

    func readAll(maxBytes: Int) throws(ReadError) -> [UInt8] {
        guard bytes.count - start <= maxBytes else { throw .broken }
        defer { start = bytes.count }
        return Array(bytes[start...])
    }

    func readAllText(maxBytes: Int) throws(ReadError) -> String {
        guard let text = String(validating: try readAll(maxBytes: maxBytes), as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }

    func unreadableLine(_ error: ReadError) -> UnreadableLine? {
        switch error {
        case .tooLong: .tooLong
        case .invalidUTF8: .invalidUTF8
        case .broken: nil
        }
    }
}

/// ``ItemReader`` over memory: what each input shape becomes, item by item, with its line.
@Suite("Input item framing")
struct ItemFramingTests {
    /// A JWS-shaped text (three base64url segments); framing never verifies it.
    static let jws = "eyJhbGciOiJFUzI1NiJ9.eyJub3RpZmljYXRpb25UeXBlIjoiVEVTVCJ9.c2lnbmF0dXJlLWJ5dGVz"
    /// A DER header announcing 260 bytes, and those bytes: what a binary receipt file starts like.
    static let der: [UInt8] = [0x30, 0x82, 0x01, 0x00] + [UInt8](repeating: 0x04, count: 256)

    static func all(_ source: MemorySource, receipts: Bool = false) throws -> (items: [WebhookBody.Item], isEmpty: Bool) {
        var reader = ItemReader(source, acceptsReceipts: receipts)
        var items: [WebhookBody.Item] = []
        while let item = try reader.next() { items.append(item) }
        return (items, reader.isEmpty)
    }

    static func items(_ text: String, receipts: Bool = false, terminal: Bool = false) throws -> [WebhookBody.Item] {
        try all(MemorySource(text, isTerminal: terminal), receipts: receipts).items
    }

    static func ok(_ line: Int, _ jws: String) -> WebhookBody.Item { WebhookBody.Item(line: line, result: .success(jws)) }

    static func failure(_ item: WebhookBody.Item?) -> VerificationFailure? {
        guard case .failure(let failure)? = item?.result else { return nil }
        return failure
    }

    @Test func rawJWSWebhookBodiesAndAPIResponsesOnePerLine() throws {
        let text =
            "\u{FEFF}a.b.c\n\n  {\"signedPayload\":\"d.e.f\"}  \r\n{\"signedTransactions\":[\"g.g.g\",\"h.h.h\"]}\n"
            + "\"i.i.i\"\n"
        #expect(
            try Self.items(text) == [
                Self.ok(1, "a.b.c"), Self.ok(3, "d.e.f"), Self.ok(4, "g.g.g"), Self.ok(4, "h.h.h"), Self.ok(5, "i.i.i"),
            ])
    }

    @Test func blankInputIsEmpty() throws {
        let (items, isEmpty) = try Self.all(MemorySource("\n  \n\t\r\n"))
        #expect(items.isEmpty)
        #expect(isEmpty)
        #expect(try !Self.all(MemorySource("\nx.y.z")).isEmpty)
    }

    @Test func aSavedHistoryResponseIsOneDocumentNumberedByItsFirstLine() throws {
        let history = """
            {
              "notificationHistory": [
                {"signedPayload": "eyJx.y.z"},
                {"signedPayload": "eyJq.r.s"}
              ],
              "hasMore": false
            }

            """
        let items = try Self.items("\(Self.jws)\n\n" + history)
        #expect(items == [Self.ok(1, Self.jws), Self.ok(3, "eyJx.y.z"), Self.ok(3, "eyJq.r.s")])
    }

    @Test func aMalformedJSONLineIsRefusedAloneAndReadingGoesOn() throws {
        let items = try Self.items("{bad json}\n\(Self.jws)\n{\"other\": 1}\n")
        #expect(items.count == 3)
        #expect(Self.failure(items[0])?.code == .invalidJSON)
        #expect(items[1] == Self.ok(2, Self.jws))
        #expect(Self.failure(items[2])?.code == .invalidPayload)
        #expect(items[2].line == 3)
    }

    @Test func aJWSWrappedOverLinesIsReportedOnceAndTheNextLineIsItsOwnItem() throws {
        var wrapped: [String] = []
        var rest = Substring(Self.jws)
        while !rest.isEmpty {
            wrapped.append(String(rest.prefix(16)))
            rest = rest.dropFirst(16)
        }
        let text = "a.b.c\n" + wrapped.joined(separator: "\n") + "\n{\"signedPayload\":\"d.e.f\"}\n"
        let items = try Self.items(text)
        let last = 1 + wrapped.count
        #expect(items.count == 3)
        #expect(items[0] == Self.ok(1, "a.b.c"))
        #expect(items[1].line == 2)
        #expect(
            Self.failure(items[1])
                == VerificationFailure(
                    .invalidJWTFormat,
                    "lines 2–\(last) look like one JWS wrapped at 16 columns (copy-paste damage, not a forgery): "
                        + "join them into one line (e.g. tr -d '\\n' < FILE) and feed it again"))
        #expect(items[2] == Self.ok(last + 1, "d.e.f"))
    }

    @Test func aJWSCutShortSaysSoAndWhenATerminalCutIt() throws {
        let cut = String(Self.jws.prefix(30))
        let items = try Self.items(cut + "\n")
        #expect(items.count == 1)
        let message = try #require(Self.failure(items.first)).message
        #expect(message.hasPrefix("this looks cut short: 30 bytes and 2 of the 3 dot-separated segments of a JWS"))
        #expect(message.hasSuffix("; copy the whole text again, or save it to a file and give the file"))

        // Pasted at a terminal (read without its line limit): the copy was short, the limit is not named.
        let fromTerminal = try #require(Self.failure(try Self.items(cut, terminal: true).first)).message
        #expect(!fromTerminal.contains("4,095"))
        #expect(fromTerminal.contains("the copy itself was short"))

        let terminalSized = "eyJ" + String(repeating: "A", count: 4092)
        let atLimit = try #require(Self.failure(try Self.items(terminalSized).first))
        #expect(atLimit.code == .invalidJWTFormat)
        #expect(atLimit.message.contains("4095 bytes and 1 of the 3"))
        #expect(atLimit.message.contains("a terminal keeps at most 4,095 bytes"))
    }

    @Test func aDecodedPayloadIsNotTheSignedText() throws {
        let items = try Self.items("{\"notificationType\":\"DID_RENEW\",\"data\":{}}\n{\"transactionId\":\"1\"}\n")
        #expect(items.map(\.line) == [1, 2])
        let first = try #require(Self.failure(items.first))
        #expect(first.code == .invalidPayload)
        #expect(first.message.hasPrefix("this is a decoded payload (it has notificationType), not the signed text"))
        #expect(Self.failure(items.last)?.message.contains("(it has transactionId)") == true)
        // Signed text next to decoded fields is a body, not a decoded payload.
        #expect(try Self.items("{\"signedPayload\":\"x.y.z\",\"notificationType\":\"TEST\"}") == [Self.ok(1, "x.y.z")])
    }

    @Test func unreadableLinesAreItemsAndReadingGoesOn() throws {
        var bytes = Array("a.b.c\n".utf8) + [0xC3, 0x28, 0x0A]
        bytes += Array(String(repeating: "x", count: ItemFraming.maxLineBytes + 1).utf8) + [0x0A]
        bytes += Array("d.e.f\n".utf8)
        let (items, _) = try Self.all(MemorySource(bytes: bytes))
        #expect(
            items == [
                Self.ok(1, "a.b.c"),
                WebhookBody.Item(line: 2, result: .failure(VerificationFailure(.invalidJWTFormat, "line is not valid UTF-8: skipped"))),
                WebhookBody.Item(
                    line: 3,
                    result: .failure(VerificationFailure(.invalidJWTFormat, "line is longer than \(1 << 20) bytes: skipped"))),
                Self.ok(4, "d.e.f"),
            ])
    }

    @Test func aFailedReadIsTheSourcesOwnError() throws {
        var reader = ItemReader(MemorySource("a.b.c\nd.e.f\n", brokenAtLine: 2))
        #expect(try reader.next() == Self.ok(1, "a.b.c"))
        #expect(throws: MemorySource.ReadError.broken) { try reader.next() }
    }

    @Test func aBinaryReceiptIsOneItemOfItsBase64() throws {
        let (items, isEmpty) = try Self.all(MemorySource(bytes: Self.der), receipts: true)
        #expect(items == [Self.ok(1, Base64.encodeStandard(Self.der))])
        #expect(!isEmpty)
        // Without receipts the same bytes are lines like any other.
        #expect(try Self.all(MemorySource(bytes: Self.der)).items.allSatisfy { Self.failure($0) != nil })
    }

    @Test func aWrappedBase64ReceiptIsJoinedAndTheLineAfterItIsTheNextItem() throws {
        let base64 = Base64.encodeStandard(Self.der)
        var lines: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(76)))
            rest = rest.dropFirst(76)
        }
        #expect(lines.count > 2)
        let items = try Self.items(lines.joined(separator: "\n") + "\n\(Self.jws)\n", receipts: true)
        #expect(items == [Self.ok(1, base64), Self.ok(lines.count + 1, Self.jws)])
    }

    @Test func aReceiptDataBodyOnALineOrPrettyPrinted() throws {
        let base64 = Base64.encodeStandard(Self.der)
        let line = "{\"receipt-data\":\"\(base64)\",\"password\":\"shared\"}"
        #expect(try Self.items("a.b.c\n" + line, receipts: true) == [Self.ok(1, "a.b.c"), Self.ok(2, base64)])
        let pretty = "{\n  \"receipt-data\": \"\(base64)\",\n  \"exclude-old-transactions\": true\n}\n"
        #expect(try Self.items(pretty, receipts: true) == [Self.ok(1, base64)])

        let notReceipt = try Self.items("{\"receipt-data\":\"bm90IGEgcmVjZWlwdA==\"}", receipts: true)
        #expect(Self.failure(notReceipt.first) == VerificationFailure(.invalidPayload, "receipt-data is not a base64 app receipt"))
        let notString = try #require(Self.failure(try Self.items("{\"receipt-data\":5}", receipts: true).first))
        #expect(notString.code == .invalidPayload)
        #expect(notString.message.hasPrefix("receipt-data must be a string"))

        // Where receipts are not accepted, such a body is JSON of another shape.
        let refused = try #require(Self.failure(try Self.items(line).first))
        #expect(refused.code == .invalidPayload)
        #expect(refused.message.hasPrefix("JSON input has none of signedPayload"))
    }

    @Test func theLineLimitIsLargerWhereReceiptsAreAccepted() {
        #expect(ItemReader(MemorySource("")).maxLine == ItemFraming.maxLineBytes)
        #expect(ItemReader(MemorySource(""), acceptsReceipts: true).maxLine == ItemFraming.maxReceiptLineBytes)
        #expect(ItemFraming.maxReceiptLineBytes > ItemFraming.maxLineBytes)
    }

    @Test func unfinishedJSONIsTheStartOfADocumentNotAMalformedOne() {
        #expect(ItemFraming.isUnfinishedJSON(Array("{".utf8)))
        #expect(ItemFraming.isUnfinishedJSON(Array("{\"signedPayload\": ".utf8)))
        #expect(ItemFraming.isUnfinishedJSON(Array("{\"signedTransactions\": [\"a.b.c\",".utf8)))
        #expect(!ItemFraming.isUnfinishedJSON(Array("{\"a\": 1}".utf8)))
        #expect(!ItemFraming.isUnfinishedJSON(Array("{bad".utf8)))
        #expect(!ItemFraming.isUnfinishedJSON(Array("{\"a\": 1}}".utf8)))
    }

    @Test func pasteDamageTellsFragmentsFromWholeJWS() {
        #expect(!PasteDamage.isJWSFragment(Self.jws))
        #expect(PasteDamage.isJWSFragment(String(Self.jws.prefix(25))))
        #expect(!PasteDamage.isJWSFragment("a.b"), "not the start of a JWS")
        #expect(!PasteDamage.isJWSFragment("eyJ has spaces"))
        #expect(PasteDamage.isContinuation("abc-_.DEF="))
        #expect(!PasteDamage.isContinuation("eyJabc"), "the start of another JWS")
        #expect(!PasteDamage.isContinuation(""))
        #expect(!PasteDamage.isContinuation("{\"a\":1}"))
    }
}
