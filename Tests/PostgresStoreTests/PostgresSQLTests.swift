import Testing

@testable import PostgresStore

/// The shared statements' text as PostgreSQL gets it.
struct PostgresSQLTests {
    @Test func placeholdersAreNumberedOutsideLiterals() {
        #expect(
            PostgresSQL.numbered("SELECT a FROM t WHERE b = ? AND c = '?' AND d IN (?, ?) LIMIT ?")
                == "SELECT a FROM t WHERE b = $1 AND c = '?' AND d IN ($2, $3) LIMIT $4")
        #expect(
            PostgresSQL.numbered("SELECT \"?\" FROM t WHERE x = 'it''s ?' OR y = ?") == "SELECT \"?\" FROM t WHERE x = 'it''s ?' OR y = $1")
    }

    @Test func aNullTestGetsAType() {
        #expect(
            PostgresSQL.numbered("WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR at >= ?)")
                == "WHERE ($1::text IS NULL OR actor = $2) AND ($3::text IS NULL OR at >= $4)")
    }

    @Test func aSingleRowInsertSkipsADuplicateAndReturnsItsId() {
        let text = PostgresSQL.ServerText("INSERT INTO orders (no, user_id) VALUES (?, ?)")
        #expect(text.text == "INSERT INTO orders (no, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id")
        #expect(text.skipsDuplicate && text.returnsId)
    }

    @Test func anInsertThatReturnsSomethingElseKeepsItsReturning() {
        let text = PostgresSQL.ServerText(
            "INSERT INTO iap_notification_claims (notification_uuid) VALUES (?) RETURNING EXISTS (SELECT 1 FROM iap_ledger WHERE notification_uuid = ?)"
        )
        #expect(
            text.text
                == "INSERT INTO iap_notification_claims (notification_uuid) VALUES ($1) ON CONFLICT DO NOTHING RETURNING EXISTS (SELECT 1 FROM iap_ledger WHERE notification_uuid = $2)"
        )
        #expect(text.skipsDuplicate && !text.returnsId)
    }

    @Test func multiRowAndSelectInsertsAndTheVersionRowAreLeftAlone() {
        let multi = PostgresSQL.ServerText("INSERT INTO iap_audit (a, b) VALUES (?, ?), (?, ?)")
        #expect(multi.text == "INSERT INTO iap_audit (a, b) VALUES ($1, $2), ($3, $4)" && !multi.skipsDuplicate)
        let select = PostgresSQL.ServerText("INSERT INTO iap_facts (a) SELECT ? FROM (SELECT 1) AS one WHERE NOT EXISTS (SELECT 1)")
        #expect(!select.skipsDuplicate && !select.returnsId)
        let version = PostgresSQL.ServerText("INSERT INTO iap_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
        #expect(version.skipsDuplicate && !version.returnsId)
        #expect(version.text.hasSuffix("VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"))
    }
}
