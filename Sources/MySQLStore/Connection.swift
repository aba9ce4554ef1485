internal import CMariaDB
import StoreSQL
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One client connection (`MYSQL *`), owned here and closed once in `deinit`, with its cache of
/// prepared statements. Not thread-safe: one user at a time.
final class Connection {
    private let handle: UnsafeMutablePointer<MYSQL>
    let errors: ErrorReporter
    /// This connection's round trips to the server.
    let trips = RoundTripCounter(Connection.roundTrips)
    /// This process's round trips to MySQL/MariaDB servers (`IAPCTL_MYSQL_ROUND_TRIPS=1` reports them).
    static let roundTrips = RoundTrips(backend: "mysql")
    /// Where we are connected, for messages (never holds a password).
    let label: String
    /// Prepared statements by text; those whose text varies with the number of values (IN lists)
    /// are bounded.
    private var statements = StatementCache<PreparedStatement>(shapedLimit: 32)
    /// True from this connection's `START TRANSACTION` to its `COMMIT`/`ROLLBACK`: every statement
    /// in between is checked to have run inside that transaction (``checkTransaction(after:)``).
    private var unitOpen = false

    /// How long the client waits for the server, in seconds: to connect, and for each read or
    /// write of a statement (a stalled or frozen server then loses the connection: exit 69).
    struct Timeouts {
        var connect: UInt32
        var io: UInt32
    }

    /// Connects to `url`'s server, selecting `database` (nil: none).
    init(url: MySQLURL, password: String?, database: String?, timeouts: Timeouts) throws(StoreError) {
        errors = ErrorReporter()
        label = url.description
        // libmariadb is loaded (and mysql_library_init run, once per process) here, on the first
        // connection: see CMariaDB.
        if let message = iapctl_mysql_unavailable() { throw .libraryUnavailable(String(cString: message)) }
        guard let handle = mysql_init(nil) else { throw .failure("cannot allocate a MariaDB client handle") }
        self.handle = handle
        // From here on deinit closes the handle, whatever fails below.
        try configure(url: url, timeouts: timeouts)
        let host = url.host
        let port = UInt32(url.port ?? 0)
        let flags = UInt(CLIENT_FOUND_ROWS)  // affected rows = matched rows (an UPDATE to equal values counts)
        trips.add("connect")
        let connected = host.withCString { hostC in
            Self.withOptionalCString(url.user) { userC in
                Self.withOptionalCString(password) { passwordC in
                    Self.withOptionalCString(database) { databaseC in
                        Self.withOptionalCString(url.socket) { socketC in
                            mysql_real_connect(handle, hostC, userC, passwordC, databaseC, port, socketC, flags)
                        }
                    }
                }
            }
        }
        guard connected != nil else {
            throw errors.connectionError(handle, context: "cannot connect to \(label)")
        }
        try execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO'")
        try execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        // A transaction the server ends under a unit (a cluster's abort) must not let the unit's
        // later statements commit one by one: they open a new transaction that is never committed
        // (the unit's marker savepoint is missing at COMMIT, so it is rolled back and run again).
        try execute("SET SESSION autocommit = 0")
        errors.clusterRetrySeconds = Double(timeouts.io)
        isGaleraNode = try Self.readYourWrites(self)
    }

    /// True when the server is a MariaDB Galera node (`wsrep_on`).
    private(set) var isGaleraNode = false

    /// On a Galera node, reads and transaction starts first wait until this node has applied every
    /// write the cluster committed before them (`wsrep_sync_wait = 1`): a unit's look-ups and a
    /// status right after a write through another node see that write. Returns whether it is one.
    private static func readYourWrites(_ connection: Connection) throws(StoreError) -> Bool {
        // MySQL has no wsrep variables, and a MariaDB built without Galera may lack them.
        guard connection.serverVersion.contains("MariaDB"),
            let on = try? connection.rows("SELECT @@GLOBAL.wsrep_on").first?.optionalInt(0), on == 1
        else { return false }
        try connection.execute("SET SESSION wsrep_sync_wait = 1")
        return true
    }

    deinit {
        // Statements first (they belong to the handle), then the handle: each freed exactly once.
        statements.removeAll()
        mysql_close(handle)
    }

    /// The server's version string.
    var serverVersion: String {
        mysql_get_server_info(handle).map { String(cString: $0) } ?? "unknown"
    }

