import Foundation
import JWSForge
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Hostile input to `iapctl notify`: every item gets a clear per-line error and nothing changes.
@Suite("hostile input: refused per line, nothing changed")
struct HostileInputTests {
    let token = "7a0c2b1e-5d4f-4e3a-9b8c-1d2e3f4a5b6c"
    let t0 = AppleWorld.t0

    /// A database with one pending order (so an accepted item would visibly change it).
    func setUp() throws -> (CLI, AppleWorld) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(token, "alice")])
        return (cli, world)
    }

    /// Orders, contracts and db status counts except the ledger (which logs rejected deliveries).
    func state(_ world: AppleWorld) throws -> [String] {
        var status = try world.cli.ok(["db", "status", "-o", "json"]).jsonObject()
        status["ledger"] = nil
        return try world.tables(maskGeneratedNumbers: [token]) + status.keys.sorted().map { "\($0)=\(status[$0]!)" }
    }

    /// Runs `notify -o ndjson FILE` over raw bytes; the per-line results.
    func notify(_ cli: CLI, _ world: AppleWorld, bytes: [UInt8], extra: [String] = []) throws -> (CLI.Result, [[String: Any]]) {
        let path = cli.path("input-\(UUID().uuidString).bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try cli.run(["notify", "-o", "ndjson", path] + world.trust + extra)
        return (result, try result.ndjson())
    }

    func valid(_ world: AppleWorld, id: String = "5000") throws -> String {
        try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction(id, original: id, token: token))
    }

    @Test func overlongLinesAreRefusedPerLineAndMemoryStaysBounded() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        // 1 MiB + 1 bytes (just over the limit), a 24 MiB line, then a good notification.
        var input = [UInt8](repeating: UInt8(ascii: "A"), count: (1 << 20) + 1) + [10]
        input += [UInt8](repeating: UInt8(ascii: "e"), count: 24 << 20) + [10]
        input += Array(try valid(world).utf8) + [10]
        let path = cli.path("big.ndjson")
        try Data(input).write(to: URL(fileURLWithPath: path))
        let args = ["notify", "-o", "ndjson", path] + world.trust
        let result = try cli.run(args)
        let items = try result.ndjson()
        #expect(items.count == 3, "\(result.stderr)")
        #expect(items.map { $0["line"] as? Int } == [1, 2, 3])
        #expect(
            items.prefix(2).allSatisfy { $0["verdict"] as? String == "rejected" && ($0["error"] as? String ?? "").contains("longer than") })
        #expect(items.last?["verdict"] as? String == "applied")
        #expect(try state(world) != before)  // the good line after the long ones was applied

        // Memory: with GNU time, the run's peak RSS stays far below the 24 MiB line.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            print("memory bound not measured: /usr/bin/time is not installed")
            return
        }
        let small = cli.path("small.ndjson")
        try cli.write("small.ndjson", try valid(world, id: "5001") + "\n")
        let baseline = try #require(try Self.peakRSS(cli, ["notify", small] + world.trust))
        let measured = try #require(try Self.peakRSS(cli, args))
        #expect(measured < baseline + 12 * 1024, "peak RSS \(measured) KB for a 24 MiB line (baseline \(baseline) KB)")
    }

    /// Peak RSS in KB of `iapctl args…` measured by GNU time.
    static func peakRSS(_ cli: CLI, _ args: [String]) throws -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "maxrss=%M", CLI.binary.path] + args
        process.currentDirectoryURL = cli.dir
        process.environment = cli.environment
        let errors = cli.path("time-\(UUID().uuidString).err")
        FileManager.default.createFile(atPath: errors, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        defer { try? handle.close() }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOfFile: errors, encoding: .utf8)
        return text.split(separator: "\n").last { $0.hasPrefix("maxrss=") }.flatMap { Int($0.dropFirst(7)) }
    }

    @Test func invalidUTF8AndNULBytesAreRefused() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        let good = try valid(world)
        let lines: [[UInt8]] = [
            Array(#"{"signedPayload":""#.utf8) + Array(good.utf8) + Array(#"","note":""#.utf8) + [0xFF, 0xFE] + Array("\"}".utf8),
            Array(good.utf8) + [0xC3],  // truncated sequence after a good JWS
            Array(good.utf8.prefix(40)) + [0] + Array(good.utf8.dropFirst(40)),  // NUL inside the JWS
            Array(#"{"signedPayload":""#.utf8) + Array(good.utf8) + Array("\u{0}\"}".utf8),  // NUL in a JSON string
            [0xED, 0xA0, 0x80] + Array(good.utf8),  // encoded surrogate
        ]
        let (result, items) = try notify(cli, world, bytes: Array(lines.joined(separator: [10])))
        #expect(items.count == lines.count, "\(result)")
        for item in items {
            #expect(item["verdict"] as? String == "rejected", "line \(item["line"] ?? "?") was not refused: \(item)")
            #expect(!(item["error"] as? String ?? "").isEmpty)
        }
        #expect(result.status == 1, "\(result)")  // a batch with failed items
        #expect(try state(world) == before)
    }

    @Test func deepAndEnormousJSONIsRefused() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let lines = [
            #"{"signedPayload":"# + deep + "}",
            #"{"notificationHistory":"# + deep + "}",
            #"{"x":"# + String(repeating: #"{"a":"#, count: 5000) + "1" + String(repeating: "}", count: 5000) + "}",
            #"{"signedPayload":""# + String(repeating: "A", count: 1_000_000) + "\"}",  // < 1 MiB line, enormous JWS
            #"{"signedTransactions":["# + Array(repeating: "\"a.b.c\"", count: 60_000).joined(separator: ",") + "]}",
            "[" + String(repeating: "1,", count: 200_000) + "1]",
        ]
        let (result, items) = try notify(cli, world, bytes: Array(lines.joined(separator: "\n").utf8))
        #expect(result.status == 1, "\(result.stderr.prefix(2000))")
        #expect(Set(items.map { $0["verdict"] as? String }) == ["rejected"])
        #expect(Set(items.compactMap { $0["line"] as? Int }) == Set(1...lines.count))
        #expect(try state(world) == before)
        // The deep one says why.
        #expect((items.first?["error"] as? String ?? "").contains("nesting"), "\(items.first ?? [:])")
    }

    /// Signs `json` (a transaction payload) into a notification of this world.
    func notification(_ world: AppleWorld, transactionJSON: String, uuid: String = UUID().uuidString.lowercased()) throws -> String {
        try world.builder.notification(
            type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid, signedDate: t0, transactionJSON: transactionJSON,
            renewalJSON: world.renewal("5000", signed: t0).json)
    }

    /// A wrong-typed replacement for a JSON value.
    static func wrongType(_ value: Any) -> Any {
        switch value {
        case is String: return 7
        case is NSNumber: return "7"
        case is [Any]: return ["x": 1]
        case is [String: Any]: return [1, 2]
        default: return ["wrong"]
        }
    }

    static func json(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func wrongJSONTypeForEveryFieldIsRefusedNamingTheField() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        let tx = world.transaction("5000", original: "5000", token: token)
        let txObject = try #require(try JSONSerialization.jsonObject(with: Data(tx.json.utf8)) as? [String: Any])
        var lines: [String] = []
        var fields: [String] = []
        for key in txObject.keys.sorted() {
            var mutated = txObject
            mutated[key] = Self.wrongType(txObject[key]!)
            lines.append(try notification(world, transactionJSON: try Self.json(mutated)))
            fields.append(key)
        }
        // The notification's own fields and data fields.
        let good = try notification(world, transactionJSON: tx.json)
        let payloadJSON = String(decoding: Base64URL.decode(String(good.split(separator: ".")[1]))!, as: UTF8.self)
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(payloadJSON.utf8)) as? [String: Any])
        for key in payload.keys.sorted() {
            var mutated = payload
            mutated[key] = Self.wrongType(payload[key]!)
            lines.append(try world.pki.sign(payload: try Self.json(mutated)))
            fields.append(key)
        }
        let data = try #require(payload["data"] as? [String: Any])
        for key in data.keys.sorted() {
            var mutatedData = data
            mutatedData[key] = Self.wrongType(data[key]!)
            var mutated = payload
            mutated["data"] = mutatedData
            lines.append(try world.pki.sign(payload: try Self.json(mutated)))
            fields.append("data." + key)
        }
        let (result, items) = try notify(cli, world, bytes: Array(lines.joined(separator: "\n").utf8))
        #expect(items.count == lines.count, "\(result.stderr.prefix(3000))")
        #expect(fields.count >= 30)
        print("wrong JSON types: \(fields.count) fields: \(fields.joined(separator: ", "))")
        for (field, item) in zip(fields, items) {
            let error = item["error"] as? String ?? ""
            #expect(item["verdict"] as? String == "rejected", "wrong type for \(field) was not refused: \(item)")
            #expect(
                error.contains(field.split(separator: ".").last.map(String.init) ?? field), "error for \(field) does not name it: \(error)")
        }
        #expect(try state(world) == before)
    }

    @Test func numbersOutOfRangeAreRefused() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        let tx = world.transaction("5000", original: "5000", token: token)
        var lines: [String] = []
        for (key, number) in [
            ("purchaseDate", "1e400"), ("expiresDate", "99999999999999999999999"), ("signedDate", "-1e309"),
            ("price", "18446744073709551616"), ("quantity", "4294967296"), ("expiresDate", "1.5e300"),
        ] {
            let text = tx.json.replacingOccurrences(
                of: #""\#(key)":[-0-9.eE+]+"#, with: "\"\(key)\":\(number)", options: .regularExpression)
            #expect(text != tx.json, "\(key) not found in \(tx.json)")
            lines.append(try notification(world, transactionJSON: text))
        }
        let (result, items) = try notify(cli, world, bytes: Array(lines.joined(separator: "\n").utf8))
        #expect(items.count == lines.count, "\(result)")
        #expect(items.allSatisfy { $0["verdict"] as? String == "rejected" }, "\(items.map { $0["error"] ?? $0["verdict"] ?? "" })")
        #expect(try state(world) == before)
    }

    @Test func duplicateJSONKeysAreRefused() throws {
        let (cli, world) = try setUp()
        let before = try state(world)
        let good = try valid(world)
        let tx = world.transaction("5000", original: "5000", token: token).json
        let lines = [
            #"{"signedPayload":"\#(good)","signedPayload":"\#(good)"}"#,
            #"{"signedTransactions":["\#(good)"],"signedTransactions":[]}"#,
            // Duplicate inside the signed transaction: two different owners.
            try notification(
                world, transactionJSON: String(tx.dropLast()) + #","appAccountToken":"00000000-0000-4000-8000-000000000000"}"#),
            // Duplicate at the top of the signed notification.
            try world.pki.sign(
                payload:
                    #"{"notificationType":"SUBSCRIBED","notificationType":"REFUND","notificationUUID":"u1","signedDate":\#(t0),"data":{"bundleId":"com.example.app","environment":"Sandbox"}}"#
            ),
        ]
        let (result, items) = try notify(cli, world, bytes: Array(lines.joined(separator: "\n").utf8))
        #expect(items.count == lines.count, "\(result)")
        for item in items {
            #expect(item["verdict"] as? String == "rejected", "\(item)")
            #expect((item["error"] as? String ?? "").contains("duplicate"), "\(item)")
        }
        #expect(try state(world) == before)
    }

    @Test func sqlMetacharactersInEveryIdAreStoredVerbatim() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let evil = #"x'";DROP/**/TABLE/**/orders;--\%_"#
        let order = "o" + evil
        try cli.ok(["db", "init"])
        try cli.ok(["orders", "create", "--user", "u" + evil + " OR 1=1", "--product", AppleWorld.product, "--no", order])
        let tx = world.transaction("t" + evil, original: "t" + evil, token: order, product: AppleWorld.product)
        let jws = try world.notification("SUBSCRIBED", "INITIAL_BUY", uuid: "n" + evil, signed: t0, tx: tx)
        let result = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: jws + "\n")
        #expect(result.status == 0, "\(result)")
        let stored = try #require(try world.order(no: order))
        #expect(stored["user_id"] as? String == "u" + evil + " OR 1=1")
        #expect(stored["trade_no"] as? String == "t" + evil)
        #expect(stored["status"] as? String == "paid")
        #expect(try world.contract("t" + evil)?["user_id"] as? String == "u" + evil + " OR 1=1")
        let status = try cli.ok(["db", "status", "-o", "json"]).jsonObject()
        #expect(status["orders"] as? Int == 1 && status["contracts"] as? Int == 1 && status["ledger"] as? Int == 1)
        // Look-ups by the hostile id find exactly it (no wildcard, no injection).
        let shown = try cli.ok(["orders", "show", "t" + evil, "-o", "json"])
        #expect(shown.stdout.contains("DROP/**/TABLE"))
        #expect(try cli.run(["orders", "show", "t%", "-o", "json"]).status != 0)
    }

    @Test func extraHeaderFieldsDoNotChangeWhatIsTrusted() throws {
        let (cli, world) = try setUp()
        let stranger = try TestPKI.make()
        let payload = { (id: String) in
            try world.builder.notification(
                type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: UUID().uuidString.lowercased(), signedDate: self.t0,
                transactionJSON: world.transaction(id, original: id, token: self.token).json, renewalJSON: nil)
        }
        func rewrap(_ jws: String, by pki: TestPKI, header: [String: Any]) throws -> String {
            let body = String(decoding: Base64URL.decode(String(jws.split(separator: ".")[1]))!, as: UTF8.self)
            return try pki.sign(payload: body, header: header)
        }
        let pointers: [String: Any] = [
            "kid": "attacker-key", "jku": "https://attacker.example/jwks.json", "x5u": "https://attacker.example/chain.pem",
            "jwk": ["kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"],
        ]
        let before = try state(world)
        // Signed by a stranger's chain that the pointers "vouch" for: refused as untrusted.
        let foreign = try rewrap(try payload("6000"), by: stranger, header: pointers)
        // A `crit` naming an extension iapctl does not understand: refused (RFC 7515 §4.1.11).
        let critical = try rewrap(try payload("6001"), by: world.pki, header: ["crit": ["exp"], "exp": 1])
        let (refused, refusedItems) = try notify(cli, world, bytes: Array((foreign + "\n" + critical + "\n").utf8))
        #expect(refused.status != 0)
        #expect(refusedItems.allSatisfy { $0["verdict"] as? String == "rejected" }, "\(refusedItems)")
        #expect((refusedItems.last?["error"] as? String ?? "").contains("crit"), "\(refusedItems)")
        #expect(try state(world) == before)
        // Signed by the trusted chain, the informational fields change nothing: accepted as usual.
        let trusted = try rewrap(try payload("6002"), by: world.pki, header: pointers)
        let (accepted, items) = try notify(cli, world, bytes: Array(trusted.utf8))
        #expect(accepted.status == 0, "\(accepted)")
        #expect(items.first?["verdict"] as? String == "applied")
    }
}

