import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The shared session and transaction runner, over a recording connection: what each dialect's data
/// makes them send, without a database.
@Suite("StoreSQL: the shared transaction runner")
struct TransactionRunnerTests {
    /// Records every statement; answers the schema probe; can fail COMMIT or abort the transaction.
    final class Recorder: SQLConnection {
        var sent: [String] = []
        var bound: [[SQLValue]] = []
        var commitError: StoreError?
        var transactionAborted: StoreError?

        func execute(_ sql: String) throws(StoreError) {
            sent.append(sql)
            if sql == "COMMIT", let commitError { throw commitError }
        }

        func query(_ sql: String, _ values: [SQLValue], shaped: Bool) throws(StoreError) -> SQLResult {
            sent.append(sql)
            bound.append(values)
            if sql == StoreSQL.maxMigration || sql.contains("count(*)") {
                return SQLResult(columns: ["n"], rows: [SQLRow(values: [.int(Int64(StoreSchema.supported))], source: sql)])
            }
            return SQLResult(columns: StoreTables.orders.columnNames, rows: [])
        }

        func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64) {
            sent.append(sql)
            bound.append(values)
            return (1, 42)
        }

        var inTransaction: Bool { true }
        func transactionWillBegin() { transactionAborted = nil }
    }

    private static func dialect(sqliteLike: Bool) -> SQLDialect {
        SQLDialect(
            beginRead: [sqliteLike ? "BEGIN DEFERRED" : "START TRANSACTION READ ONLY"],
            beginWrite: [sqliteLike ? "BEGIN IMMEDIATE" : "START TRANSACTION READ WRITE"],
            forUpdate: sqliteLike ? "" : " FOR UPDATE", locksRows: !sqliteLike, noLimit: sqliteLike ? -1 : 99,
            savepoint: "SAVEPOINT {name}", releaseSavepoint: sqliteLike ? "RELEASE {name}" : "RELEASE SAVEPOINT {name}",
            rollbackToSavepoint: sqliteLike ? "ROLLBACK TO {name}" : "ROLLBACK TO SAVEPOINT {name}",
            releaseAfterRollbackTo: sqliteLike, insertIgnore: "", onDuplicateDoNothing: "", schemaProbeBegin: nil,
            tableExists: "SELECT count(*) FROM tables WHERE name = ?", commitOutcomeCanBeUnknown: !sqliteLike,
            typeNames: [:])
    }

    private func runner(_ connection: Recorder, sqliteLike: Bool) -> SQLTransactions {
        SQLTransactions(
            connection: connection, dialect: Self.dialect(sqliteLike: sqliteLike), supported: StoreSchema.supported,
            label: "db", dbArgument: "db")
    }

    /// The transaction-control statements sent (schema probes and row statements left out).
    private func control(_ connection: Recorder) -> [String] {
        connection.sent.filter { !$0.hasPrefix("SELECT") && !$0.hasPrefix("INSERT") && !$0.hasPrefix("UPDATE") }
    }

    @Test(arguments: [true, false])
    func aNestedWriteThatDoesNotCommitRollsBackToItsSavepoint(sqliteLike: Bool) throws {
        let connection = Recorder()
        let transactions = runner(connection, sqliteLike: sqliteLike)
        try transactions.write(commit: true) { _ in try transactions.write(commit: false) { _ in } }
        #expect(
            control(connection)
                == (sqliteLike
                    ? ["BEGIN IMMEDIATE", "SAVEPOINT iapctl_sp1", "ROLLBACK TO iapctl_sp1", "RELEASE iapctl_sp1", "COMMIT"]
                    : [
                        "START TRANSACTION READ WRITE", "SAVEPOINT iapctl_sp1", "ROLLBACK TO SAVEPOINT iapctl_sp1",
                        "COMMIT",
                    ]))
    }

    @Test(arguments: [true, false])
    func lockingReadsOnlyInWriteTransactionsAndTheDialectsNoLimit(sqliteLike: Bool) throws {
        let connection = Recorder()
        let transactions = runner(connection, sqliteLike: sqliteLike)
        _ = try transactions.write(commit: true) { try $0.order(no: "n") }
        _ = try transactions.read { try $0.order(no: "n") }
        _ = try transactions.read { try $0.orders(matching: OrderFilter()) }
        let lookups = connection.sent.filter { $0.hasPrefix("SELECT id, no,") && $0.contains("WHERE no = ?") }
        #expect(lookups == [StoreSQL.orderByNo + (sqliteLike ? "" : " FOR UPDATE"), StoreSQL.orderByNo])
        #expect(connection.bound.last == [.int(sqliteLike ? -1 : 99)])
    }

    @Test(arguments: [true, false])
    func aLostCommitSaysItsOutcomeIsUnknownWhereTheDialectSaysSo(sqliteLike: Bool) throws {
        let connection = Recorder()
        connection.commitError = .unavailable("connection lost")
        let error = #expect(throws: StoreError.self) {
            try runner(connection, sqliteLike: sqliteLike).write(commit: true) { _ in }
        }
        let expected =
            sqliteLike ? "connection lost" : "connection lost (COMMIT: whether the transaction was committed is unknown)"
        #expect(error == .unavailable(expected))
        #expect(connection.sent.last == "ROLLBACK")
    }

    @Test func aServerSideAbortTheBodySwallowedFailsTheTransaction() throws {
        let connection = Recorder()
        let aborted = StoreError.busy("deadlock; the transaction was rolled back: retry", .deadlock)
        var refused: StoreError?
        #expect(throws: aborted) {
            try runner(connection, sqliteLike: false).write(commit: true) { session in
                connection.transactionAborted = aborted
                // The session refuses to go on inside the aborted transaction (the body swallows it).
                do { _ = try session.order(no: "n") } catch { refused = error as? StoreError }
            }
        }
        #expect(refused == aborted)
        #expect(!connection.sent.contains("COMMIT"))
        #expect(connection.sent.last == "ROLLBACK")
    }

    @Test func writesInsideAReadTransactionAreRefused() throws {
        let connection = Recorder()
        #expect(throws: StoreError.self) {
            try runner(connection, sqliteLike: true).read { session in
                _ = try session.insertOrder(Order(no: "n", userId: "u", productId: "p"))
            }
        }
        #expect(!connection.sent.contains { $0.hasPrefix("INSERT") })
    }
}