    /// Runs a statement that carries no values (transaction control, DDL) with the text protocol.
    func execute(_ sql: String) throws(StoreError) {
        trips.add(sql)
        let utf8 = Array(sql.utf8)
        let rc = utf8.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                mysql_real_query(handle, $0, UInt(buffer.count))
            }
        }
        guard rc == 0 else { throw errors.connectionError(handle, context: "statement failed [SQL: \(sql)]") }
        if mysql_field_count(handle) > 0, let result = mysql_store_result(handle) {
            mysql_free_result(result)
        }
        if sql.hasPrefix("START TRANSACTION") {
            unitOpen = true
        } else if sql == "COMMIT" || sql == "ROLLBACK" {
            unitOpen = false
            return
        }
        try checkTransaction(after: sql)
    }

    /// Inside a unit: throws (and remembers) ``BusyReason/transactionLost`` when the server no
    /// longer holds the unit's transaction after `sql` ran or was prepared: its status has no open
    /// transaction, or it left a warning that it aborted one (1317 from a cluster's brute-force
    /// abort during a prepare, 1213, 1205, 1180, 1047).
    private func checkTransaction(after sql: String) throws(StoreError) {
        guard unitOpen else { return }
        if let aborted = errors.transactionAborted { throw aborted }
        if handle.pointee.warning_count > 0, let code = abortWarning() {
            throw errors.transactionLost("warning \(code) [SQL: \(sql)]", context: label)
        }
        if handle.pointee.server_status & UInt32(SERVER_STATUS_IN_TRANS) == 0 {
            throw errors.transactionLost("no transaction open after [SQL: \(sql)]", context: label)
        }
    }

    /// The first warning of the last statement that means the transaction was aborted, if any.
    private func abortWarning() -> UInt32? {
        let sql = "SHOW WARNINGS"
        trips.add(sql)
        guard mysql_real_query(handle, sql, UInt(sql.utf8.count)) == 0, let result = mysql_store_result(handle) else {
            return nil
        }
        defer { mysql_free_result(result) }
        while let row = mysql_fetch_row(result) {
            // Level, Code, Message.
            guard let text = row[1], let code = UInt32(String(cString: text)) else { continue }
            if MySQLErrorMapping.rollsBackTransaction(code) { return code }
        }
        return nil
    }

    /// Makes `name` the current database.
    func selectDatabase(_ name: String) throws(StoreError) {
        trips.add("USE (mysql_select_db)")
        guard mysql_select_db(handle, name) == 0 else {
            throw errors.connectionError(handle, context: "cannot use database \(name)")
        }
    }

    /// The prepared statement for `sql`, prepared once per connection and reused (`shaped`: a text
    /// with a variable shape; at most a few are kept).
    /// A statement prepared inside a unit is checked before it runs: a cluster's abort during the
    /// prepare shows only as warning 1317.
    func statement(_ sql: String, shaped: Bool = false) throws(StoreError) -> PreparedStatement {
        var prepared = false
        let statement = try statements.statement(sql, shaped: shaped) { [handle, errors, trips] sql throws(StoreError) in
            prepared = true
            return try PreparedStatement(connection: handle, sql: sql, errors: errors, trips: trips)
        }
        if prepared { try checkTransaction(after: "PREPARE " + sql) }
        return statement
    }

    /// The rows of `sql` with `values` bound, read by position (schema probes).
    func rows(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) -> [SQLRow] {
        let rows = try statement(sql).query(values)
        try checkTransaction(after: sql)
        return rows
    }

    /// Runs `sql` without the unit's checks, as if the server had done it (tests of what the store
    /// does when the server ends a transaction under it).
    func executeUnchecked(_ sql: String) throws(StoreError) {
        trips.add(sql)
        guard mysql_real_query(handle, sql, UInt(sql.utf8.count)) == 0 else {
            throw errors.connectionError(handle, context: "statement failed [SQL: \(sql)]")
        }
    }

    /// The server's id of this connection (for `KILL` in tests).
    var threadId: UInt { handle.pointee.thread_id }

    // MARK: private

    private func configure(url: MySQLURL, timeouts: Timeouts) throws(StoreError) {
        var timeout = timeouts.connect
        try option(MYSQL_OPT_CONNECT_TIMEOUT, "connect timeout") {
            mysql_options(handle, MYSQL_OPT_CONNECT_TIMEOUT, &timeout)
        }
        var io = timeouts.io
        try option(MYSQL_OPT_READ_TIMEOUT, "read timeout") { mysql_options(handle, MYSQL_OPT_READ_TIMEOUT, &io) }
        try option(MYSQL_OPT_WRITE_TIMEOUT, "write timeout") { mysql_options(handle, MYSQL_OPT_WRITE_TIMEOUT, &io) }
        var off: my_bool = 0
        try option(MYSQL_OPT_RECONNECT, "reconnect off") { mysql_options(handle, MYSQL_OPT_RECONNECT, &off) }
        var noLocalInfile: UInt32 = 0
        try option(MYSQL_OPT_LOCAL_INFILE, "local infile off") {
            mysql_options(handle, MYSQL_OPT_LOCAL_INFILE, &noLocalInfile)
        }
        try option(MYSQL_SET_CHARSET_NAME, "charset utf8mb4") {
            mysql_options(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        }

        if let file = url.optionFile, access(file, R_OK) != 0 {
            // Connector/C would silently ignore it and then fail with a confusing access error.
            throw .accessDenied("cannot read the option file \(file): \(String(cString: strerror(errno)))")
        }
        if let file = url.optionFile ?? Self.userOptionFile() {
            try Self.refuseExposedPassword(in: file)
            try option(MYSQL_READ_DEFAULT_FILE, "option file \(file)") {
                file.withCString { mysql_options(handle, MYSQL_READ_DEFAULT_FILE, $0) }
            }
            try option(MYSQL_READ_DEFAULT_GROUP, "option group client") {
                mysql_options(handle, MYSQL_READ_DEFAULT_GROUP, "client")
            }
        }

        switch url.sslMode {
        case nil, .disabled?, .preferred?:
            break
        case .required?:
            var on: my_bool = 1
            try option(MYSQL_OPT_SSL_ENFORCE, "ssl-mode REQUIRED") { mysql_options(handle, MYSQL_OPT_SSL_ENFORCE, &on) }
        case .verifyCA?, .verifyIdentity?:
            var on: my_bool = 1
            try option(MYSQL_OPT_SSL_ENFORCE, "ssl-mode \(url.sslMode!.rawValue)") {
                mysql_options(handle, MYSQL_OPT_SSL_ENFORCE, &on)
            }
            var verify: my_bool = 1
            try option(MYSQL_OPT_SSL_VERIFY_SERVER_CERT, "server certificate verification") {
                mysql_options(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify)
            }
        }
        if let ca = url.sslCA {
            try option(MYSQL_OPT_SSL_CA, "ssl-ca \(ca)") {
                ca.withCString { mysql_options(handle, MYSQL_OPT_SSL_CA, $0) }
            }
        }
    }

    private func option(_ which: mysql_option, _ what: String, _ set: () -> Int32) throws(StoreError) {
        guard set() == 0 else { throw .failure("cannot set the MariaDB client option \(what) (\(which.rawValue))") }
    }

    /// `~/.my.cnf` when it exists.
    /// Like ssh and libpq: an option file that holds a password must not be open to the group or
    /// others (mode 0600 or 0400), or the password is not a secret any more.
    static func refuseExposedPassword(in file: String) throws(StoreError) {
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & 0o077 != 0, fileHoldsPassword(file) else { return }
        let mode = String(info.st_mode & 0o777, radix: 8)
        throw .accessDenied(
            "the option file \(file) holds a password and is readable or writable by others (mode 0\(mode)); "
                + "make it private: chmod 600 \(file)")
    }

    /// Whether an option file has a `password` (or `pass`/`pwd`) line, in any group.
    private static func fileHoldsPassword(_ file: String) -> Bool {
        guard let handle = fopen(file, "r") else { return false }
        defer { fclose(handle) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, handle) > 0, let line {
            let text = String(cString: line).trimmingPrefix(while: { $0 == " " || $0 == "\t" })
            let key = text.prefix { $0 != "=" && $0 != " " && $0 != "\t" && $0 != "\n" }.lowercased()
            if ["password", "pass", "pwd", "passwd"].contains(key) { return true }
        }
        return false
    }

    private static func userOptionFile() -> String? {
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        let path = home.hasSuffix("/") ? home + ".my.cnf" : home + "/.my.cnf"
        return access(path, R_OK) == 0 ? path : nil
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString { body($0) }
    }
}

extension Connection: SQLConnection {
    func query(_ sql: String, _ values: [SQLValue], shaped: Bool) throws(StoreError) -> SQLResult {
        let prepared = try statement(sql, shaped: shaped)
        let rows = try prepared.query(values)
        try checkTransaction(after: sql)
        return SQLResult(columns: prepared.columnNames, rows: rows)
    }

    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64) {
        let result = try statement(sql).run(values)
        try checkTransaction(after: sql)
        return (Int64(clamping: result.affectedRows), result.insertId)
    }

    /// The client cannot tell cheaply; ROLLBACK outside a transaction is harmless on a server.
    var inTransaction: Bool { true }

    var transactionAborted: StoreError? { errors.transactionAborted }

    func transactionWillBegin() {
        errors.transactionAborted = nil
        // With autocommit off a read outside a unit (a schema probe) leaves a transaction open:
        // end it, so the unit's own transaction begins clean (and may set its isolation level).
        if handle.pointee.server_status & UInt32(SERVER_STATUS_IN_TRANS) != 0 { try? execute("COMMIT") }
    }
}
