import Foundation
import Testing

/// Which database backend the end-to-end tests run `iapctl` against.
///
/// `IAPCTL_E2E_BACKEND=mysql` (with `IAPCTL_TEST_MYSQL_URL` and `IAPCTL_TEST_MYSQL_PASSWORD` from
/// `scripts/mariadb-test-server start`) gives every ``CLI`` its own fresh MySQL database,
/// `IAPCTL_E2E_BACKEND=postgres` (with `IAPCTL_TEST_POSTGRES_URL` and `IAPCTL_TEST_POSTGRES_PASSWORD`
/// from `scripts/postgres-test-server start`) its own PostgreSQL database, which `db init` creates;
/// anything else runs on SQLite files in the CLI's temp folder.
enum E2EBackend: String, Sendable {
    case sqlite
    case mysql
    case postgres

    /// The backend of this test run.
    static let current: E2EBackend =
        E2EBackend(rawValue: ProcessInfo.processInfo.environment["IAPCTL_E2E_BACKEND"]?.lowercased() ?? "") ?? .sqlite

    /// The test server, when the run is on MySQL (nil on SQLite, or when its variables are missing).
    static let server: TestMySQLServer? = current == .mysql ? TestMySQLServer.fromEnvironment() : nil

    /// The PostgreSQL test server, when the run is on PostgreSQL (nil otherwise, or when its
    /// variables are missing).
    static let postgresServer: TestPostgresServer? = current == .postgres ? TestPostgresServer.fromEnvironment() : nil

    /// The run's test server, whichever server backend it is (nil on SQLite).
    static var testServer: (any TestDatabaseServer)? { server ?? postgresServer }
}

extension Trait where Self == ConditionTrait {
    /// Skips a test on the MySQL run, recording why (file modes, file existence, `sqlite:` paths).
    static func sqliteOnly(_ reason: String) -> Self {
        .enabled(if: E2EBackend.current == .sqlite, Comment(rawValue: "SQLite only: \(reason)"))
    }

    /// Runs a test only on the PostgreSQL run (`IAPCTL_E2E_BACKEND=postgres` with a test server).
    static var postgresOnly: Self {
        .enabled(
            if: E2EBackend.postgresServer != nil,
            "PostgreSQL only: run with IAPCTL_E2E_BACKEND=postgres and a test server (scripts/postgres-test-server start)")
    }

    /// Runs a test that reads or changes the database with SQL behind iapctl's back (``CLI/sql(_:)``):
    /// always on a server backend (its client comes with the test server), on SQLite when the
    /// `sqlite3` shell is installed.
    static var sqlClient: Self {
        .enabled(
            if: E2EBackend.current != .sqlite || FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"),
            "the sqlite3 shell is not installed (apt-get install sqlite3)")
    }

    /// Runs a test only on a server backend's run (MySQL or PostgreSQL, with its test server).
    static func serverOnly(_ reason: String) -> Self {
        .enabled(
            if: E2EBackend.testServer != nil,
            Comment(rawValue: "MySQL and PostgreSQL only (IAPCTL_E2E_BACKEND=mysql or postgres, a test server): \(reason)"))
    }

    /// Runs a test only on the MySQL run (`IAPCTL_E2E_BACKEND=mysql` with a test server).
    static var mysqlOnly: Self {
        .enabled(
            if: E2EBackend.server != nil,
            "MySQL only: run with IAPCTL_E2E_BACKEND=mysql and a test server (scripts/mariadb-test-server start)")
    }
}

/// A test server of a server backend, whichever it is: what a test needs to make, use and drop a
/// database of its own on it.
protocol TestDatabaseServer: Sendable {
    /// The test user's password (iapctl reads it from `IAPCTL_DB_PASSWORD`).
    var password: String { get }
    /// The server's URL for database `database`, as iapctl takes it (no password in it).
    func url(database: String) -> String
    /// Runs `sql` (one or more statements) with the server's client in `database` (nil: the
    /// server's test database); tab-separated rows, no header, NULL as `NULL`.
    @discardableResult
    func run(_ sql: String, database: String?) throws -> String
    /// Drops `database` if it exists (errors ignored: cleanup).
    func drop(_ database: String)
    /// Every table of `database` as the server's own dump tool writes it (`mariadb-dump`, `pg_dump`).
    func dump(database: String) throws -> String
}

