import Foundation
import Testing

extension CLI {
    /// A CLI whose default database is as `db init` creates it (``CLI/initializeDatabase()``).
    static func initialized() throws -> CLI {
        let cli = try CLI()
        try cli.initializeDatabase()
        return cli
    }

    /// Creates a pending order; returns its number.
    @discardableResult
    func createOrder(user: String = "u1", product: String = "com.example.pro", no: String? = nil) throws -> String {
        var args = ["orders", "create", "--user", user, "--product", product]
        if let no { args += ["--no", no] }
        let result = try ok(args)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `orders list -o json` as objects, newest first.
    func orders(_ filters: [String] = []) throws -> [[String: Any]] {
        try ok(["orders", "list", "-o", "json"] + filters).jsonArray()
    }

    /// One order's stored fields by number or trade_no (`orders show -o json`).
    func order(_ key: String) throws -> [String: Any] {
        let document = try ok(["orders", "show", key, "-o", "json"]).jsonObject()
        let orders = try #require(document["orders"] as? [[String: Any]])
        return try #require(orders.first)
    }

    /// The row counts of `db status -o json`.
    func counts() throws -> [String: Any] {
        try ok(["db", "status", "-o", "json"]).jsonObject()
    }
}
