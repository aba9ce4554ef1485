import IAPFoundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@testable import MySQLStore

@Suite("MySQLURL parsing")
struct MySQLURLTests {
    @Test func parsesUserHostPortAndDatabase() throws {
        let url = try MySQLURL(parsing: "mysql://iap@db.example.com:3307/iapctl")
        #expect(url.user == "iap")
        #expect(url.host == "db.example.com")
        #expect(url.port == 3307)
        #expect(url.database == "iapctl")
        #expect(url.socket == nil)
        #expect(url.sslMode == nil)
        #expect(url.description == "mysql://iap@db.example.com:3307/iapctl")
    }

    @Test func parsesSocketSSLAndOptionFile() throws {
        let url = try MySQLURL(
            parsing: "mysql://iap@localhost/shop_db?socket=/run/mysqld/mysqld.sock&ssl-mode=verify_identity"
                + "&ssl-ca=/etc/ssl/ca.pem&option-file=/home/me/.iapctl.cnf")
        #expect(url.host == "localhost")
        #expect(url.port == nil)
        #expect(url.socket == "/run/mysqld/mysqld.sock")
        #expect(url.sslMode == .verifyIdentity)
        #expect(url.sslCA == "/etc/ssl/ca.pem")
        #expect(url.optionFile == "/home/me/.iapctl.cnf")
        // The canonical form parses back to the same value.
        #expect(try MySQLURL(parsing: url.description) == url)
    }

    @Test func acceptsMariaDBSchemeIPv6AndPercentEscapes() throws {
        let url = try MySQLURL(parsing: "mariadb://ops%40team@[::1]:3306/db?socket=%2Ftmp%2Fm.sock")
        #expect(url.user == "ops@team")
        #expect(url.host == "::1")
        #expect(url.port == 3306)
        #expect(url.socket == "/tmp/m.sock")
        #expect(url.description.hasPrefix("mysql://ops%40team@[::1]:3306/db"))
    }

    @Test func userIsOptional() throws {
        let url = try MySQLURL(parsing: "mysql://localhost/iapctl?option-file=/etc/iapctl.cnf")
        #expect(url.user == nil)
        #expect(url.optionFile == "/etc/iapctl.cnf")
    }

    @Test(arguments: [
        "mysql://iap:hunter2secret@localhost/db",
        "mysql://iap:hunter2secret@db.example.com:3306/db?socket=/x",
        "mysql://iap@localhost/db?password=hunter2secret",
    ])
    func refusesAPasswordWithoutRepeatingIt(_ text: String) {
        do {
            _ = try MySQLURL(parsing: text)
            Issue.record("a URL with a password was accepted")
        } catch let error as MySQLURL.ParseError {
            #expect(error.containedPassword)
            #expect(error.message.contains("IAPCTL_DB_PASSWORD"))
            #expect(error.message.contains("option file"))
            #expect(!error.message.contains("hunter2secret"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test(arguments: [
        "postgres://u@h/db",  // wrong scheme
        "mysql://u@h",  // no database
        "mysql://u@h/",  // empty database
        "mysql://u@h:0/db",  // port out of range
        "mysql://u@h:99999/db",
        "mysql://u@h:abc/db",
        "mysql://u@/db",  // no host
        "mysql://u@h/db;DROP",  // database name characters
        "mysql://u@h/my-db",
        "mysql://u@h/db?unknown=1",  // unknown parameter
        "mysql://u@h/db?ssl-mode=SOMETIMES",
        "mysql://u@h/db?socket=/a&socket=/b",  // repeated
        "mysql://u@h/db?socket",  // no value
        "mysql://u@h/db?ssl-ca=/ca.pem",  // ssl-ca without a verifying mode
        "mysql://u%ZZ@h/db",  // bad escape
        "mysql://u@h/db?socket=%2Ftmp%ZZ",
        "mysql://u%FF@h/db",  // not UTF-8
        "mysql://u@h/d%FF",
        "mysql://u@h/db?socket=%FF",
        "mysql://u@[::1/db",  // unclosed bracket
        "mysql://u@h:3306:5/db",
        "mysql://u@h/db#frag",
        "iapctl.db",
    ])
    func refusesMalformedURLs(_ text: String) {
        #expect(throws: MySQLURL.ParseError.self) { try MySQLURL(parsing: text) }
    }

