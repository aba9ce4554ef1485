import Testing

@testable import SubscriptionEngine
@testable import SubscriptionModel

/// The engine's one-line account of what an event changed (an outcome's detail, kept in the
/// ledger): dates as ISO-8601 and `auto_renew` as true/false, as every output shows them.
@Suite("Change summaries")
struct ChangeSummaryTests {
    @Test func autoRenewAndDatesAreWrittenAsPeopleReadThem() {
        let created = Change(
            entity: .contract, key: "1000", action: .insert,
            fields: [
                FieldChange(column: "status", before: nil, after: "active"),
                FieldChange(column: "auto_renew", before: nil, after: "1"),
                FieldChange(column: "expires_date", before: nil, after: "1738281600000"),
            ])
        #expect(
            created.summary
                == "contract 1000 created: status ∅ → active, auto_renew ∅ → true, expires_date ∅ → 2025-01-31T00:00:00Z")
        let turnedOff = Change(
            entity: .contract, key: "1000", action: .update,
            fields: [FieldChange(column: "auto_renew", before: "1", after: "0")])
        #expect(turnedOff.summary == "contract 1000 updated: auto_renew true → false")
        // Only auto_renew's 1/0 are flags; other columns keep their values.
        let price = Change(
            entity: .order, key: "o", action: .update, fields: [FieldChange(column: "price", before: "1", after: "0")])
        #expect(price.summary == "order o updated: price 1 → 0")
    }
}
