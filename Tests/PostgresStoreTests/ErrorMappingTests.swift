import StoreSQL
import SubscriptionModel
import Testing

@testable import PostgresStore

/// SQLSTATE codes to the store's typed errors: what the retry policy and the exit codes rest on.
struct ErrorMappingTests {
    static func busyReason(_ error: StoreError) -> BusyReason? {
        if case .busy(_, let reason) = error { return reason }
        return nil
    }

    @Test func deadlocksAndSerializationFailuresRetryTheWholeUnit() {
        for state in ["40P01", "40001"] {
            let error = PostgresErrorMapping.storeError(state: state, message: "m", context: "db")
            #expect(Self.busyReason(error) == .deadlock, "\(state): \(error)")
            #expect(PostgresErrorMapping.rollsBackUnit(state))
        }
    }

    @Test func aLockTimeoutIsBusy() {
        let error = PostgresErrorMapping.storeError(state: "55P03", message: "canceling statement due to lock timeout", context: "db")
        #expect(Self.busyReason(error) == .lockWaitTimeout)
    }

    @Test func aShutdownAReadOnlyServerAndALostConnectionAreRetryableAndSaySo() {
        let shutdown = PostgresErrorMapping.storeError(state: "57P01", message: "terminating connection", context: "db")
        #expect(Self.busyReason(shutdown) == .transactionLost)
        #expect(shutdown.description.contains("failover"))
        let readOnly = PostgresErrorMapping.storeError(state: "25006", message: "read-only transaction", context: "db")
        #expect(Self.busyReason(readOnly) == .transactionLost)
        #expect(readOnly.description.contains("target_session_attrs=read-write"))
        let lost = PostgresErrorMapping.storeError(state: nil, message: "server closed the connection", context: "db")
        #expect(Self.busyReason(lost) == .transactionLost)
        #expect(lost.description.contains("connection to the server was lost"))
        for state in ["57P01", "25006", "08006", nil] { #expect(PostgresErrorMapping.rollsBackUnit(state)) }
    }

    @Test func theOtherClassesMapAsOnTheOtherBackends() {
        #expect(PostgresErrorMapping.storeError(state: "23505", message: "dup", context: "db") == .conflict("db: dup (SQLSTATE 23505)"))
        guard case .notFound = PostgresErrorMapping.storeError(state: "3D000", message: "m", context: "db") else {
            Issue.record("3D000 is not notFound")
            return
        }
        guard case .schemaMismatch = PostgresErrorMapping.storeError(state: "42P01", message: "m", context: "db") else {
            Issue.record("42P01 is not schemaMismatch")
            return
        }
        guard case .ioFailure = PostgresErrorMapping.storeError(state: "53100", message: "m", context: "db") else {
            Issue.record("53100 is not ioFailure")
            return
        }
        #expect(!PostgresErrorMapping.rollsBackUnit("23505"))
    }

    /// A prepared statement the server connection does not hold, or holds already, means a pooler
    /// handed the transaction another connection: exit 78 naming the pooler and the fix, no retry
    /// (the next transaction may land on such a connection again).
    @Test func aLostOrForeignPreparedStatementNamesThePooler() {
        for state in ["26000", "42P05"] {
            let error = PostgresErrorMapping.storeError(
                state: state, message: "prepared statement \"iapctl_0f\" does not exist", context: "db")
            guard case .misconfigured(let message) = error else {
                Issue.record("\(state) is not misconfigured: \(error)")
                continue
            }
            #expect(message.contains("PgBouncer") && message.contains("max_prepared_statements"), "\(message)")
            #expect(message.contains("session mode") && message.contains("SQLSTATE \(state)"), "\(message)")
            #expect(!PostgresErrorMapping.rollsBackUnit(state))
        }
    }

    /// A statement's name is its text and types: the same in every process, whatever order each
    /// first used its statements in, and different for a different text or type.
    @Test func aStatementsNameComesFromItsTextAndTypes() {
        let select = "SELECT no FROM orders WHERE no = $1\u{0}25"
        let name = Connection.statementName(select)
        #expect(name == Connection.statementName(select))
        #expect(name.hasPrefix("iapctl_") && name.count == 39 && name.count <= 63, "\(name)")
        #expect(name.dropFirst(7).allSatisfy { $0.isHexDigit })
        #expect(name != Connection.statementName("SELECT no FROM orders WHERE no = $1\u{0}20"))
        #expect(name != Connection.statementName("SELECT trade_no FROM orders WHERE no = $1\u{0}25"))
    }

    @Test func anAuthenticationFailureDoesNotEchoTheServersText() {
        let error = PostgresErrorMapping.storeError(
            state: "28P01", message: "password authentication failed for user \"x\" secret-ish", context: "db")
        guard case .accessDenied(let message) = error else {
            Issue.record("28P01 is not accessDenied: \(error)")
            return
        }
        #expect(!message.contains("secret-ish"))
    }

    /// libpq's messages span lines (a failure, a tab-indented question; one failure per host):
    /// iapctl shows them on one line, nothing escaped and nothing said twice.
    @Test func libpqsLinesBecomeOneLine() {
        let raw =
            "connection to server on socket \"/a/.s.PGSQL.5432\" failed: No such file or directory\n"
            + "\tIs the server running locally and accepting connections on that socket?\n"
            + "connection to server on socket \"/b/.s.PGSQL.5432\" failed: Connection refused\n"
        let error = Connection.connectError(raw, context: "cannot connect to db", connectTimeout: 3)
        guard case .unavailable(let message) = error else {
            Issue.record("not unavailable: \(error)")
            return
        }
        #expect(
            message
                == "cannot connect to db: connection to server on socket \"/a/.s.PGSQL.5432\" failed: No such file or "
                + "directory; Is the server running locally and accepting connections on that socket?; connection to "
                + "server on socket \"/b/.s.PGSQL.5432\" failed: Connection refused")
    }

