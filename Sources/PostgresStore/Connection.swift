internal import CPostgres
import CryptoDigest
import IAPFoundation
import StoreSQL
import SubscriptionModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One libpq connection (`PGconn *`), owned here and closed once in `deinit`, with the names of
/// the statements it prepared. Not thread-safe: one user at a time.
///
/// A prepared statement's name comes from its text and parameter types (`iapctl_` and 32 hex digits
/// of their SHA-256), never from the order this process first used it: behind a pooler that hands a
/// transaction another client's server connection without tracking prepared statements (PgBouncer
/// before 1.21 in transaction mode), a name can only stand for the statement it names there, and a
/// missing one fails (SQLSTATE 26000, exit 78 naming the pooler) instead of running another process's
/// statement with these values.
///
/// Values are sent as text (integers typed `int8`, texts `text`), bytes in binary (`bytea`);
/// results come back as text and are read by each column's type. The shared layer's `?`
/// placeholders become `$1`, `$2`… (``PostgresSQL/numbered(_:)``).
///
/// Every statement is sent without blocking and its answer waited for on the socket for at most
/// the I/O timeout (``Timeouts/io``, `IAPCTL_DB_TIMEOUT`): a server that stops answering (stopped,
/// hung, a host gone on a Unix socket or a network that keeps the connection) ends the statement
/// with ``StoreError/unavailable(_:)`` (exit 69), and the connection is given up.
///
/// A `SAVEPOINT` or `RELEASE SAVEPOINT` inside a transaction is not sent on its own: it travels
/// with the next statement, in the same round trip: in front of a statement sent as text
/// (`RELEASE SAVEPOINT iapctl_sp1; SAVEPOINT iapctl_sp1; COMMIT`), or in one pipeline (libpq's
/// pipeline mode, one sync) with the next prepared statement; before a prepare it is sent alone,
/// before `ROLLBACK` (which ends every savepoint) it is dropped. The server runs the same
/// statements in the same order; a batch's item costs no round trip of its own.
final class Connection {
    private let handle: OpaquePointer
    /// Where we are connected, for messages (never holds a password).
    let label: String
    /// This connection's round trips to the server (prepares and executions; `connect` once).
    let trips = RoundTripCounter(Connection.roundTrips)
    /// This process's round trips to PostgreSQL servers (`IAPCTL_POSTGRES_ROUND_TRIPS=1` reports them).
    static let roundTrips = RoundTrips(backend: "postgres")
    /// Prepared statements: the numbered text and the name, by the shared text and the types bound.
    private var prepared: [String: Prepared] = [:]
    /// Set when an error ended the unit's transaction as a whole (deadlock, serialization failure,
    /// lost connection, a read-only server): nothing more may run or commit in it.
    private(set) var aborted: StoreError?
    /// Set when the server did not answer within the I/O timeout: nothing more is sent on this
    /// connection (its state is unknown), every use throws this.
    private var stalled: StoreError?
    /// Seconds a statement waits for the server to take or answer anything before it is given up.
    private let ioTimeout: UInt32
    /// `SAVEPOINT` and `RELEASE SAVEPOINT` statements not sent yet (the type's description), in order.
    private var pendingStatements: [String] = []

    private struct Prepared {
        let name: String
        let text: String
        /// A single-row insert that skips a duplicate key (``PostgresSQL/ServerText``).
        let skipsDuplicate: Bool
        /// It returns the inserted row's id.
        let returnsId: Bool
    }

    /// How long the client waits for the server, in seconds: to connect, and for the answer to a
    /// statement (and, over TCP, for unacknowledged data) before the connection counts as lost.
    struct Timeouts {
        var connect: UInt32
        var io: UInt32
    }

