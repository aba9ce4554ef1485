import FoundationEssentials
import IAPFoundation

/// A parsed `mysql://USER@HOST[:PORT]/NAME[?socket=PATH&ssl-mode=MODE&ssl-ca=PATH&option-file=PATH]` URL.
///
/// A password is never part of the URL (argv is visible to every user of the machine): it comes
/// from `IAPCTL_DB_PASSWORD` or an option file. `mariadb://` is accepted as a synonym.
public struct MySQLURL: Sendable, Equatable, CustomStringConvertible {
    /// How the connection uses TLS (MySQL's `--ssl-mode` names).
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS options are set (Connector/C 3.3 then connects without TLS).
        case disabled = "DISABLED"
        /// The library default: TLS when both sides are configured for it.
        case preferred = "PREFERRED"
        /// TLS is required; the server certificate is not verified.
        case required = "REQUIRED"
        /// TLS is required and the server certificate is verified (CA and host name).
        case verifyCA = "VERIFY_CA"
        /// TLS is required and the server certificate is verified (CA and host name).
        case verifyIdentity = "VERIFY_IDENTITY"
    }

    /// Why a URL was refused. The message never repeats a password.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// What was wrong, for the user.
        public let message: String
        /// True when the URL carried a password (the caller may want a specific hint).
        public let containedPassword: Bool

        public var description: String { message }
    }

    /// User name; `nil` leaves it to the option file (or the login name).
    public var user: String?
    /// Host name or address; `localhost` with a `socket` uses the Unix socket.
    public var host: String
    /// TCP port; `nil` for the default (3306).
    public var port: Int?
    /// Database (schema) name.
    public var database: String
    /// Unix socket path.
    public var socket: String?
    /// TLS mode; `nil` for the library default.
    public var sslMode: SSLMode?
    /// CA certificate file for `VERIFY_CA` / `VERIFY_IDENTITY`.
    public var sslCA: String?
    /// An option file (`[client]` group) to read user, password and other settings from.
    public var optionFile: String?

    /// Makes a URL from its parts.
    public init(
        user: String?, host: String = "localhost", port: Int? = nil, database: String, socket: String? = nil,
        sslMode: SSLMode? = nil, sslCA: String? = nil, optionFile: String? = nil
    ) {
        self.user = user
        self.host = host
        self.port = port
        self.database = database
        self.socket = socket
        self.sslMode = sslMode
        self.sslCA = sslCA
        self.optionFile = optionFile
    }

    /// Parses `mysql://USER@HOST[:PORT]/NAME[?socket=PATH&ssl-mode=…&ssl-ca=PATH&option-file=PATH]`.
    ///
    /// FoundationEssentials' `URLComponents` splits and %-decodes the URL (strictly: an invalid
    /// escape or character refuses the whole URL); what is checked here is what a MySQL URL may
    /// hold. Throws ``ParseError`` for anything else, including a URL that carries a password.
    public init(parsing text: String) throws {
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw Self.error("not a MySQL URL (expected mysql://USER@HOST[:PORT]/NAME): \(Self.redacted(text))")
        }
        // A password is recognised whatever it contains (`/`, `?`, `#`, `@`, `:`), before anything
        // else is parsed: no message may quote a part of it (say as a port or a fragment).
        if URLSecrets.carriesPassword(text) { throw Self.passwordRefused }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "mysql" || scheme == "mariadb" else {
            throw Self.error("unsupported URL scheme '\(scheme)' (expected mysql://USER@HOST[:PORT]/NAME)")
        }
        // A host list (`h1:3306,h2:3306`) is not a URL authority: say why it is refused before parsing.
        let authority = text[schemeEnd.upperBound...].prefix { !"/?#".contains($0) }
        try Self.refuseSeveralHosts(String(authority.split(separator: "@").last ?? ""))
        guard let url = URLComponents(string: text, encodingInvalidCharacters: false) else {
            throw Self.error(
                "not a valid MySQL URL: \(Self.redacted(text)) (expected mysql://USER@HOST[:PORT]/NAME with a "
                    + "port of digits and any other character in a name %-escaped, like %40 for @)")
        }
        guard url.fragment == nil else { throw Self.error("a MySQL URL has no #fragment") }
        guard url.percentEncodedPath.hasPrefix("/") else {
            throw Self.error("the MySQL URL names no database (expected mysql://USER@HOST[:PORT]/NAME)")
        }

        var user: String?
        if url.percentEncodedUser != nil {
            guard let decoded = url.user else { throw Self.error("the user name of the MySQL URL is not valid UTF-8") }
            guard !decoded.isEmpty else { throw Self.error("empty user name in the MySQL URL") }
            user = decoded
        }

        guard let bracketed = url.host else { throw Self.error("the host of the MySQL URL is not valid UTF-8") }
        // An IPv6 literal keeps its brackets in URLComponents' host.
        let host = bracketed.hasPrefix("[") && bracketed.hasSuffix("]") ? String(bracketed.dropFirst().dropLast()) : bracketed
        guard !host.isEmpty else { throw Self.error("the MySQL URL names no host (use localhost for a socket)") }
        try Self.refuseSeveralHosts(host)
        if let port = url.port, !(1...65535).contains(port) {
            throw Self.error("invalid port '\(port)' in the MySQL URL (expected 1-65535)")
        }

        let database = String(url.path.dropFirst())
        guard !database.isEmpty || url.percentEncodedPath.count <= 1 else {
            throw Self.error("the database name of the MySQL URL is not valid UTF-8")
        }
        try Self.validateDatabaseName(database)

        self.init(user: user, host: host, port: url.port, database: database)
        if let encoded = url.percentEncodedQueryItems, let decoded = url.queryItems {
            try applyQuery(zip(encoded, decoded))
        }
        if sslCA != nil, sslMode == nil || sslMode == .disabled {
            throw Self.error("ssl-ca needs ssl-mode=VERIFY_CA or VERIFY_IDENTITY")
        }
    }

    /// The URL in its canonical form (it never contains a password), written by `URLComponents`.
    public var description: String {
        var url = URLComponents()
        url.scheme = "mysql"
        url.user = user
        // `URLComponents` leaves ':' in a user name, where it would read as a password.
        url.percentEncodedUser = url.percentEncodedUser?.replacing(":", with: "%3A")
        url.host = host.contains(":") ? "[\(host)]" : host
        url.port = port
        url.path = "/" + database
        var query: [URLQueryItem] = []
        if let socket { query.append(URLQueryItem(name: "socket", value: socket)) }
        if let sslMode { query.append(URLQueryItem(name: "ssl-mode", value: sslMode.rawValue)) }
        if let sslCA { query.append(URLQueryItem(name: "ssl-ca", value: sslCA)) }
        if let optionFile { query.append(URLQueryItem(name: "option-file", value: optionFile)) }
        if !query.isEmpty { url.queryItems = query }
        return url.string ?? "mysql://\(host)/\(database)"
    }

    // MARK: parsing helpers

    /// The query's parameters, each as written (%-escaped) and as decoded (a nil value there: not UTF-8).
    private mutating func applyQuery(_ items: some Sequence<(URLQueryItem, URLQueryItem)>) throws {
        var seen: Set<String> = []
        for (written, item) in items where !(written.name.isEmpty && written.value == nil) {
            guard written.value != nil else {
                throw Self.error("URL parameter '\(written.name)' has no value (expected name=value)")
            }
            guard let value = item.value else { throw Self.error("URL parameter '\(written.name)' is not valid UTF-8") }
            let name = item.name.lowercased().replacing("_", with: "-")
            guard seen.insert(name).inserted else { throw Self.error("URL parameter '\(name)' given twice") }
            guard !value.isEmpty else { throw Self.error("URL parameter '\(name)' is empty") }
            switch name {
            case "socket":
                socket = value
            case "ssl-mode", "sslmode":
                guard let mode = SSLMode(rawValue: value.uppercased().replacing("-", with: "_")) else {
                    let names = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Self.error("unknown ssl-mode '\(value)' (expected one of \(names))")
                }
                sslMode = mode
            case "ssl-ca":
                sslCA = value
            case "option-file", "defaults-file":
                optionFile = value
            case _ where URLSecrets.isSecretParameter(name):
                throw Self.passwordRefused
            default:
                throw Self.error(
                    "unknown URL parameter '\(name)' (known: socket, ssl-mode, ssl-ca, option-file)")
            }
        }
    }

    /// The client library would take a bracketed list and try each host itself, with no way to tell
    /// which one a unit's transaction ran on: several hosts are refused, not half supported.
    private static func refuseSeveralHosts(_ host: String) throws {
        guard host.contains(",") else { return }
        throw error(
            "the MySQL URL names several hosts (\(host)): iapctl connects to one server; for a cluster "
                + "name one node, or a proxy or virtual address in front of the nodes (MaxScale, HAProxy, "
                + "keepalived). A lost node stops the run with exit 69; running it again on another node is safe")
    }

    private static func validateDatabaseName(_ name: String) throws {
        guard !name.isEmpty else {
            throw error("the MySQL URL names no database (expected mysql://USER@HOST[:PORT]/NAME)")
        }
        guard name.utf8.count <= 64 else { throw error("database name '\(name)' is longer than 64 bytes") }
        // Letters, digits, _ and $: the name is then safe to quote as an identifier in CREATE DATABASE.
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "$"
        }
        guard allowed else {
            throw error("database name '\(name)' may contain only letters, digits, '_' and '$'")
        }
    }

    // MARK: secrets

    static let passwordRefused = ParseError(
        message: "refusing a password in the database URL (command lines are visible to other users); "
            + "set IAPCTL_DB_PASSWORD or use an option file (?option-file=PATH or ~/.my.cnf)",
        containedPassword: true)

    /// `text` with its password and secret parameters masked: ``URLSecrets/redacted(_:)``.
    public static func redacted(_ text: String) -> String { URLSecrets.redacted(text) }

    private static func error(_ message: String) -> ParseError {
        ParseError(message: message, containedPassword: false)
    }
}
