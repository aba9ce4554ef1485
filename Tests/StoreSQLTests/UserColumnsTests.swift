import StoreSQL
import SubscriptionModel
import Testing

/// The schema's one declaration of where a user's id is kept (``SchemaColumn/holdsUserId``) and
/// which free texts may name a user (``SchemaColumn/namesUsers``): what `users forget` rewrites.
@Suite("StoreSQL: the columns that hold or name a user")
struct UserColumnsTests {
    @Test func everyUserIdColumnIsMarked() {
        let marked = StoreSchema.userIdColumns.map { "\($0.table).\($0.column)" }
        #expect(marked == ["orders.user_id", "member_contracts.user_id", "iap_grants.user_id", "iap_customer_notes.user_id"])
        // A table added later with a user_id column must mark it, or `users forget` would miss it.
        for table in StoreSchema.currentTables {
            for column in table.columns where column.name == "user_id" || column.name.hasSuffix("_user_id") {
                #expect(column.holdsUserId, "\(table.name).\(column.name) holds a user id but is not marked")
            }
        }
    }

    @Test func theFreeTextsOfTheAuditLedgerOverridesAndGrantsAreMarked() {
        let marked = Set(StoreSchema.userTextColumns.map { "\($0.table).\($0.column)" })
        for column in [
            "iap_audit.reason", "iap_audit.before_json", "iap_audit.after_json", "iap_audit.command", "iap_ledger.detail",
            "iap_overrides.reason", "iap_overrides.lifted_by", "iap_grants.reason", "iap_grants.revoked_by",
            "iap_customer_notes.text", "iap_customer_notes.ticket",
        ] {
            #expect(marked.contains(column), "\(column)")
        }
        // Apple's signed records are kept as signed.
        #expect(!marked.contains { $0.hasPrefix("iap_facts.") })
        #expect(!marked.contains("iap_ledger.raw_zstd"))
    }

    @Test func likePatternsEscapeTheirWildcards() {
        #expect(StoreSQL.likeEscaped("a_b%c!d") == "a!_b!%c!!d")
        #expect(StoreSQL.likeEscaped("u42") == "u42")
    }

    @Test func theAliasIsStablePerSaltAndHidesTheId() {
        let salt = [UInt8](repeating: 7, count: 32)
        let alias = UserAlias.alias("u42", salt: salt)
        #expect(alias == UserAlias.alias("u42", salt: salt))
        #expect(alias.hasPrefix("forgotten-") && alias.count == 26)
        #expect(alias != UserAlias.alias("u43", salt: salt))
        #expect(alias != UserAlias.alias("u42", salt: [UInt8](repeating: 8, count: 32)))
        #expect(!alias.contains("u42"))
        #expect(UserAlias.saltedHash("u42", salt: salt).hasPrefix(String(alias.dropFirst("forgotten-".count))))
    }
}