extension TestDatabaseServer {
    /// A new database name the test user may create (`db init` creates it).
    static func freshDatabaseName() -> String {
        "iapctl_e2e_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// The environment that points iapctl at `database` on this server, with the password.
    func environment(database: String) -> [String: String] {
        ["IAPCTL_DB": url(database: database), "IAPCTL_DB_PASSWORD": password]
    }
}

/// The private MariaDB server of `scripts/mariadb-test-server`, reached with the `mariadb` client.
struct TestMySQLServer: TestDatabaseServer {
    /// `mysql://USER@HOST[:PORT]/NAME[?socket=PATH]` as exported by the script.
    let url: String
    let password: String
    let user: String
    let host: String
    let port: String?
    let socket: String?

    /// From `IAPCTL_TEST_MYSQL_URL` / `IAPCTL_TEST_MYSQL_PASSWORD`; nil when either is unset.
    static func fromEnvironment() -> TestMySQLServer? {
        let env = ProcessInfo.processInfo.environment
        guard let url = env["IAPCTL_TEST_MYSQL_URL"], !url.isEmpty, let password = env["IAPCTL_TEST_MYSQL_PASSWORD"]
        else { return nil }
        return TestMySQLServer(url: url, password: password)
    }

    init?(url: String, password: String) {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        var authority = rest[..<slash]
        var user = "iapctl"
        if let at = authority.lastIndex(of: "@") {
            user = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        let hostPort = authority.split(separator: ":", maxSplits: 1).map(String.init)
        var socket: String?
        if let q = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: q)...].split(separator: "&") where pair.hasPrefix("socket=") {
                socket = String(pair.dropFirst("socket=".count)).removingPercentEncoding
            }
        }
        self.url = url
        self.password = password
        self.user = user
        self.host = hostPort.first ?? "localhost"
        self.port = hostPort.count > 1 ? hostPort[1] : nil
        self.socket = socket
    }

    /// The server URL with the database name replaced by `database`.
    func url(database: String) -> String {
        let schemeEnd = url.range(of: "://")!
        let slash = url[schemeEnd.upperBound...].firstIndex(of: "/")!
        let end = url[slash...].firstIndex(of: "?") ?? url.endIndex
        return String(url[...slash]) + database + String(url[end...])
    }

    /// Runs `sql` with the `mariadb` client (password through `MYSQL_PWD`, never argv); returns its
    /// output (tab-separated rows, no header, NULL as `NULL`). Throws when the client fails.
    @discardableResult
    func run(_ sql: String, database: String? = nil) throws -> String {
        var args = connectionArguments + ["--batch", "--skip-column-names"]
        if let database { args.append("--database=\(database)") }
        return try runDatabaseClient(
            try Self.client(), args, passwordVariable: "MYSQL_PWD", password: password, sql: sql)
    }

    /// Drops `database` if it exists (errors ignored: cleanup).
    func drop(_ database: String) {
        _ = try? run("DROP DATABASE IF EXISTS `\(database)`")
    }

    func dump(database: String) throws -> String {
        try runDatabaseClient(
            try Self.client(["mariadb-dump", "mysqldump"]), connectionArguments + ["--skip-comments", database],
            passwordVariable: "MYSQL_PWD", password: password, sql: "")
    }

    /// The options that reach the server as the test user (no password: `MYSQL_PWD`).
    private var connectionArguments: [String] {
        var args = ["--no-defaults", "--user=\(user)"]
        if let socket { args.append("--socket=\(socket)") } else { args.append("--host=\(host)") }
        if let port { args.append("--port=\(port)") }
        return args
    }

    /// The first of `names` installed in /usr/bin or /usr/local/bin.
    private static func client(_ names: [String] = ["mariadb", "mysql"]) throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin"] {
            for name in names where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
                return "\(folder)/\(name)"
            }
        }
        throw HarnessError("\(names[0]) is not installed (apt-get install mariadb-client)")
    }
}

/// The private PostgreSQL server of `scripts/postgres-test-server`, reached with `psql`.
struct TestPostgresServer: TestDatabaseServer {
    /// `postgres://iapctl@/iapctl_test?host=FOLDER` as exported by the script.
    let url: String
    let password: String

    /// From `IAPCTL_TEST_POSTGRES_URL` / `IAPCTL_TEST_POSTGRES_PASSWORD`; nil when either is unset.
    static func fromEnvironment() -> TestPostgresServer? {
        let env = ProcessInfo.processInfo.environment
        guard let url = env["IAPCTL_TEST_POSTGRES_URL"], !url.isEmpty, let password = env["IAPCTL_TEST_POSTGRES_PASSWORD"]
        else { return nil }
        return TestPostgresServer(url: url, password: password)
    }

