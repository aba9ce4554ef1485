import SubscriptionModel

/// How the server backends (MySQL/MariaDB, PostgreSQL) open their one connection: the default
/// timeouts, the retry policy around connecting, and `db init`'s creation of a database that does
/// not exist yet.
public enum ServerOpening {
    /// Seconds a client waits to connect to the server by default.
    public static let defaultConnectTimeoutSeconds: UInt32 = 10
    /// Seconds a stalled server may keep a read or write (or, over TCP, unacknowledged data)
    /// waiting by default before the connection counts as lost.
    public static let defaultIOTimeoutSeconds: UInt32 = 60

    /// A connection from `connect` (to the database the URL names). A server out of connections, a
    /// cluster node not ready yet, or no writable server during a failover is tried again
    /// (``RetryPolicy``). When the database does not exist and `create` is true (`iapctl db init`),
    /// `createThenConnect` makes it (one another `db init` made meanwhile is fine) and returns a
    /// connection to it; otherwise the missing database stays ``StoreError/notFound(_:)``.
    public static func connect<Connection>(
        create: Bool, _ connect: () throws(StoreError) -> Connection,
        createThenConnect: () throws -> Connection
    ) throws -> Connection {
        try RetryPolicy.run(retryingConflicts: false) {
            let first = Result { () throws(StoreError) in try connect() }
            switch first {
            case .success(let connection):
                return connection
            case .failure(let error):
                guard create, case .notFound = error else { throw error }
                return try createThenConnect()
            }
        }
    }
}