    /// Connects to `url`. `database` replaces the URL's database (nil: the URL's); `password` (from
    /// `IAPCTL_DB_PASSWORD`) comes before the URL's own settings, and libpq's own sources
    /// (`PGPASSWORD`, `~/.pgpass`, a service file) apply when it is nil.
    init(url: PostgresURL, password: String?, database: String?, timeouts: Timeouts) throws(StoreError) {
        label = url.description
        ioTimeout = max(timeouts.io, 1)
        if let message = iapctl_pq_unavailable() { throw .libraryUnavailable(String(cString: message)) }
        // Before the URL (which may set them otherwise): defaults. After it: what must hold.
        var pairs: [(String, String)] = [
            ("connect_timeout", String(timeouts.connect)),
            ("tcp_user_timeout", String(UInt64(timeouts.io) * 1000)),
            ("keepalives", "1"),
            ("fallback_application_name", "iapctl"),
        ]
        if let password { pairs.append(("password", password)) }
        pairs.append(("dbname", url.text))
        if let database { pairs.append(("dbname", database)) }
        // The client always speaks UTF-8, whatever PGCLIENTENCODING says.
        pairs.append(("client_encoding", "UTF8"))
        trips.add("connect")
        let connection = Self.withCStrings(pairs.map(\.0)) { keywords in
            Self.withCStrings(pairs.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let connection else { throw .failure("cannot allocate a libpq connection") }
        handle = connection
        // The server's notices ("relation … already exists, skipping") are not printed.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw Self.connectError(
                PQerrorMessage(handle).map { String(cString: $0) } ?? "", context: "cannot connect to \(label)",
                connectTimeout: Double(timeouts.connect))
        }
        // Statements are sent without blocking and waited for with the I/O timeout (awaitResult).
        guard PQsetnonblocking(handle, 1) == 0 else {
            throw .failure("\(label): libpq cannot switch the connection to non-blocking mode")
        }
    }

    deinit { PQfinish(handle) }

    /// The server's version (`PostgreSQL 15.4`).
    var serverVersion: String {
        let version = PQparameterStatus(handle, "server_version").map { String(cString: $0) } ?? "unknown"
        return "PostgreSQL " + version
    }

    /// The server's process id of this connection (for `pg_terminate_backend` in tests).
    var backendPID: Int32 { PQbackendPID(handle) }

    /// The database this connection uses.
    var database: String { PQdb(handle).map { String(cString: $0) } ?? "" }

    /// `name` quoted as an identifier by libpq.
    func quotedIdentifier(_ name: String) throws(StoreError) -> String {
        let utf8 = Array(name.utf8)
        guard
            let quoted = utf8.withUnsafeBufferPointer({ buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                    PQescapeIdentifier(handle, $0, buffer.count)
                }
            })
        else { throw .failure("cannot quote the name \(name)") }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Runs `sql` (no values, any number of statements) with the simple query protocol. A
    /// savepoint statement inside a transaction waits for the next statement (the type's description).
    func execute(_ sql: String) throws(StoreError) {
        if let stalled { throw stalled }
        if sql != "ROLLBACK" { try refuseIfAborted() }
        if sql.hasPrefix("SAVEPOINT ") || sql.hasPrefix("RELEASE SAVEPOINT "),
            PQtransactionStatus(handle) == PQTRANS_INTRANS
        {
            pendingStatements.append(sql)
            return
        }
        var text = sql
        if sql == "ROLLBACK" {
            pendingStatements.removeAll()  // ROLLBACK ends every savepoint
        } else if !pendingStatements.isEmpty {
            text = (pendingStatements + [sql]).joined(separator: "; ")
            pendingStatements.removeAll()
        }
        trips.add(text)
        let result = try awaitResult(sent: PQsendQuery(handle, text) == 1, sql: text)
        defer { PQclear(result) }
        try check(result, sql: text)
        // COMMIT of a transaction an error had aborted answers ROLLBACK: nothing was committed.
        if sql == "COMMIT", let status = PQcmdStatus(result), String(cString: status) == "ROLLBACK" {
            throw remember(
                .busy(
                    "\(label): the transaction had failed and was rolled back at COMMIT; nothing was committed: retry",
                    .transactionLost))
        }
    }

