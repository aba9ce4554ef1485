import Foundation
import Testing

/// Orders for finance: `price` stays Apple's integer in thousandths of the currency (9990), and
/// `price_decimal` beside `currency` gives the amount as an exact decimal (9.99) in CSV, JSON and
/// NDJSON; the old keys keep their place and meaning.
@Suite("Finance columns: price as a decimal", .serialized)
struct FinanceColumnsTests {
    @Test func ordersCarryTheirPriceAsADecimal() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = "f1a2b3c4-0000-4000-8000-000000000001"
        try world.database(orders: [(token, "fiona")])
        var tx = world.transaction("2000000400000001", original: "2000000400000001", token: token)
        tx.price = 12_345
        tx.currency = "EUR"
        try cli.ok(
            ["notify", "-q"] + world.trust, stdin: try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: tx))

        let csv = try cli.ok(["orders", "list", "-o", "csv"]).lines
        let header = csv[0].split(separator: ",").map(String.init)
        let row = csv[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(header.count == row.count)
        let cell = { (name: String) in header.firstIndex(of: name).map { row[$0] } }
        #expect(cell("price") == "12345" && cell("currency") == "EUR" && cell("price_decimal") == "12.345", "\(csv)")
        #expect(header.firstIndex(of: "price_decimal") == header.firstIndex(of: "currency").map { $0 + 1 }, "\(header)")

        let json = try #require(try cli.ok(["orders", "list", "-o", "json"]).jsonArray().first)
        #expect(json["price"] as? Int == 12_345 && json["price_decimal"] as? String == "12.345", "\(json)")
        let shown = try cli.ok(["orders", "show", token, "-o", "json"]).jsonObject()
        let order = try #require((shown["orders"] as? [[String: Any]])?.first)
        #expect(order["price_decimal"] as? String == "12.345", "\(order)")
        // An order without a price (pending, never paid) has none.
        try cli.ok(["orders", "create", "--user", "gus", "--product", AppleWorld.product, "-q"])
        let pending = try cli.ok(["orders", "list", "--user", "gus", "-o", "json"]).jsonArray()
        #expect(pending.first?["price_decimal"] is NSNull, "\(pending)")
        // The help says the unit.
        #expect(try cli.ok(["orders", "list", "--help"]).stdout.contains("thousandths"))
    }
}