    /// The server URL with the database name replaced by `database`.
    func url(database: String) -> String {
        let schemeEnd = url.range(of: "://")!
        let rest = url[schemeEnd.upperBound...]
        let end = rest.firstIndex(of: "?") ?? rest.endIndex
        let slash = rest[..<end].firstIndex(of: "/") ?? end
        return String(url[..<slash]) + "/" + database + String(url[end...])
    }

    /// Runs `sql` with `psql` (password through `PGPASSWORD`, never argv) in `database` (nil: the
    /// server's test database); returns its output as the `mariadb` client's batch mode gives it:
    /// tab-separated rows, no header, NULL as `NULL` (a `bytea` shows as `\x` and hex digits).
    /// Several statements each print their rows.
    @discardableResult
    func run(_ sql: String, database: String? = nil) throws -> String {
        let args = [
            "-X", "-q", "-A", "-t", "-F", "\t", "-P", "null=NULL", "-v", "ON_ERROR_STOP=1", "-f", "-",
            database.map(url(database:)) ?? url,
        ]
        return try runDatabaseClient("/usr/bin/psql", args, passwordVariable: "PGPASSWORD", password: password, sql: sql)
    }

    /// Drops `database` if it exists (errors ignored: cleanup).
    func drop(_ database: String) {
        _ = try? run("DROP DATABASE IF EXISTS \"\(database)\" WITH (FORCE)")
    }

    func dump(database: String) throws -> String {
        try runDatabaseClient(
            "/usr/bin/pg_dump", ["--no-owner", url(database: database)], passwordVariable: "PGPASSWORD",
            password: password, sql: "")
    }
}

/// Runs a database's command-line client (`mariadb`, `psql`, `sqlite3`) with the server's password
/// in the environment variable that client reads (never argv, where `ps` shows it; nil: none) and
/// `sql` on its standard input (from a file: no pipe to fill however long the statements or the
/// output). Returns standard output; throws with the client's errors.
func runDatabaseClient(
    _ executable: String, _ arguments: [String], passwordVariable: String? = nil, password: String = "", sql: String
) throws -> String {
    let input = FileManager.default.temporaryDirectory.appendingPathComponent("iapctl-sql-\(UUID().uuidString).sql")
    try Data(sql.utf8).write(to: input)
    defer { try? FileManager.default.removeItem(at: input) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    if let passwordVariable { env[passwordVariable] = password }
    process.environment = env
    let out = Pipe()
    let err = Pipe()
    let stdin = try FileHandle(forReadingFrom: input)
    defer { try? stdin.close() }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let name = URL(fileURLWithPath: executable).lastPathComponent
        throw HarnessError("\(name) failed on \(sql): \(String(decoding: errors, as: UTF8.self))")
    }
    return String(decoding: output, as: UTF8.self)
}

extension CLI {
    /// The test server and this CLI's database on it, on a server backend's run (nil on SQLite).
    var server: (server: any TestDatabaseServer, database: String)? {
        if let mysql { return (mysql.server, mysql.database) }
        if let postgres { return (postgres.server, postgres.database) }
        return nil
    }

    /// The text of the run's SQL dialect: `sqlite`, `mysql` or `postgres` (nil: the same as `sqlite`,
    /// standard SQL both take), for the few statements the three write differently.
    func dialect(sqlite: String, mysql: String, postgres: String? = nil) -> String {
        if self.mysql != nil { return mysql }
        if self.postgres != nil { return postgres ?? sqlite }
        return sqlite
    }

    /// Runs `sql` (one or more statements) on this CLI's database behind iapctl's back: the
    /// `sqlite3` shell on SQLite, the server's client otherwise. The rows of every statement,
    /// tab-separated, no header, NULL as `NULL`. Tests that call it carry ``Trait/sqlClient``.
    @discardableResult
    func sql(_ sql: String) throws -> String {
        if let server { return try server.server.run(sql, database: server.database) }
        // The shell runs only complete statements: the last one ends with ';'.
        let script = sql.trimmingCharacters(in: .whitespacesAndNewlines)
        return try runDatabaseClient(
            "/usr/bin/sqlite3", ["-batch", "-bail", "-separator", "\t", "-nullvalue", "NULL", dbPath],
            sql: script.hasSuffix(";") ? script : script + ";")
    }
}