/// Base64url decoding for tests (padding added).
enum Base64URL {
    static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }
}

/// Secrets never leak; files are private; the audit trail names the OS user.
@Suite("secrets and files")
struct SecretsAndFilesTests {
    static let secret = "hunter2-S3cr3t-\(UInt32.random(in: 0...UInt32.max))"

    func expectNoSecret(_ result: CLI.Result, _ what: String, secret: String = Self.secret) {
        #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(what) printed the password: \(result)")
    }

    @Test func aPasswordInTheDatabaseURLIsRefusedAndNeverEchoed() throws {
        let cli = try CLI()
        let urls = ["mysql://app:\(Self.secret)@localhost/iapctl", "mariadb://app:\(Self.secret)@db.example:3306/iapctl?socket=/x"]
        for url in urls {
            for args in [
                ["db", "status", "--db", url], ["-v", "db", "init", "--db", url], ["orders", "list", "-o", "json", "--db", url],
            ] {
                let result = try cli.run(args)
                #expect(result.status == 64, "\(args.joined(separator: " ")): \(result)")
                expectNoSecret(result, args.joined(separator: " "))
            }
            // Not from the environment or a config file either (the URL is shown in -v and errors).
            let env = try cli.run(["-v", "db", "status"], env: ["IAPCTL_DB": url])
            #expect(env.status != 0)
            expectNoSecret(env, "IAPCTL_DB")
            let config = try cli.write("config.json", #"{"db": "\#(url)"}"#)
            let fromFile = try cli.run(["-v", "db", "status", "--config", config])
            #expect(fromFile.status != 0)
            expectNoSecret(fromFile, "--config")
        }
    }

    /// Passwords holding URL syntax, and password-like parameters, are recognised wherever the
    /// URL comes from (argument, IAPCTL_DB, --config), refused, and never printed — with -v too.
    @Test func passwordsWithURLSyntaxAndPasswordParametersNeverLeak() throws {
        let cli = try CLI()
        cli.environment["IAPCTL_DB"] = nil  // so --config's value is the one used
        let pieces = ["Kx9+2ZpQ", "7vLm", "Zq4", "W8e"]
        let urls = [
            "mysql://app:Kx9+2ZpQ/7vLm@db/shop", "mysql://app:Kx9+2ZpQ?7vLm@db/shop", "mysql://app:Kx9+2ZpQ#7vLm@db/shop",
            "mysql://app@localhost/shop?socket=/tmp/x.sock&password=Kx9+2ZpQ/7vLm",
            "mysql://app@localhost/shop?pwd=Kx9+2ZpQ&ssl-mode=REQUIRED", "mysql://app@localhost/shop?pass=Zq4W8e",
            "mysql://app@localhost/shop?PassWord=Kx9+2ZpQ",
        ]
        for url in urls {
            var results = [try cli.run(["-v", "db", "status", "--db", url])]
            results.append(try cli.run(["-v", "db", "status"], env: ["IAPCTL_DB": url]))
            let config = try cli.write("config.json", #"{"db": "\#(url)"}"#)
            results.append(try cli.run(["-v", "orders", "list", "--config", config]))
            for result in results {
                #expect(result.status == 64, "\(url): \(result)")
                #expect(result.stderr.contains("refusing a password"), "\(url): \(result)")
                for piece in pieces {
                    #expect(!result.stdout.contains(piece) && !result.stderr.contains(piece), "\(url) leaked \(piece): \(result)")
                }
            }
        }
    }

    @Test func thePasswordFromTheEnvironmentNeverAppears() throws {
        let cli = try CLI()
        let env = ["IAPCTL_DB_PASSWORD": Self.secret, "IAPCTL_DB": "mysql://app@localhost/iapctl?socket=/nonexistent/mysql.sock"]
        for args in [["-v", "db", "status"], ["db", "status", "-o", "json"], ["-v", "db", "init"], ["notify", "-v"]] {
            let result = try cli.run(args, stdin: "x\n", env: env)
            #expect(result.status != 0)
            expectNoSecret(result, args.joined(separator: " "))
        }
    }

    @Test(.serverOnly("the password of a database server"))
    func onAServerThePasswordIsInNoOutputAndNoAuditRow() throws {
        let server = try #require(E2EBackend.testServer)
        let password = server.password
        let cli = try CLI()
        cli.environment["PGPASSWORD"] = nil  // the password iapctl is given is the one used
        let world = try AppleWorld(cli: cli)
        let name = TestMySQLServer.freshDatabaseName()
        defer { server.drop(name) }
        let env = server.environment(database: name)
        var outputs: [CLI.Result] = []
        outputs.append(try cli.ok(["-v", "db", "init"], env: env))
        let no = try cli.ok(["orders", "create", "--user", "alice", "--product", AppleWorld.product], env: env).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: world.transaction("7000", original: "7000", token: no))
        outputs.append(try cli.ok(["-v", "notify"] + world.trust, stdin: jws, env: env))
        outputs.append(try cli.ok(["orders", "update", no, "--status", "refunded", "--reason", "test"], env: env))
        outputs.append(try cli.ok(["-v", "db", "status"], env: env))
        outputs.append(try cli.ok(["db", "status", "-o", "json"], env: env))
        outputs.append(try cli.ok(["orders", "show", no, "-o", "json"], env: env))  // includes the audit rows
        outputs.append(try cli.run(["db", "status"], env: env.merging(["IAPCTL_DB_PASSWORD": "wrong-\(password)"]) { $1 }))
        for output in outputs { expectNoSecret(output, "\(E2EBackend.current) run", secret: password) }
        #expect(outputs.last?.status == 78, "a wrong password: \(outputs.last.map(\.description) ?? "")")
        // A wrong password equal to the user name, or one letter long, leaves the message intact.
        guard let server = server as? TestMySQLServer else { return }
        for wrong in [server.user, "a"] {
            let denied = try cli.run(["db", "status"], env: env.merging(["IAPCTL_DB_PASSWORD": wrong]) { $1 })
            #expect(denied.status == 78, "\(denied)")
            #expect(!denied.stderr.contains("***"), "\(denied)")
            #expect(denied.stderr.contains("mysql://\(server.user)@"), "\(denied)")
            #expect(denied.stderr.contains("access denied"), "\(denied)")
        }
        #expect(try cli.ok(["orders", "show", no, "-o", "json"], env: env).stdout.contains("\"actor\""))
    }

    /// `iapctl db init --db DB` run under `umask 000`; its exit status.
    static func dbInitWithoutUmask(_ cli: CLI, _ db: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask 000; exec \"$0\" db init --db \"$1\"", CLI.binary.path, db]
        process.currentDirectoryURL = cli.dir
        process.environment = cli.environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func aNewSQLiteDatabaseIsOwnerOnlyWhateverTheUmask() throws {
        let cli = try CLI()
        for (name, arg) in [("plain.db", "plain.db"), ("prefixed.db", "sqlite:prefixed.db")] {
            #expect(try Self.dbInitWithoutUmask(cli, arg) == 0)
            let mode = try cli.permissions(name)
            #expect(mode == 0o600, "\(name) is \(String(mode, radix: 8))")
            for suffix in ["-wal", "-shm"] where cli.exists(name + suffix) {
                #expect(try cli.permissions(name + suffix) == 0o600, "\(name)\(suffix)")
            }
        }
        // Another command never creates a missing database (and so never one with loose rights).
        let missing = try cli.run(["orders", "list", "--db", "missing.db"])
        #expect(missing.status == 66)
        #expect(!cli.exists("missing.db"))
    }

    /// `db init` through a dangling symbolic link (relative, absolute, a chain) creates the
    /// target owner-only, whatever the umask.
    @Test(.sqliteOnly("SQLite files")) func aDatabaseCreatedThroughADanglingSymlinkIsOwnerOnly() throws {
        let cli = try CLI()
        try FileManager.default.createDirectory(atPath: cli.path("data"), withIntermediateDirectories: true)
        let links = [
            ("rel.db", "data/rel-target.db", "data/rel-target.db"),
            ("abs.db", cli.path("data/abs-target.db"), "data/abs-target.db"),
            ("chain.db", "rel2.db", "data/chain-target.db"),
        ]
        try FileManager.default.createSymbolicLink(atPath: cli.path("rel2.db"), withDestinationPath: "data/chain-target.db")
        for (link, destination, target) in links {
            try FileManager.default.createSymbolicLink(atPath: cli.path(link), withDestinationPath: destination)
            #expect(try Self.dbInitWithoutUmask(cli, link) == 0, "\(link)")
            #expect(cli.exists(target), "\(link) → \(target) not created")
            if cli.exists(target) {
                let mode = try cli.permissions(target)
                #expect(mode == 0o600, "\(target) is \(String(mode, radix: 8))")
            }
        }
    }

    /// An option file that holds a password and is open to others is refused (exit 78) with the
    /// fix, like ssh and libpq; made private (0600) it works.
    @Test(.mysqlOnly) func anOptionFileWithAPasswordReadableByOthersIsRefused() throws {
        let server = try #require(E2EBackend.server)
        let cli = try CLI()
        let file = try cli.write("my.cnf", "[client]\nuser = \(server.user)\npassword = \(server.password)\n")
        let url = server.url(database: TestMySQLServer.freshDatabaseName())
        let separator = url.contains("?") ? "&" : "?"
        cli.environment["IAPCTL_DB_PASSWORD"] = nil  // the option file's password is the one used
        let env = ["IAPCTL_DB": url + separator + "option-file=" + file]
        defer { if let name = url.split(separator: "/").last?.split(separator: "?").first { server.drop(String(name)) } }
        for mode in [0o644, 0o640, 0o666] {
            chmod(file, mode_t(mode))
            let result = try cli.run(["db", "init"], env: env)
            #expect(result.status == 78, "mode \(String(mode, radix: 8)): \(result)")
            #expect(result.stderr.contains("chmod 600"), "\(result)")
            #expect(!result.stderr.contains(server.password))
        }
        chmod(file, 0o600)
        let ok = try cli.run(["db", "init"], env: env)
        #expect(ok.status == 0, "\(ok)")
    }

    /// The actor of the audit rows of one manual change.
    func actors(_ cli: CLI, env: [String: String], extra: [String] = []) throws -> Set<String> {
        let no = try cli.ok(["orders", "create", "--user", "alice", "--product", "p"] + extra, env: env).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try cli.ok(["orders", "update", no, "--status", "refunded", "--reason", "ticket 1"] + extra, env: env)
        let shown = try cli.ok(["orders", "show", no, "-o", "json"], env: env).jsonObject()
        let changes = try #require(shown["changes"] as? [[String: Any]])
        #expect(changes.count >= 2)
        return Set(changes.compactMap { $0["actor"] as? String })
    }

    @Test func theAuditRecordsTheOSUserOrTheGivenActor() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        #expect(try actors(cli, env: ["USER": "e2e-user"]) == ["e2e-user"])
        #expect(try actors(cli, env: [:], extra: ["--actor", "ops-bob"]) == ["ops-bob"])
        #expect(try actors(cli, env: ["IAPCTL_ACTOR": "ops-carol"]) == ["ops-carol"])
        #expect(try actors(cli, env: ["USER": "", "LOGNAME": "from-logname"]) == ["from-logname"])
        // Neither USER nor LOGNAME: the passwd entry of the real user id.
        cli.environment["USER"] = nil
        cli.environment["LOGNAME"] = nil
        let expected = try #require(getpwuid(getuid())).pointee.pw_name.map { String(cString: $0) }
        #expect(try actors(cli, env: [:]) == [try #require(expected)])
    }
}
