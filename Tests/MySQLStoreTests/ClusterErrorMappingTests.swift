import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import MySQLStore

/// A database cluster's states are retryable busy failures (exit 75 when the retries are spent),
/// never internal errors (exit 70), and the unit they struck is rolled back whole.
@Suite("MySQL cluster error mapping")
struct ClusterErrorMappingTests {
    /// Galera: 1047 (WSREP has not yet prepared node for application use), 1180 (not in the
    /// primary component, at COMMIT): retried for the connection's I/O timeout.
    @Test(arguments: [UInt32(1047), 1180])
    func clusterStatesAreRetriedForTheTimeout(_ code: UInt32) {
        let error = MySQLErrorMapping.storeError(
            code: code, sqlState: "08S01", message: "WSREP has not yet prepared node for application use",
            context: "statement failed", clusterRetrySeconds: 42)
        guard case .busy(let message, let reason) = error else {
            Issue.record("MySQL error \(code) is not busy: \(error)")
            return
        }
        #expect(reason == .clusterUnavailable(retryForSeconds: 42))
        #expect(message.contains("MySQL error \(code)") && message.contains("retry"))
        #expect(MySQLErrorMapping.rollsBackTransaction(code))
    }

    /// An interrupted statement (1317: KILL QUERY, a cluster's brute-force abort) and a savepoint gone
    /// with its transaction (1305) mean the transaction is lost: the unit runs again whole.
    @Test(arguments: [UInt32(1317), 1305])
    func lostTransactionsAreRetried(_ code: UInt32) {
        let error = MySQLErrorMapping.storeError(code: code, sqlState: "", message: "m", context: "c")
        guard case .busy(_, let reason) = error else {
            Issue.record("MySQL error \(code) is not busy: \(error)")
            return
        }
        #expect(reason == .transactionLost)
        #expect(MySQLErrorMapping.rollsBackTransaction(code))
    }

    /// After these the unit never goes on: a lock wait timeout keeps the transaction open on the
    /// server, but the unit is rolled back and run again from the start all the same.
    @Test(arguments: [UInt32(1213), 1205, 2013, 2006, 1927])
    func theseEndTheUnit(_ code: UInt32) {
        #expect(MySQLErrorMapping.rollsBackTransaction(code))
    }

    @Test(arguments: [UInt32(1062), 1146, 1406, 1045])
    func theseDoNot(_ code: UInt32) {
        #expect(!MySQLErrorMapping.rollsBackTransaction(code))
    }

    /// The retry policy runs a lost transaction again like a deadlock, and a cluster that cannot
    /// take writes until its budget is spent, then gives up (busy: exit 75).
    @Test func retryPolicyForClusterStates() {
        #expect(RetryPolicy.busyAttempts(.transactionLost) == RetryPolicy.busyAttempts(.deadlock))
        #expect(!RetryPolicy.shouldRetryBusy(.transactionLost, attempt: 8, elapsedSeconds: 1))
        let cluster = BusyReason.clusterUnavailable(retryForSeconds: 30)
        #expect(RetryPolicy.shouldRetryBusy(cluster, attempt: 20, elapsedSeconds: 29))
        #expect(!RetryPolicy.shouldRetryBusy(cluster, attempt: 20, elapsedSeconds: 30.5))
        #expect(!RetryPolicy.shouldRetryBusy(.clusterUnavailable(retryForSeconds: 0), attempt: 3, elapsedSeconds: 0))
    }

    /// Several hosts are refused with the reason and what to do instead, in every spelling (the
    /// bracketed one used to pass a host list to the client library, undocumented).
    @Test(arguments: [
        "mysql://u@h1:3306,h2:3306/db", "mysql://u@[h1:3306,h2:3306]/db", "mysql://u@h1,h2/db",
        "mysql://u@h1%2Ch2/db",
    ])
    func severalHostsAreRefusedWithTheReason(_ text: String) {
        let error = #expect(throws: MySQLURL.ParseError.self) { try MySQLURL(parsing: text) }
        let message = error?.message ?? ""
        #expect(message.contains("several hosts") && message.contains("proxy"), "\(message)")
    }
}
