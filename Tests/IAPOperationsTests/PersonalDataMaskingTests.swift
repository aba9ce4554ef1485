import AppleFlows
import ClientSubmissions
import IAPFoundation
import IAPOperations
import ItemInput
import PersonalData
import SubscriptionEngine
import SubscriptionModel
import Testing

/// `--redact`'s rules, in-process: what is personal data, how it is aliased, what is kept.
@Suite("Personal data masking")
struct PersonalDataMaskingTests {
    typealias Kind = PersonalDataMasker.Kind

    static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { text } else { nil }
    }

    static func member(_ document: JSONValue, _ key: String) -> JSONValue? {
        if case .object(let members) = document { members.first { $0.key == key }?.value } else { nil }
    }

    static func items(_ value: JSONValue?) -> [JSONValue] {
        if case .array(let items)? = value { items } else { [] }
    }

    /// Whether `alias` is `<kind>-<number>`.
    static func isAlias(_ alias: String?, _ kind: Kind) -> Bool {
        guard let alias, alias.hasPrefix(kind.rawValue + "-") else { return false }
        let number = alias.dropFirst(kind.rawValue.count + 1)
        return !number.isEmpty && number.allSatisfy { $0.isNumber }
    }

    // MARK: kinds

    @Test func everyKindOfIdFieldIsAliasedByItsKind() {
        let masker = PersonalDataMasker()
        let values: [(key: String, value: JSONValue, kind: Kind)] = [
            ("user_id", .string("carol"), .user), ("owner", .string("erin"), .user),
            ("no", .string("0badcafe-0000-4000-8000-000000000001"), .order),
            ("appAccountToken", .string("0badcafe-0000-4000-8000-000000000002"), .order),
            ("trade_no", .string("2000000123456789"), .txn), ("contract_id", .string("orig-77"), .txn),
            ("originalTransactionId", .string("1000000999"), .txn),
            ("notification_uuid", .string("3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"), .uuid),
            ("actor", .string("quinn"), .actor),
        ]
        let masked = masker.fields(values.map { ($0.key, $0.value) })
        #expect(masked.map(\.key) == values.map(\.key))
        for (field, expected) in zip(masked, values) {
            #expect(Self.isAlias(Self.string(field.value), expected.kind), "\(field.key): \(field.value)")
        }
        // Distinct values, distinct aliases; each kind numbered from 1.
        #expect(Set(masked.compactMap { Self.string($0.value) }).count == values.count)
        #expect(Self.string(masked[0].value) == "user-1")
        #expect(Self.string(masked[1].value) == "user-2")
    }

    @Test func emailsAndPhonesInFreeTextAreAliased() {
        let masker = PersonalDataMasker()
        let masked = masker.text("mail from bob.smith+iap@example.com, called back on +44 20 7946 0958")
        #expect(masked == "mail from email-1, called back on phone-1")
    }

    @Test func numericIdsAreAliasedOnlyUnderTransactionAndUserFields() {
        let masker = PersonalDataMasker()
        let masked = masker.fields([
            ("transaction_id", .int(2_000_000_123_456_789)), ("user_id", .int(42)), ("count", .int(3)),
            ("no", .int(7)),
        ])
        #expect(Self.isAlias(Self.string(masked[0].value), .txn))
        #expect(Self.isAlias(Self.string(masked[1].value), .user))
        #expect(masked[2].value == .int(3))
        #expect(masked[3].value == .int(7))
    }

    // MARK: stable aliases

    @Test func theSameValueGetsTheSameAliasInJSONRecordsAndText() throws {
        let masker = PersonalDataMasker()
        let document = try masker.json(
            Self.parse(#"{"user_id": "carol", "transaction_id": "2000000123456789", "note": "ok"}"#))
        let user = try #require(Self.string(Self.member(document, "user_id")))
        let txn = try #require(Self.string(Self.member(document, "transaction_id")))
        #expect(Self.isAlias(user, .user))
        #expect(Self.isAlias(txn, .txn))
        // Free text after the document: a word known as an id gets that id's alias.
        #expect(masker.text("carol asked about 2000000123456789.") == "\(user) asked about \(txn).")
        // A record later in the run: the same aliases.
        let record = masker.fields([("from_user", .string("carol")), ("origin_no", .string("2000000123456789"))])
        #expect(record.map { Self.string($0.value) } == [user, txn])
        // And the other way round: text first, then a field.
        let email = masker.text("write to dana@example.org")
        #expect(email == "write to email-1")
        #expect(masker.json(.object([("reason", .string("dana@example.org"))])) == .object([("reason", .string("email-1"))]))
    }

    @Test func freeTextThatNamesAnIdBeforeItsFieldIsMaskedToo() throws {
        // The first pass learns every id member, so a reason above the id is masked.
        let masker = PersonalDataMasker()
        let document = try masker.json(Self.parse(#"{"reason": "moved from zed to yan", "user_id": "zed"}"#))
        #expect(Self.string(Self.member(document, "reason")) == "moved from user-1 to yan")
        #expect(Self.string(Self.member(document, "user_id")) == "user-1")
    }

    @Test func aMaskerNumbersAfreshAndAliasesSayNothingOfTheValue() {
        let first = PersonalDataMasker()
        let second = PersonalDataMasker()
        #expect(first.alias("a-very-long-user-identifier", .user) == "user-1")
        #expect(first.alias("b", .user) == "user-2")
        #expect(second.alias("b", .user) == "user-1")
        #expect(first.alias("a-very-long-user-identifier", .user) == "user-1")
    }

    // MARK: kept

    @Test(arguments: [
        "expires 2025-09-05", "at 2025-09-05 01:02:03", "at 2025-09-05T01:02:03.000Z", "at 1750000000000 ms",
        "product com.example.app.monthly", "status refunded, 3 items, 12 renewals", "version 1.2.3",
        "order 12345678", "call 555-1234", "ticket T-77",
    ])
    func datesTimesProductsAndCountsAreKept(_ text: String) {
        #expect(PersonalDataMasker().text(text) == text)
    }

    @Test func dateProductAndStatusFieldsAreKept() {
        let masker = PersonalDataMasker()
        let fields: [(key: String, value: JSONValue)] = [
            ("expires_date", .int(1_750_000_000_000)), ("created_at", .string("2025-09-05T01:02:03.000Z")),
            ("product_id", .string("com.example.app.monthly")), ("status", .string("refunded")),
            ("amount", .double(10.99)), ("auto_renew", .bool(true)), ("currency", .null),
        ]
        #expect(masker.fields(fields).map(\.value) == fields.map(\.value))
    }

    // MARK: shapes

    @Test(arguments: [
        "+44 20 7946 0958", "+14155552671", "(555) 123-4567", "555-123-4567", "555.123.4567", "+33 1 42 68 53 00",
    ])
    func phoneNumberForms(_ phone: String) {
        let masker = PersonalDataMasker()
        #expect(masker.text("call \(phone) today") == "call phone-1 today")
        // The same form again: the same alias.
        #expect(masker.text("see [\(phone)].") == "see [phone-1].")
    }

    @Test(arguments: ["12345678", "2025-09-05", "1750000000000", "1-2-3", "+12 34"])
    func numbersThatAreNotPhonesAreKept(_ text: String) {
        #expect(PersonalDataMasker().text("n \(text) n") == "n \(text) n")
    }

    @Test func emails() {
        #expect(PersonalDataMasker.isEmail("bob.smith+iap@example.com"))
        #expect(PersonalDataMasker.isEmail("a@b.io"))
        for notEmail in ["@handle", "a@b", "user@host.c", "user@.com", "plain"] {
            #expect(!PersonalDataMasker.isEmail(notEmail), "\(notEmail)")
        }
        let masker = PersonalDataMasker()
        #expect(masker.text("Mail a@b.io. Then c@d.io; a@b.io!") == "Mail email-1. Then email-2; email-1!")
        #expect(masker.text("ping @handle") == "ping @handle")
    }

    @Test func uuids() {
        let masker = PersonalDataMasker()
        let text =
            "uuid 3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b and 12345678-1234-1234-1234-123456789012 and 3F1E2D4C-5B6A-4978-8A9B-0C1D2E3F4A5B"
        #expect(masker.text(text) == "uuid uuid-1 and uuid-2 and uuid-3")
        #expect(masker.text("part 3f1e2d4c-5b6a only") == "part 3f1e2d4c-5b6a only")
        #expect(PersonalDataMasker.isUUID("3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"))
        #expect(!PersonalDataMasker.isUUID("3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5g"))
    }

    @Test func valuesNamedByAnIdKeyInFreeText() {
        let masker = PersonalDataMasker()
        #expect(masker.text("user_id: carol → dave") == "user_id: user-1 → user-2")
        #expect(masker.text(#""order_no": "A1B2""#) == #""order_no": "order-1""#)
        // A key without `:` or `=` names nothing; structure words are never values.
        #expect(masker.text("user_id bob") == "user_id bob")
        #expect(masker.text("user_id: null") == "user_id: null")
    }

    // MARK: nested JSON

    @Test func nestedDocumentsAreMaskedByMemberChangeFieldAndEntity() throws {
        let masker = PersonalDataMasker()
        let document = try Self.parse(
            """
            {"entity": "order", "key": "0badcafe-0000-4000-8000-000000000009", "count": 2,
             "events": [{"transactionId": 2000000555555555, "userId": "carol", "note": "see carol@x.io", "ok": true},
                        {"transactionId": "2000000555555555", "signed_at": 1750000000000}],
             "changes": [{"field": "user_id", "before": "carol", "after": "dave"},
                         {"field": "status", "before": "pending", "after": "paid"}],
             "audit": {"entity": "contract", "key": "orig-1", "actor": "quinn"}}
            """)
        let masked = masker.json(document)
        #expect(Self.string(Self.member(masked, "key")) == "order-1")
        #expect(Self.member(masked, "count") == .int(2))
        let events = Self.items(Self.member(masked, "events"))
        #expect(events.count == 2)
        let txn = Self.string(Self.member(events[0], "transactionId"))
        #expect(Self.isAlias(txn, .txn))
        #expect(Self.string(Self.member(events[1], "transactionId")) == txn)
        #expect(Self.member(events[1], "signed_at") == .int(1_750_000_000_000))
        #expect(Self.string(Self.member(events[0], "userId")) == "user-1")
        #expect(Self.string(Self.member(events[0], "note")) == "see email-1")
        #expect(Self.member(events[0], "ok") == .bool(true))
        let changes = Self.items(Self.member(masked, "changes"))
        #expect(changes.map { Self.string(Self.member($0, "field")) } == ["user_id", "status"])
        #expect(changes.map { Self.string(Self.member($0, "before")) } == ["user-1", "pending"])
        #expect(changes.map { Self.string(Self.member($0, "after")) } == ["user-2", "paid"])
        let audit = try #require(Self.member(masked, "audit"))
        #expect(Self.isAlias(Self.string(Self.member(audit, "key")), .txn))
        #expect(Self.isAlias(Self.string(Self.member(audit, "actor")), .actor))
        // Nothing of the original ids is left.
        let text = masked.serialized()
        for secret in ["carol", "dave", "quinn", "orig-1", "2000000555555555", "0badcafe", "x.io"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
    }

    // MARK: idempotence

    @Test func maskingMaskedTextLeavesIt() throws {
        let masker = PersonalDataMasker()
        let once = masker.text(
            "user_id: carol → dave; mail bob@example.com, +44 20 7946 0958, 2000000123456789, "
                + "3f1e2d4c-5b6a-4978-8a9b-0c1d2e3f4a5b on 2025-09-05")
        #expect(once == "user_id: user-1 → user-2; mail email-1, phone-1, txn-1, uuid-1 on 2025-09-05")
        #expect(masker.text(once) == once)
        // A masker that has never seen the values keeps the aliases too.
        #expect(PersonalDataMasker().text(once) == once)
        let document = masker.json(.object([("reason", .string(once))]))
        #expect(document == .object([("reason", .string(once))]))
    }

    @Test func aliasesLookLikeAliasesAndNothingElseDoes() {
        for kind in Kind.allCases {
            #expect(PersonalDataMasker.isAlias("\(kind.rawValue)-12"))
        }
        for word in ["user-", "user-x", "users-1", "txn1", "T-77", "order-1a"] {
            #expect(!PersonalDataMasker.isAlias(word), "\(word)")
        }
    }

    // MARK: the database

    @Test(arguments: Backend.available)
    func wordsTheDatabaseKnowsAreAliasedByWhatTheyAre(_ backend: Backend) throws {
        let (store, cleanup) = try backend.makeStore(label: "ops")
        defer { cleanup() }
        let token = "0badcafe-0000-4000-8000-000000000042"
        try store.write { session in
            _ = try session.insertOrder(
                Order(no: token, userId: "alice", productId: "com.example.app.monthly", tradeNo: "tx-alice-1"))
        }
        var opened = 0
        let masker = PersonalDataMasker(store: {
            opened += 1
            return store
        })
        #expect(masker.text("alice paid tx-alice-1 for \(token); bob did not") == "user-1 paid txn-1 for order-1; bob did not")
        // Short words are never looked up; the store is opened once.
        #expect(masker.text("al ok 42") == "al ok 42")
        #expect(opened == 1)
        // Without a store, only shapes count: the order number is a UUID.
        #expect(PersonalDataMasker().text("alice \(token)") == "alice uuid-1")
    }
}