    /// The canonical form is written by URLComponents: every value that needs escaping comes back
    /// from it unchanged (a ':' in a user name included, which would otherwise read as a password).
    @Test(arguments: [
        MySQLURL(user: "ops@team", host: "::1", port: 3306, database: "db"),
        MySQLURL(user: "a:b/c?d#e f", host: "db.example.com", database: "shop$1"),
        MySQLURL(
            user: nil, database: "x", socket: "/run/my sql/a&b=c%d.sock", sslMode: .verifyCA, sslCA: "/etc/ca #1.pem",
            optionFile: "/home/é/.my.cnf"),
    ])
    func canonicalFormParsesBack(_ url: MySQLURL) throws {
        #expect(try MySQLURL(parsing: url.description) == url, "\(url.description)")
        #expect(!URLSecrets.carriesPassword(url.description), "\(url.description)")
    }

    /// An empty port is the default port (RFC 3986 allows `host:`); a port out of range names the port.
    @Test func emptyPortIsTheDefaultAndABadOneIsNamed() throws {
        #expect(try MySQLURL(parsing: "mysql://u@h:/db").port == nil)
        do {
            _ = try MySQLURL(parsing: "mysql://u@h:70000/db")
            Issue.record("accepted port 70000")
        } catch let error as MySQLURL.ParseError {
            #expect(error.message.contains("invalid port '70000'"), "\(error.message)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func redactsUserInfoForMessages() {
        #expect(MySQLURL.redacted("mysql://u:pw@h/db") == "mysql://***@h/db")
        #expect(MySQLURL.redacted("mysql://h/db") == "mysql://h/db")
    }

    /// Passwords holding `/`, `?`, `#`, `@` or `:` are recognised as passwords: refused, and no
    /// message quotes a piece of them (`invalid port 'Kx9+2ZpQ'` did).
    @Test(arguments: [
        "mysql://app:Kx9+2ZpQ/7vLm@db/shop", "mysql://app:Kx9?2ZpQ@db/shop", "mysql://app:Kx9#2ZpQ@db/shop",
        "mysql://app:Kx9@2ZpQ@db/shop", "mysql://app:12/34@db:3306/shop", "mysql://app:a=b/c@db/shop",
        "mysql://app:pw@db/shop?socket=/run/a@b",
    ])
    func passwordsWithURLSyntaxAreRecognised(_ text: String) {
        do {
            _ = try MySQLURL(parsing: text)
            Issue.record("accepted \(text)")
        } catch let error as MySQLURL.ParseError {
            #expect(error.containedPassword, "\(text): \(error.message)")
            for piece in ["Kx9", "2ZpQ", "7vLm", "12/34", "a=b"] where text.contains(piece) {
                #expect(!error.message.contains(piece), "\(error.message)")
            }
        } catch {
            Issue.record("\(error)")
        }
        let shown = MySQLURL.redacted(text)
        for piece in ["Kx9", "2ZpQ", "7vLm", ":12", "a=b", ":pw"] { #expect(!shown.contains(piece), "\(shown)") }
    }

    @Test(arguments: ["password", "PASSWORD", "pwd", "pass", "passwd", "db_password", "secret", "token"])
    func passwordLikeParametersAreRefusedAndRedacted(_ name: String) {
        let text = "mysql://app@db/shop?socket=/run/s&\(name)=S3cr3t/x?y&ssl-mode=REQUIRED"
        #expect(throws: MySQLURL.ParseError.self) { try MySQLURL(parsing: text) }
        let shown = MySQLURL.redacted(text)
        #expect(!shown.contains("S3cr3t"), "\(shown)")
        #expect(shown.contains("socket=/run/s") && shown.contains("ssl-mode=REQUIRED"), "\(shown)")
        #expect(shown.contains("\(name)=***"), "\(shown)")
    }

    @Test func aSocketPathWithAnAtSignIsNotUserInfo() throws {
        let url = try MySQLURL(parsing: "mysql://app@localhost/shop?socket=/run/mysqld@1/mysqld.sock")
        #expect(url.socket == "/run/mysqld@1/mysqld.sock")
        #expect(try MySQLURL(parsing: "mysql://localhost/shop?socket=/run/a@b").user == nil)
    }

    /// An authentication failure is described structurally, never by editing the server's text:
    /// no `***` where the password equals the user name, nothing mangled by a one-letter password.
    @Test func authenticationFailuresAreDescribedNotEdited() {
        for secret in ["iapctl", "a", "pa55word"] {
            let error = MySQLErrorMapping.storeError(
                code: 1045, sqlState: "28000",
                message: "Access denied for user 'iapctl'@'localhost' (using password: YES) \(secret)",
                context: "cannot connect to mysql://iapctl@localhost/shop")
            guard case .accessDenied(let message) = error else {
                Issue.record("1045 should be accessDenied, got \(error)")
                return
            }
            #expect(!message.contains("***"))
            #expect(message.hasPrefix("cannot connect to mysql://iapctl@localhost/shop: access denied (MySQL error 1045"), "\(message)")
            #expect(!message.contains("pa55word") && !message.contains("using password"))
        }
        // Other server texts are kept verbatim.
        let other = MySQLErrorMapping.storeError(
            code: 1142, sqlState: "42000", message: "INSERT command denied to user 'a'@'localhost' for table 'orders'",
            context: "statement failed")
        #expect(other.description.contains("INSERT command denied to user 'a'@'localhost' for table 'orders'"))
    }

    /// The retry policy reads the kind of a busy failure from its reason, never from the message.
    @Test(arguments: [
        (UInt32(1205), BusyReason.lockWaitTimeout), (1213, .deadlock), (1040, .tooManyConnections),
    ])
    func busyFailuresSayWhy(_ code: UInt32, _ expected: BusyReason) {
        let error = MySQLErrorMapping.storeError(code: code, sqlState: "", message: "m", context: "c")
        guard case .busy(_, let reason) = error else {
            Issue.record("MySQL error \(code) is not busy: \(error)")
            return
        }
        #expect(reason == expected)
    }

    @Test(arguments: [
        (UInt32(1062), "conflict"), (1586, "conflict"), (1205, "busy"), (1213, "busy"), (2002, "unavailable"),
        (2003, "unavailable"), (2006, "unavailable"), (2013, "unavailable"), (1045, "accessDenied"),
        (1044, "accessDenied"), (1142, "accessDenied"), (1049, "notFound"), (1146, "schemaMismatch"),
        (1406, "failure"), (1114, "ioFailure"), (1021, "ioFailure"),
    ])
    func mapsErrorNumbers(_ code: UInt32, _ expected: String) {
        let error = MySQLErrorMapping.storeError(code: code, sqlState: "", message: "m", context: "c")
        let kind: String =
            switch error {
            case .conflict: "conflict"
            case .busy: "busy"
            case .unavailable: "unavailable"
            case .libraryUnavailable: "libraryUnavailable"
            case .ioFailure: "ioFailure"
            case .accessDenied: "accessDenied"
            case .misconfigured: "misconfigured"
            case .notFound: "notFound"
            case .schemaMismatch: "schemaMismatch"
            case .failure: "failure"
            case .corrupt: "corrupt"
            }
        #expect(kind == expected)
        #expect(error.description.contains("MySQL error \(code)"))
    }
}
