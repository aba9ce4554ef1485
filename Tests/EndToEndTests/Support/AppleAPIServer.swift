import Foundation
import Testing

/// The loopback stand-in for Apple's App Store Server API (`Fixtures/apple-api/server.py`, Python's
/// standard library + the openssl command), started for one test and stopped with it.
///
/// Made at test time: the TLS certificate (trusted only through `IAPCTL_APPLE_API_CA_FILE` of this test's
/// runs) and the In-App Purchase key (`AuthKey_<id>.p8`, mode 0600) whose public half the server checks
/// every JWT's signature with. `routes` say what it answers; `requests()` is what it was sent.
final class AppleAPIServer {
    static let keyId = "2X9R4HXF34"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let fixtures = CLI.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/apple-api")

    let dir: URL
    let port: Int
    let keyPath: String
    private let process: Process

    /// One answer: a status, a JSON body (or a fixture file of Apple's), an optional Retry-After.
    struct Response {
        var status: Int
        var json: Any?
        var file: String?
        var retryAfterMs: Int?
        var delayMs: Int?
        /// Hostile answers (see server.py): the member set to `s<n>` on the n-th answer, padding bytes, chunked.
        var sequence: String?
        var padBytes: Int?
        var chunked = false

        static func ok(_ json: Any) -> Response { Response(status: 200, json: json) }
        static func apple(_ status: Int, _ fixture: String, retryAfterMs: Int? = nil) -> Response {
            Response(status: status, file: "responses/\(fixture).json", retryAfterMs: retryAfterMs)
        }
        static var empty: Response { Response(status: 200) }

        var object: [String: Any] {
            var o: [String: Any] = ["status": status]
            if let json { o["json"] = json }
            if let file { o["file"] = AppleAPIServer.fixtures.appendingPathComponent(file).path }
            if let retryAfterMs { o["retryAfterMs"] = retryAfterMs }
            if let delayMs { o["delayMs"] = delayMs }
            if let sequence { o["sequence"] = sequence }
            if let padBytes { o["padBytes"] = padBytes }
            if chunked { o["chunked"] = true }
            return o
        }
    }

    /// `bundleId`: the app the server expects in the token's bid.
    init(cli: CLI, bundleId: String = AppleWorld.bundleId) throws {
        dir = cli.dir.appendingPathComponent("apple-api-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        keyPath = dir.appendingPathComponent("AuthKey_\(Self.keyId).p8").path
        try Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        try Self.openssl(["pkey", "-in", keyPath, "-pubout", "-out", dir.appendingPathComponent("key.pub.pem").path])
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-keyout", dir.appendingPathComponent("tls.key").path, "-out", dir.appendingPathComponent("tls.crt").path,
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        let config: [String: Any] = ["keyId": Self.keyId, "issuerId": Self.issuerId, "bundleId": bundleId]
        try JSONSerialization.data(withJSONObject: config).write(to: dir.appendingPathComponent("config.json"))
        try Data("[]".utf8).write(to: dir.appendingPathComponent("routes.json"))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.fixtures.appendingPathComponent("server.py").path, dir.path, "120"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let portFile = dir.appendingPathComponent("port")
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: portFile.path) {
            guard Date() < deadline, process.isRunning else { throw HarnessError("the Apple API test server did not start") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        port = Int(try String(contentsOf: portFile, encoding: .utf8)) ?? 0
    }

    deinit {
        // SIGKILL: the test runner's children may inherit an ignored SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What this server answers: (env "production"/"sandbox"/"*", method, Apple's path, query subset, responses).
    func routes(_ routes: [(env: String, method: String, path: String, query: [String: Any], responses: [Response])]) throws {
        let list = routes.map { route -> [String: Any] in
            var o: [String: Any] = [
                "env": route.env, "method": route.method, "path": route.path,
                "responses": route.responses.map(\.object),
            ]
            if !route.query.isEmpty { o["query"] = route.query }
            return o
        }
        // A new file each time (the server reloads when the modification time changes).
        let tmp = dir.appendingPathComponent("routes.tmp")
        try JSONSerialization.data(withJSONObject: list).write(to: tmp)
        Thread.sleep(forTimeInterval: 0.01)
        guard rename(tmp.path, dir.appendingPathComponent("routes.json").path) == 0 else {
            throw HarnessError("cannot replace routes.json")
        }
    }

    /// What Apple knows of each transaction the consumption endpoint is sent (its signed `type`:
    /// `Auto-Renewable Subscription`, `Consumable`, …): the server checks the body by it, as Apple does.
    func products(_ types: [String: String]) throws {
        let tmp = dir.appendingPathComponent("products.tmp")
        try JSONSerialization.data(withJSONObject: types).write(to: tmp)
        guard rename(tmp.path, dir.appendingPathComponent("products.json").path) == 0 else {
            throw HarnessError("cannot replace products.json")
        }
    }

    /// The requests it received, in order (env, method, path, query, body, claims, tokenProblem).
    func requests() throws -> [[String: Any]] {
        let url = dir.appendingPathComponent("requests.ndjson")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The environment an `iapctl apple` run needs to talk to this server with this key.
    var environment: [String: String] {
        [
            "IAPCTL_APPLE_API_BASE_URL": "https://127.0.0.1:\(port)/production",
            "IAPCTL_APPLE_API_SANDBOX_BASE_URL": "https://127.0.0.1:\(port)/sandbox",
            "IAPCTL_APPLE_API_CA_FILE": dir.appendingPathComponent("tls.crt").path,
            "IAPCTL_APPLE_API_BACKOFF_MS": "20",
            "IAPCTL_APPLE_KEY_FILE": keyPath,
            "IAPCTL_APPLE_KEY_ID": Self.keyId,
            "IAPCTL_APPLE_ISSUER_ID": Self.issuerId,
            "IAPCTL_BUNDLE_ID": AppleWorld.bundleId,
        ]
    }

    static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("openssl \(arguments[0]) failed") }
    }
}
