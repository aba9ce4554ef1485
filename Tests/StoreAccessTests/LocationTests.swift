import MySQLStore
import PostgresStore
import StoreAccess
import Testing

@Suite("StoreAccess: the --db location and the timeout")
struct LocationTests {
    @Test(arguments: [
        ("iapctl.db", "iapctl.db"), ("/var/lib/iapctl/shop.db", "/var/lib/iapctl/shop.db"),
        ("sqlite:other.db", "other.db"), ("sqlite:///abs/other.db", "/abs/other.db"),
        ("sqlite://rel/other.db", "rel/other.db"), ("c:weird.db", "c:weird.db"), (":memory:", ":memory:"),
    ])
    func pathsAreSQLite(_ text: String, _ path: String) throws {
        let location = try DatabaseLocation(parsing: text)
        #expect(location == .sqlite(path: path))
        #expect(!location.isMySQL)
        #expect(!DatabaseLocation.namesServer(text))
    }

    @Test(arguments: ["sqlite:", "sqlite://"])
    func anEmptySQLitePathIsRefused(_ text: String) {
        #expect(throws: DatabaseLocation.ParseError.emptySQLitePath) { try DatabaseLocation(parsing: text) }
    }

    @Test(arguments: [
        ("pgsql://app@db/shop", "pgsql"), ("MYSQL://app@db/shop", "MYSQL"), ("file:///tmp/x.db", "file"),
    ])
    func otherSchemesAreRefused(_ text: String, _ scheme: String) {
        #expect(throws: DatabaseLocation.ParseError.unsupportedScheme(scheme)) { try DatabaseLocation(parsing: text) }
    }

    /// libpq reads the URI; iapctl keeps it as given (sockets by folder, several hosts, TLS).
    @Test(arguments: [
        ("postgres://app@db/shop", "shop"), ("postgresql://app@/shop?host=/run/postgresql", "shop"),
        ("postgres://app@pg1:5432,pg2:5433/shop?target_session_attrs=read-write", "shop"),
        ("postgres://app@db.example/my%20shop?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem", "my shop"),
    ])
    func postgresURLsAreHandedToLibpq(_ text: String, _ database: String) throws {
        let location = try DatabaseLocation(parsing: text)
        guard case .postgres(let url) = location else {
            Issue.record("expected a PostgreSQL location, got \(location)")
            return
        }
        #expect(url.text == text)
        #expect(url.database == database)
        #expect(location.isServer && !location.isMySQL)
        #expect(DatabaseLocation.namesServer(text))
    }

    @Test(arguments: [
        "postgres://app:Kx9+2ZpQ@db/shop", "postgresql://app@db/shop?password=Kx9+2ZpQ",
        "postgres://app:Kx9+2ZpQ@pg1,pg2/shop?target_session_attrs=read-write",
    ])
    func aPasswordInAPostgresURLIsRefusedWithoutRepeatingIt(_ text: String) throws {
        let error = try #require(throws: DatabaseLocation.ParseError.self) { try DatabaseLocation(parsing: text) }
        guard case .invalidPostgresURL(let message, let containedPassword) = error else {
            Issue.record("expected invalidPostgresURL, got \(error)")
            return
        }
        #expect(containedPassword)
        #expect(!message.contains("Kx9"))
    }

    @Test(arguments: [
        ("postgres://app@db/", "name the database"), ("postgres://app@db/shop?nosuchparameter=1", "libpq cannot read"),
    ])
    func aPostgresURLLibpqCannotUseIsRefused(_ text: String, _ why: String) throws {
        let error = try #require(throws: DatabaseLocation.ParseError.self) { try DatabaseLocation(parsing: text) }
        guard case .invalidPostgresURL(let message, false) = error else {
            Issue.record("expected invalidPostgresURL, got \(error)")
            return
        }
        #expect(message.contains(why), "\(message)")
    }

    @Test func mysqlURLsAreParsed() throws {
        let plain = try DatabaseLocation(parsing: "mysql://app@localhost/shop")
        #expect(plain == .mysql(url: MySQLURL(user: "app", host: "localhost", database: "shop")))
        #expect(plain.isMySQL)

        let port = try DatabaseLocation(parsing: "mariadb://app@db.example:3307/shop")
        #expect(port == .mysql(url: MySQLURL(user: "app", host: "db.example", port: 3307, database: "shop")))

        let socket = try DatabaseLocation(parsing: "mysql://app@localhost/shop?socket=/run/mysqld/mysqld.sock")
        #expect(
            socket == .mysql(url: MySQLURL(user: "app", host: "localhost", database: "shop", socket: "/run/mysqld/mysqld.sock")))

        let noUser = try DatabaseLocation(parsing: "mysql://localhost/shop")
        #expect(noUser == .mysql(url: MySQLURL(user: nil, host: "localhost", database: "shop")))
    }

    @Test(arguments: [
        "mysql://app:Kx9+2ZpQ@localhost/shop", "mysql://app:Kx9+2ZpQ/7vLm@db/shop",
        "mysql://app@localhost/shop?password=Kx9+2ZpQ", "mariadb://app:Kx9+2ZpQ@db.example:3306/shop?socket=/x",
    ])
    func aPasswordInTheURLIsRefusedWithoutRepeatingIt(_ text: String) throws {
        let error = try #require(throws: DatabaseLocation.ParseError.self) { try DatabaseLocation(parsing: text) }
        guard case .invalidMySQLURL(let message, let containedPassword) = error else {
            Issue.record("expected invalidMySQLURL, got \(error)")
            return
        }
        #expect(containedPassword)
        #expect(!message.contains("Kx9"))
        #expect(DatabaseLocation.namesServer(text))
    }

    @Test(arguments: [
        ("mysql://app@localhost:99999/shop", "invalid port"), ("mysql://app@localhost", "names no database"),
        ("mysql://app@/shop", "names no host"), ("mysql://app@localhost/shop?colour=blue", "unknown URL parameter"),
        ("mysql://app@localhost/sh-op", "database name"),
    ])
    func badMySQLURLsSayWhy(_ text: String, _ words: String) throws {
        let error = try #require(throws: DatabaseLocation.ParseError.self) { try DatabaseLocation(parsing: text) }
        guard case .invalidMySQLURL(let message, let containedPassword) = error else {
            Issue.record("expected invalidMySQLURL, got \(error)")
            return
        }
        #expect(!containedPassword)
        #expect(message.contains(words), "\(message)")
    }

    @Test func theTimeoutIsWholeSecondsInRange() throws {
        #expect(try DatabaseTimeout.parse(nil) == nil)
        #expect(try DatabaseTimeout.parse("") == nil)
        #expect(try DatabaseTimeout.parse("1")?.seconds == 1)
        #expect(try DatabaseTimeout.parse("30")?.seconds == 30)
        #expect(try DatabaseTimeout.parse("86400")?.seconds == 86_400)
        for bad in ["0", "86401", "-5", "2.5", "abc", " 30", "99999999999"] {
            #expect(throws: DatabaseTimeout.ParseError(text: bad)) { try DatabaseTimeout.parse(bad) }
        }
    }
}
