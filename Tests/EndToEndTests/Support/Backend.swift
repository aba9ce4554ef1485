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

    /// Runs a test only on the MySQL run (`IAPCTL_E2E_BACKEND=mysql` with a test server).
    static var mysqlOnly: Self {
        .enabled(
            if: E2EBackend.server != nil,
            "MySQL only: run with IAPCTL_E2E_BACKEND=mysql and a test server (scripts/mariadb-test-server start)")
    }
}

/// The private MariaDB server of `scripts/mariadb-test-server`, reached with the `mariadb` client.
struct TestMySQLServer: Sendable {
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

    /// A new database name the test user may create (`iapctl_%`).
    static func freshDatabaseName() -> String {
        "iapctl_e2e_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// Runs `sql` with the `mariadb` client (password through `MYSQL_PWD`, never argv); returns its
    /// output (tab-separated rows, no header). Throws when the client fails.
    @discardableResult
    func run(_ sql: String, database: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.client())
        var args = ["--no-defaults", "--batch", "--skip-column-names", "--user=\(user)"]
        if let socket { args.append("--socket=\(socket)") } else { args.append("--host=\(host)") }
        if let port { args.append("--port=\(port)") }
        if let database { args.append("--database=\(database)") }
        args += ["--execute", sql]
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["MYSQL_PWD"] = password
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HarnessError("mariadb client failed on \(sql): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Drops `database` if it exists (errors ignored: cleanup).
    func drop(_ database: String) {
        _ = try? run("DROP DATABASE IF EXISTS `\(database)`")
    }

    private static func client() throws -> String {
        for path in ["/usr/bin/mariadb", "/usr/bin/mysql", "/usr/local/bin/mariadb", "/usr/local/bin/mysql"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw HarnessError("the mariadb client is not installed (apt-get install mariadb-client)")
    }
}

/// The private PostgreSQL server of `scripts/postgres-test-server`, reached with `psql`.
struct TestPostgresServer: Sendable {
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

    /// A new database name (`db init` creates it).
    static func freshDatabaseName() -> String {
        "iapctl_e2e_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// Runs `sql` with `psql` (password through `PGPASSWORD`, never argv) in `database` (nil: the
    /// server's test database); returns its output (unaligned, `|`-separated rows, no header).
    @discardableResult
    func run(_ sql: String, database: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, database.map(url(database:)) ?? url]
        var env = ProcessInfo.processInfo.environment
        env["PGPASSWORD"] = password
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HarnessError("psql failed on \(sql): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Drops `database` if it exists (errors ignored: cleanup).
    func drop(_ database: String) {
        _ = try? run("DROP DATABASE IF EXISTS \"\(database)\" WITH (FORCE)")
    }
}