    /// The rows of `sql` with `values` bound.
    func query(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> SQLResult {
        let statement = try prepare(sql, values)
        let result = try executePrepared(statement, values)
        defer { PQclear(result) }
        let rows = try Self.rows(result, source: sql)
        if statement.skipsDuplicate, rows.rows.isEmpty { throw duplicate(sql) }
        return rows
    }

    /// Runs an INSERT/UPDATE/DELETE: the rows it changed and the id of the row it inserted.
    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> (changed: Int64, insertId: Int64) {
        let statement = try prepare(sql, values)
        let result = try executePrepared(statement, values)
        defer { PQclear(result) }
        let changed = PQcmdTuples(result).flatMap { Int64(String(cString: $0)) } ?? 0
        guard statement.skipsDuplicate else { return (changed, 0) }
        // A single-row insert skips a duplicate key (`ON CONFLICT DO NOTHING`) instead of failing,
        // which would abort the whole transaction; no row inserted means the key was taken.
        guard changed > 0 else { throw duplicate(sql) }
        guard statement.returnsId else { return (changed, 0) }
        guard PQntuples(result) > 0, let id = Self.integer(result, 0, 0) else {
            throw .failure("\(label): the insert returned no id [SQL: \(sql)]")
        }
        return (changed, id)
    }

    /// Forgets every prepared statement (after DDL: a statement prepared before a column changed
    /// fails when run, "cached plan must not change result type", and aborts the transaction).
    func forgetPreparedStatements() throws(StoreError) {
        guard !prepared.isEmpty else { return }
        try execute("DEALLOCATE ALL")
        prepared.removeAll()
    }

    // MARK: transactions

    /// Whether a transaction is open (also one an error has aborted).
    var inTransaction: Bool { PQtransactionStatus(handle) != PQTRANS_IDLE }

    var transactionAborted: StoreError? { aborted }

    func transactionWillBegin() {
        aborted = nil
        pendingStatements.removeAll()
    }

    // MARK: private

    private func duplicate(_ sql: String) -> StoreError {
        .conflict("\(label): duplicate key value violates a unique key (SQLSTATE 23505) [SQL: \(sql)]")
    }

    /// Inside a transaction an error ended (or on a lost connection): throws that error.
    private func refuseIfAborted() throws(StoreError) {
        if let aborted, PQtransactionStatus(handle) != PQTRANS_IDLE || PQstatus(handle) != CONNECTION_OK {
            throw aborted
        }
    }

    private func prepare(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> Prepared {
        if let stalled { throw stalled }
        try refuseIfAborted()
        let types = values.map(Self.typeOid)
        let key = sql + "\u{0}" + types.map(String.init).joined(separator: ",")
        if let statement = prepared[key] { return statement }
        let server = PostgresSQL.ServerText(sql)
        let name = Self.statementName(key)
        // Inside a transaction a failed prepare (a probe for a column that may be missing) would
        // abort the whole transaction: it is prepared under a savepoint, once per connection.
        let guarded = inTransaction
        if guarded { try execute("SAVEPOINT iapctl_prepare") }
        try sendPendingStatements()
        trips.add("PREPARE " + sql)
        let sent = types.withUnsafeBufferPointer { typeBuffer in
            PQsendPrepare(handle, name, server.text, Int32(types.count), typeBuffer.baseAddress)
        }
        let result = try awaitResult(sent: sent == 1, sql: sql)
        defer { PQclear(result) }
        do {
            try check(result, sql: sql)
        } catch {
            if guarded, aborted == nil { try? execute("ROLLBACK TO SAVEPOINT iapctl_prepare") }
            throw error
        }
        if guarded { try execute("RELEASE SAVEPOINT iapctl_prepare") }
        let statement = Prepared(
            name: name, text: server.text, skipsDuplicate: server.skipsDuplicate, returnsId: server.returnsId)
        prepared[key] = statement
        return statement
    }

    /// `iapctl_` and the first 16 bytes of `key`'s SHA-256 in hex: the same text and types give the
    /// same name in every process and version, different ones never share a name (39 characters,
    /// within PostgreSQL's 63).
    static func statementName(_ key: String) -> String {
        "iapctl_" + Hex.encode(SHA256Digest.of(key).prefix(16))
    }

    private func executePrepared(_ statement: Prepared, _ values: [SQLValue]) throws(StoreError) -> OpaquePointer? {
        var buffers: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for value in values {
            switch value {
            case .null:
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
            case .int(let number):
                buffers.append(Array(String(number).utf8CString))
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                guard !text.utf8.contains(0) else {
                    throw .failure("\(label): a text value holds a NUL character, which PostgreSQL text cannot store")
                }
                buffers.append(Array(text.utf8CString))
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                buffers.append(bytes.map { CChar(bitPattern: $0) })
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        if let stalled { throw stalled }
        let leading = pendingStatements
        pendingStatements.removeAll()
        trips.add(statement.text)
        let sent = Self.withBuffers(buffers) { pointers in
            if leading.isEmpty {
                return PQsendQueryPrepared(handle, statement.name, Int32(values.count), pointers, lengths, formats, 0)
            }
            // The savepoint statements and this one in one pipeline: one round trip.
            guard PQenterPipelineMode(handle) == 1 else { return 0 }
            for text in leading where PQsendQueryParams(handle, text, 0, nil, nil, nil, nil, 0) != 1 { return 0 }
            guard PQsendQueryPrepared(handle, statement.name, Int32(values.count), pointers, lengths, formats, 0) == 1
            else { return 0 }
            return PQpipelineSync(handle)
        }
        let result =
            leading.isEmpty
            ? try awaitResult(sent: sent == 1, sql: statement.text)
            : try awaitPipeline(sent: sent == 1, leading: leading, sql: statement.text)
        do {
            try check(result, sql: statement.text)
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    /// Sends the pending `RELEASE SAVEPOINT` statements now, in one round trip.
    private func sendPendingStatements() throws(StoreError) {
        guard !pendingStatements.isEmpty else { return }
        let text = pendingStatements.joined(separator: "; ")
        pendingStatements.removeAll()
        trips.add(text)
        let result = try awaitResult(sent: PQsendQuery(handle, text) == 1, sql: text)
        defer { PQclear(result) }
        try check(result, sql: text)
    }

    /// The answer to what was just sent (`sent`: libpq took it): its last result, or the first
    /// error of several statements; nil when the connection failed (``check(_:sql:)`` then reads
    /// libpq's message). Waits on the socket for at most the I/O timeout at a time; a server
    /// that takes or answers nothing for that long ends the wait with ``stall(_:)``.
    private func awaitResult(sent: Bool, sql: String) throws(StoreError) -> OpaquePointer? {
        guard sent, try flushAll(sql) else { return nil }
        return try queryResult(sql)
    }

    /// The answer to a pipeline of the `leading` statements and one more, ended by one sync: the
    /// first error among them (a leading statement's, with the SQL named), else the last one's
    /// result. Leaves pipeline mode.
    private func awaitPipeline(sent: Bool, leading: [String], sql: String) throws(StoreError) -> OpaquePointer? {
        var failure: OpaquePointer?
        var own: OpaquePointer?
        var failed: String?
        if sent {
            try flushAll(sql)
            for text in leading {
                let result = try queryResult(sql)
                if failure == nil, let result, PQresultStatus(result) == PGRES_FATAL_ERROR {
                    failure = result
                    failed = text
                } else {
                    PQclear(result)
                }
            }
            own = try queryResult(sql)
            // The sync point's own result.
            try waitWhileBusy(sql)
            PQclear(PQgetResult(handle))
        }
        var attempts = 0
        while PQexitPipelineMode(handle) != 1, PQstatus(handle) == CONNECTION_OK {
            // Results still queued (a send that failed half-way): read and drop them.
            attempts += 1
            guard attempts <= leading.count + 3 else {
                PQclear(failure)
                PQclear(own)
                throw remember(.failure("\(label): libpq did not leave pipeline mode [SQL: \(sql)]"))
            }
            try waitWhileBusy(sql)
            PQclear(PQgetResult(handle))
        }
        guard let failure else { return own }
        PQclear(own)
        if let failed {
            // Report the statement that failed, not the one it travelled with.
            do {
                try check(failure, sql: failed)
            } catch {
                PQclear(failure)
                throw error
            }
        }
        return failure
    }

    /// Sends what libpq still holds; false when the connection failed (libpq's error message says
    /// how). The server may answer while we still send: that is read, so neither side waits on
    /// the other.
    @discardableResult
    private func flushAll(_ sql: String) throws(StoreError) -> Bool {
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { return true }
            if flushed < 0 { return false }
            try wait(for: Int16(POLLIN | POLLOUT), sql: sql)
            if PQconsumeInput(handle) == 0 { return false }
        }
    }

    /// Waits until libpq holds a whole result (or the connection failed).
    private func waitWhileBusy(_ sql: String) throws(StoreError) {
        while PQisBusy(handle) != 0 {
            try wait(for: Int16(POLLIN), sql: sql)
            if PQconsumeInput(handle) == 0 { return }
        }
    }

    /// One query's results, up to the null (in a pipeline, the sync) that ends them: the first error,
    /// else the last.
    private func queryResult(_ sql: String) throws(StoreError) -> OpaquePointer? {
        var kept: OpaquePointer?
        while true {
            try waitWhileBusy(sql)
            guard let result = PQgetResult(handle) else { break }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                // Never before this query's end; seen only when the connection failed mid-way.
                PQclear(result)
                break
            }
            if let kept, PQresultStatus(kept) == PGRES_FATAL_ERROR {
                PQclear(result)
            } else {
                PQclear(kept)
                kept = result
            }
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        return kept
    }

    /// Waits until the socket is ready for `events`, at most the I/O timeout.
    private func wait(for events: Int16, sql: String) throws(StoreError) {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return }  // no socket: libpq reports the lost connection
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        let deadline = Self.monotonicMilliseconds() + Int64(ioTimeout) * 1000
        while true {
            let remaining = deadline - Self.monotonicMilliseconds()
            guard remaining > 0 else { throw stall(sql) }
            let ready = poll(&descriptor, 1, Int32(clamping: remaining))
            if ready > 0 { return }
            if ready == 0 { throw stall(sql) }
            if errno != EINTR { return }  // libpq's next read or write reports the error
        }
    }

    /// The server took or answered nothing within the I/O timeout: the connection is given up
    /// (what the server does with the statement is unknown; an open transaction is never
    /// committed, and the server rolls it back when the connection closes).
    private func stall(_ sql: String) -> StoreError {
        let error = StoreError.unavailable(
            "\(label): the server did not answer within \(ioTimeout) s (IAPCTL_DB_TIMEOUT) [SQL: \(sql)]; it may be "
                + "stopped, hung or overloaded: iapctl gave up the connection; run the same command again when the "
                + "server answers (or set IAPCTL_DB_TIMEOUT to wait longer)")
        stalled = error
        if aborted == nil { aborted = error }
        return error
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Throws the error `result` holds (a nil result: the connection failed).
    private func check(_ result: OpaquePointer?, sql: String) throws(StoreError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK, status != PGRES_EMPTY_QUERY else { return }
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        var message =
            result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? PQerrorMessage(handle).map { String(cString: $0) } ?? "unknown error"
        message = PostgresURL.oneLine(message)
        // No SQLSTATE but a bad connection: it was lost (libpq's own error).
        let lost = state == nil && PQstatus(handle) != CONNECTION_OK
        let error = PostgresErrorMapping.storeError(
            state: lost ? nil : state ?? "XX000", message: message, context: "\(label) [SQL: \(sql)]")
        if lost || PostgresErrorMapping.rollsBackUnit(state) { throw remember(error) }
        throw error
    }

    private func remember(_ error: StoreError) -> StoreError {
        if aborted == nil, PQtransactionStatus(handle) != PQTRANS_IDLE || PQstatus(handle) != CONNECTION_OK {
            aborted = error
        }
        return error
    }

    /// The error for a failed connection attempt, by libpq's message (there is no SQLSTATE before
    /// a session exists).
    static func connectError(_ raw: String, context: String, connectTimeout: Double) -> StoreError {
        let message = PostgresURL.oneLine(raw)
        let sources = "IAPCTL_DB_PASSWORD, PGPASSWORD, ~/.pgpass or a service file (never in the URL)"
        if message.contains("no password supplied") {
            return .accessDenied("\(context): the server asks for a password and none was given; put it in \(sources)")
        }
        if message.contains("authentication failed") {  // "password authentication failed", and the others
            return .accessDenied("\(context): the server refused the user's credentials; check the password in \(sources)")
        }
        if message.contains("does not exist"), message.contains("database") {
            return .notFound("\(context): \(message); create it (iapctl db init) or fix the database name")
        }
        if message.contains("is read-only") || message.contains("hot standby") || message.contains("not in recovery")
            || message.contains("in recovery")
        {
            return .busy(
                "\(context): \(message); no listed server accepts writes now (a failover in progress?): retry",
                .clusterUnavailable(retryForSeconds: connectTimeout))
        }
        if message.contains("too many clients") || message.contains("remaining connection slots") {
            return .busy("\(context): \(message); retry later", .tooManyConnections)
        }
        if message.contains("starting up") || message.contains("shutting down") {
            return .busy("\(context): \(message); retry", .clusterUnavailable(retryForSeconds: connectTimeout))
        }
        if message.contains("permission denied") {
            return .accessDenied("\(context): \(message)")
        }
        return .unavailable("\(context): \(message)")
    }

    /// The OID a value is typed with: `int8`, `text`, `bytea`; 0 (the server infers it) for NULL.
    private static func typeOid(_ value: SQLValue) -> UInt32 {
        switch value {
        case .null: return 0
        case .int: return 20
        case .text: return 25
        case .bytes: return 17
        }
    }

    private static func integer(_ result: OpaquePointer?, _ row: Int32, _ column: Int32) -> Int64? {
        guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else { return nil }
        return Int64(String(cString: value))
    }

    /// Every row of `result`, each column read by its type.
    static func rows(_ result: OpaquePointer?, source: String) throws(StoreError) -> SQLResult {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        var names: [String] = []
        var types: [UInt32] = []
        for column in 0..<columnCount {
            names.append(PQfname(result, column).map { String(cString: $0) } ?? "")
            types.append(PQftype(result, column))
        }
        var rows: [SQLRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                values.append(try value(result, row, column, type: types[Int(column)], source: source))
            }
            rows.append(SQLRow(values: values, source: source))
        }
        return SQLResult(columns: names, rows: rows)
    }

    private static func value(
        _ result: OpaquePointer?, _ row: Int32, _ column: Int32, type: UInt32, source: String
    ) throws(StoreError) -> SQLValue {
        guard PQgetisnull(result, row, column) == 0, let raw = PQgetvalue(result, row, column) else { return .null }
        let length = Int(PQgetlength(result, row, column))
        switch type {
        case 20, 21, 23, 26, 1700:  // int8, int2, int4, oid, numeric (an integral sum or count)
            let text = String(cString: raw)
            guard let number = Int64(text) else {
                throw .failure("column \(column + 1) holds '\(text)', not a whole number [\(source)]")
            }
            return .int(number)
        case 16:  // bool
            return .int(raw.pointee == CChar(UInt8(ascii: "t")) ? 1 : 0)
        case 17:  // bytea, in the server's text form: libpq decodes it
            var count = 0
            guard let bytes = raw.withMemoryRebound(to: UInt8.self, capacity: length + 1, { PQunescapeBytea($0, &count) })
            else { throw .failure("cannot decode column \(column + 1)'s bytes [\(source)]") }
            defer { PQfreemem(bytes) }
            return .bytes(Array(UnsafeBufferPointer(start: bytes, count: count)))
        default:
            return .text(
                String(decoding: UnsafeRawBufferPointer(start: raw, count: length).bindMemory(to: UInt8.self), as: UTF8.self))
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let buffers = strings.map { Array($0.utf8CString) }
        return withBuffers(buffers + [nil]) { body($0) }
    }

    private static func withBuffers<R>(_ buffers: [[CChar]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafePointer<CChar>?] = []
        var owned: [UnsafeMutablePointer<CChar>] = []
        defer { for pointer in owned { pointer.deallocate() } }
        for buffer in buffers {
            guard let buffer else {
                pointers.append(nil)
                continue
            }
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(buffer.count, 1))
            copy.initialize(from: buffer, count: buffer.count)
            owned.append(copy)
            pointers.append(UnsafePointer(copy))
        }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

extension Connection: SQLConnection {
    func query(_ sql: String, _ values: [SQLValue], shaped: Bool) throws(StoreError) -> SQLResult {
        try query(sql, values)
    }
}
