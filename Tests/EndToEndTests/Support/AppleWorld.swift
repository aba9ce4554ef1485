import Foundation
import JWSForge
import Testing

/// A throwaway App Store for one test: a CA chain with Apple's OIDs (made now, with OpenSSL), an
/// app, and helpers that sign Apple-shaped notifications and transactions with it.
final class AppleWorld {
    static let bundleId = "com.example.app"
    static let product = "com.example.app.monthly"
    static let day: Int64 = 86_400_000
    /// 2025-01-01T00:00:00Z: well inside the forged leaf's validity.
    static let t0: Int64 = 1_735_689_600_000

    let cli: CLI
    let pki: TestPKI
    let builder: PayloadBuilder
    let rootPath: String

    init(cli: CLI, pki: TestPKI? = nil) throws {
        self.cli = cli
        self.pki = try pki ?? TestPKI.make()
        builder = PayloadBuilder(pki: self.pki, bundleId: Self.bundleId, environment: "Sandbox")
        rootPath = try cli.write("root-\(UUID().uuidString.prefix(8)).pem", self.pki.rootPEM)
    }

    /// Trust options accepting this world's Sandbox data.
    var trust: [String] { ["--root-ca", rootPath, "--bundle-id", Self.bundleId, "--environment", "Sandbox"] }

    /// A database as `iapctl db init` makes it (``CLI/initializeDatabase()``) plus one pending order
    /// per (token, user).
    func database(orders: [(token: String, user: String)] = []) throws {
        try cli.initializeDatabase()
        for (token, user) in orders {
            try cli.ok(["orders", "create", "--user", user, "--product", Self.product, "--no", token])
        }
    }

    /// A transaction of subscription `original`, period `n` (0 = first purchase).
    func transaction(
        _ id: String, original: String, token: String? = nil, period n: Int64 = 0, revoked: Bool = false,
        product: String = AppleWorld.product
    ) -> TransactionPayload {
        TransactionPayload(
            transactionId: id, originalTransactionId: original, bundleId: Self.bundleId, productId: product,
            purchaseDate: Self.t0 + n * 30 * Self.day, originalPurchaseDate: Self.t0,
            expiresDate: Self.t0 + (n + 1) * 30 * Self.day, appAccountToken: token,
            signedDate: Self.t0 + n * 30 * Self.day, environment: "Sandbox",
            transactionReason: n == 0 ? "PURCHASE" : "RENEWAL",
            revocationDate: revoked ? Self.t0 + n * 30 * Self.day + Self.day : nil, revocationReason: revoked ? 0 : nil)
    }

    func renewal(_ original: String, autoRenew: Int64 = 1, signed: Int64) -> RenewalInfoPayload {
        RenewalInfoPayload(
            originalTransactionId: original, autoRenewProductId: Self.product, productId: Self.product,
            autoRenewStatus: autoRenew, signedDate: signed, environment: "Sandbox", renewalDate: signed + 30 * Self.day)
    }

    /// A signed notification carrying `tx` (and renewal info unless `autoRenew` is nil).
    func notification(
        _ type: String, _ subtype: String? = nil, uuid: String = UUID().uuidString.lowercased(), signed: Int64,
        tx: TransactionPayload, autoRenew: Int64? = 1
    ) throws -> String {
        try builder.notification(
            type: type, subtype: subtype, uuid: uuid, signedDate: signed, transaction: tx,
            renewal: autoRenew.map { renewal(tx.originalTransactionId, autoRenew: $0, signed: signed) })
    }

    /// A signed transaction as the app receives it from StoreKit 2.
    func signedTransaction(_ tx: TransactionPayload) throws -> String {
        try pki.sign(payload: tx.json)
    }

    /// `iapctl -o json orders list` as objects.
    func orders() throws -> [[String: Any]] {
        try cli.ok(["orders", "list", "-o", "json"]).jsonArray()
    }

    /// `iapctl -o json contracts list` as objects.
    func contracts() throws -> [[String: Any]] {
        try cli.ok(["contracts", "list", "-o", "json"]).jsonArray()
    }

    /// The order with this trade_no, if any.
    func order(tradeNo: String) throws -> [String: Any]? {
        try orders().first { $0["trade_no"] as? String == tradeNo }
    }

    func order(no: String) throws -> [String: Any]? {
        try orders().first { $0["no"] as? String == no }
    }

    func contract(_ id: String) throws -> [String: Any]? {
        try contracts().first { $0["contract_id"] as? String == id }
    }

    /// The money tables as comparable text (order numbers the engine generates are masked).
    func tables(maskGeneratedNumbers known: Set<String> = []) throws -> [String] {
        let orders = try orders().map { o -> String in
            let no = o["no"] as? String ?? "?"
            return [
                "order", known.contains(no) ? no : "<generated>", o["user_id"], o["status"], o["trade_no"], o["origin_no"],
                o["expires_date"],
            ]
            .map { "\($0 ?? "-")" }.joined(separator: " ")
        }
        let contracts = try contracts().map { c -> String in
            ["contract", c["contract_id"], c["user_id"], c["product_id"], c["status"], c["auto_renew"], c["expires_date"]]
                .map { "\($0 ?? "-")" }.joined(separator: " ")
        }
        return (orders + contracts).sorted()
    }
}

/// The genuine Apple JWS copied into Fixtures/real.
enum RealFixtures {
    static let directory = CLI.packageRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/real")

    static func path(_ prefix: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let name = try #require(names.first { $0.hasPrefix(prefix) && $0.hasSuffix(".jws") }, "no fixture \(prefix)")
        return directory.appendingPathComponent(name).path
    }

    static func jws(_ prefix: String) throws -> String {
        try String(contentsOfFile: path(prefix), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
