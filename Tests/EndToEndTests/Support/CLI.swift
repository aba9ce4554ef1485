import Foundation
import Testing

/// Runs the built `iapctl` binary (`.build/debug/iapctl`) in a fresh temporary folder.
///
/// Each `CLI` owns one temp dir (removed when the `CLI` goes away); runs start there, with a
/// small clean environment in which `IAPCTL_DB` points at `<dir>/iapctl.db` — or, on the MySQL and
/// PostgreSQL runs (``E2EBackend``), at a fresh database `iapctl_e2e_<random>` on the test server
/// (created by `db init`, dropped when the `CLI` goes away; the password is set: `IAPCTL_DB_PASSWORD`
/// on MySQL, `PGPASSWORD` on PostgreSQL). Build first
/// (`swift build`; `scripts/test` does it).
final class CLI {
    /// What one run printed and how it ended.
    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        /// Non-empty stdout lines.
        var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

        /// stdout parsed as one JSON document (object or array).
        func json() throws -> Any {
            try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
        }

        /// stdout parsed as one JSON object.
        func jsonObject() throws -> [String: Any] {
            try #require(try json() as? [String: Any], "stdout is not a JSON object: \(stdout)")
        }

        /// stdout parsed as a JSON array of objects.
        func jsonArray() throws -> [[String: Any]] {
            try #require(try json() as? [[String: Any]], "stdout is not a JSON array of objects: \(stdout)")
        }

        /// stdout as NDJSON: one object per non-empty line.
        func ndjson() throws -> [[String: Any]] {
            try lines.map { line in
                try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    "not a JSON object: \(line)")
            }
        }

        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// The package root (found from this file's path).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // EndToEndTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// The built binary.
    static let binary: URL = packageRoot.appendingPathComponent(".build/debug/iapctl")

    /// This CLI's temporary folder (the working directory of every run).
    let dir: URL
    /// The environment of every run; `run(env:)` adds to it. Remove `IAPCTL_DB` to test the default.
    var environment: [String: String]
    /// The test server and this CLI's database on it, on the MySQL run.
    let mysql: (server: TestMySQLServer, database: String)?
    /// The PostgreSQL test server and this CLI's database on it, on the PostgreSQL run.
    let postgres: (server: TestPostgresServer, database: String)?

    /// A fresh temporary folder and the default environment.
    init() throws {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("iapctl-e2e-\(UUID().uuidString.lowercased())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": dir.path,
            "USER": "e2e-user",
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "IAPCTL_DB": dir.appendingPathComponent("iapctl.db").path,
        ]
        switch E2EBackend.current {
        case .sqlite:
            mysql = nil
            postgres = nil
        case .postgres:
            guard let server = E2EBackend.postgresServer else {
                throw HarnessError(
                    "IAPCTL_E2E_BACKEND=postgres needs IAPCTL_TEST_POSTGRES_URL and IAPCTL_TEST_POSTGRES_PASSWORD "
                        + "(eval \"$(scripts/postgres-test-server start)\")")
            }
            let database = TestPostgresServer.freshDatabaseName()
            mysql = nil
            postgres = (server, database)
            environment["IAPCTL_DB"] = server.url(database: database)
            environment["PGPASSWORD"] = server.password
        case .mysql:
            postgres = nil
            guard let server = E2EBackend.server else {
                throw HarnessError(
                    "IAPCTL_E2E_BACKEND=mysql needs IAPCTL_TEST_MYSQL_URL and IAPCTL_TEST_MYSQL_PASSWORD "
                        + "(eval \"$(scripts/mariadb-test-server start)\")")
            }
            let database = TestMySQLServer.freshDatabaseName()
            mysql = (server, database)
            environment["IAPCTL_DB"] = server.url(database: database)
            environment["IAPCTL_DB_PASSWORD"] = server.password
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: dir)
        if let mysql { mysql.server.drop(mysql.database) }
        if let postgres { postgres.server.drop(postgres.database) }
    }

    /// The default database: the file `<dir>/iapctl.db` on SQLite, the database's URL on MySQL
    /// (as `iapctl` shows it: there is no password in it).
    var dbPath: String {
        mysql.map { $0.server.url(database: $0.database) } ?? postgres.map { $0.server.url(database: $0.database) }
            ?? dir.appendingPathComponent("iapctl.db").path
    }

    /// A path inside the temp folder.
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Writes `contents` to `name` inside the temp folder; returns its path.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    /// Whether `name` exists inside the temp folder (or `name` is an absolute path that exists).
    func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: name.hasPrefix("/") ? name : path(name))
    }

    /// A process started by ``start(_:executable:)``: its input stays open until the test closes it.
    struct Started {
        let process: Process
        let input: Pipe
        /// What it writes to stdout, read as it comes.
        let output: Pipe
        /// The file its stderr goes to.
        let errors: String
    }

    /// Starts `iapctl args…` (or `executable` with `args`) in this folder and environment without
    /// waiting: stdin is a pipe that stays open, stdout a pipe, stderr a file of its own.
    func start(_ args: [String], executable: URL = CLI.binary) throws -> Started {
        let process = Process()
        process.executableURL = executable
        process.arguments = args
        process.currentDirectoryURL = dir
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        let errors = path(".err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        return Started(process: process, input: input, output: output, errors: errors)
    }

    /// Runs `iapctl args…` with `stdin` (none: /dev/null) and extra environment; waits for it.
    @discardableResult
    /// `asUser` runs it as that uid (and gid) through setpriv(1), e.g. 65534 (nobody).
    func run(_ args: [String], stdin: String? = nil, env: [String: String] = [:], asUser: Int? = nil) throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw HarnessError("\(Self.binary.path) not found: run 'swift build' first")
        }
        let id = UUID().uuidString
        let outURL = dir.appendingPathComponent(".out-\(id)")
        let errURL = dir.appendingPathComponent(".err-\(id)")
        let inURL = dir.appendingPathComponent(".in-\(id)")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            for url in [outURL, errURL, inURL] { try? FileManager.default.removeItem(at: url) }
        }
        let process = Process()
        if let asUser {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(asUser)", "--regid=\(asUser)", "--clear-groups", Self.binary.path] + args
        } else {
            process.executableURL = Self.binary
            process.arguments = args
        }
        process.currentDirectoryURL = dir
        process.environment = environment.merging(env) { $1 }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        var inHandle: FileHandle?
        if let stdin {
            try Data(stdin.utf8).write(to: inURL)
            inHandle = try FileHandle(forReadingFrom: inURL)
            process.standardInput = inHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { try? inHandle?.close() }
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Runs and requires exit 0; returns the result.
    @discardableResult
    func ok(_ args: [String], stdin: String? = nil, env: [String: String] = [:]) throws -> Result {
        let result = try run(args, stdin: stdin, env: env)
        try #require(result.status == 0, "iapctl \(args.joined(separator: " ")) failed: \(result)")
        return result
    }

    /// The POSIX permission bits of a file in the temp folder (e.g. 0o600).
    func permissions(_ name: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: name.hasPrefix("/") ? name : path(name))
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}

/// A failure of the harness itself (binary missing).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
