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
    /// Throws ``ParseError`` for anything else, including a URL that carries a password.
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
        var rest = Substring(text[schemeEnd.upperBound...])
        var queryText: Substring?
        if let q = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        guard !rest.contains("#") else { throw Self.error("a MySQL URL has no #fragment") }
        guard let slash = rest.firstIndex(of: "/") else {
            throw Self.error("the MySQL URL names no database (expected mysql://USER@HOST[:PORT]/NAME)")
        }
        let authority = rest[..<slash]
        let path = rest[rest.index(after: slash)...]

        var hostPort = authority
        var user: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            if userInfo.contains(":") { throw Self.passwordRefused }
            let decoded = try Self.percentDecoded(userInfo, what: "user name")
            guard !decoded.isEmpty else { throw Self.error("empty user name in the MySQL URL") }
            user = decoded
        }

        let (host, port) = try Self.hostAndPort(hostPort)
        let database = try Self.percentDecoded(path, what: "database name")
        try Self.validateDatabaseName(database)

        self.init(user: user, host: host, port: port, database: database)
        if let queryText, !queryText.isEmpty {
            try applyQuery(queryText)
        }
        if sslCA != nil, sslMode == nil || sslMode == .disabled {
            throw Self.error("ssl-ca needs ssl-mode=VERIFY_CA or VERIFY_IDENTITY")
        }
    }

    /// The URL in its canonical form (it never contains a password).
    public var description: String {
        var text = "mysql://"
        if let user { text += Self.percentEncoded(user) + "@" }
        text += host.contains(":") ? "[\(host)]" : host
        if let port { text += ":\(port)" }
        text += "/" + Self.percentEncoded(database)
        var query: [String] = []
        if let socket { query.append("socket=" + Self.percentEncoded(socket, keepSlash: true)) }
        if let sslMode { query.append("ssl-mode=" + sslMode.rawValue) }
        if let sslCA { query.append("ssl-ca=" + Self.percentEncoded(sslCA, keepSlash: true)) }
        if let optionFile { query.append("option-file=" + Self.percentEncoded(optionFile, keepSlash: true)) }
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    // MARK: parsing helpers

    private mutating func applyQuery(_ query: Substring) throws {
        var seen: Set<String> = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let eq = pair.firstIndex(of: "=") else {
                throw Self.error("URL parameter '\(pair)' has no value (expected name=value)")
            }
            let name = String(pair[..<eq]).lowercased().replacing("_", with: "-")
            let value = try Self.percentDecoded(pair[pair.index(after: eq)...], what: "parameter \(name)")
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

    private static func hostAndPort(_ text: Substring) throws -> (String, Int?) {
        try refuseSeveralHosts(String(text))
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw error("unclosed '[' in the MySQL URL host") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw error("unexpected text after the host in the MySQL URL") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        let decodedHost = try percentDecoded(host, what: "host")
        guard !decodedHost.isEmpty else { throw error("the MySQL URL names no host (use localhost for a socket)") }
        try refuseSeveralHosts(decodedHost)
        guard let portText else { return (decodedHost, nil) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw error("invalid port '\(portText)' in the MySQL URL (expected 1-65535)")
        }
        return (decodedHost, port)
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

    private static func percentDecoded(_ text: Substring, what: String) throws -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw error("invalid %-escape in the \(what) of the MySQL URL")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw error("the \(what) of the MySQL URL is not valid UTF-8")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func percentEncoded(_ text: String, keepSlash: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~$".contains(c) || (keepSlash && c == "/")) {
                out.append(c)
            } else {
                out += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return out
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