    /// No password given and a wrong one are told apart, and both say where a password goes.
    @Test func aMissingPasswordIsToldFromAWrongOne() {
        let missing = Connection.connectError(
            "connection to server failed: fe_sendauth: no password supplied\n", context: "db", connectTimeout: 3)
        let wrong = Connection.connectError(
            "connection to server failed: FATAL:  password authentication failed for user \"iapctl\"\n", context: "db",
            connectTimeout: 3)
        guard case .accessDenied(let none) = missing, case .accessDenied(let refused) = wrong else {
            Issue.record("not accessDenied: \(missing), \(wrong)")
            return
        }
        #expect(none.contains("none was given") && !refused.contains("none was given"), "\(none) / \(refused)")
        for message in [none, refused] {
            #expect(message.contains("IAPCTL_DB_PASSWORD") && message.contains("PGPASSWORD") && message.contains("~/.pgpass"))
        }
    }

    @Test func connectFailuresAreClassifiedByLibpqsMessage() {
        #expect(
            Self.busyReason(Connection.connectError("session is read-only", context: "db", connectTimeout: 3))
                == .clusterUnavailable(retryForSeconds: 3))
        guard case .unavailable = Connection.connectError("Connection refused", context: "db", connectTimeout: 3) else {
            Issue.record("a refused connection is not unavailable")
            return
        }
        guard case .notFound = Connection.connectError("database \"x\" does not exist", context: "db", connectTimeout: 3) else {
            Issue.record("a missing database is not notFound")
            return
        }
    }
}

/// The schema description rendered for PostgreSQL.
struct SchemaRenderingTests {
    @Test func everyMigrationRendersAndEveryDataStepHasAPostgresForm() {
        #expect(Schema.migrations.map(\.version) == StoreSchema.migrations.map(\.version))
        for migration in StoreSchema.migrations {
            for step in migration.steps {
                if case .update = step { #expect(Schema.updates[migration.version] != nil, "migration \(migration.version)") }
            }
        }
    }

    @Test func tablesGetTheirKeysChecksAndForeignKeys() {
        let statements = Schema.migrations.flatMap(\.statements).joined(separator: "\n")
        #expect(statements.contains("CONSTRAINT uq_orders_no UNIQUE (no)"))
        #expect(statements.contains("CONSTRAINT ck_orders_status CHECK (status IN ('pending','paid','refunded','revoked'))"))
        #expect(statements.contains("CONSTRAINT fk_iap_audit_ledger FOREIGN KEY (ledger_id) REFERENCES iap_ledger (id)"))
        #expect(statements.contains("CREATE INDEX idx_iap_audit_ledger_id ON iap_audit (ledger_id)"))
        #expect(statements.contains("id BIGINT GENERATED BY DEFAULT AS IDENTITY"))
        #expect(statements.contains("no VARCHAR(255) COLLATE \"C\" NOT NULL"))
        #expect(!statements.contains("MEDIUM") && !statements.contains("AUTO_INCREMENT"))
    }
}
