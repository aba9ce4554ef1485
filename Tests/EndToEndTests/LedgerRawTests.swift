import Foundation
import JWSForge
import Testing

/// End to end: `notify` stores every item compactly, and `iapctl audit raw ID`
/// prints each one's exact bytes, for every item of a replay (runs on SQLite and, in scripts/test,
/// again on MariaDB).
@Suite("audit raw: every ledger item byte for byte")
struct LedgerRawTests {
    @Test func everyItemOfAReplayAndItsRedeliveriesPrintsItsExactBytes() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let tokens = (0..<40).map { SubscriptionSeries.uuid(seed: 0xbeef, counter: Int64($0)) }
        try cli.ok(["db", "init"])
        let orders = tokens.enumerated().map { i, token in
            #"{"no":"\#(token)","user":"user-\#(i)","product":"\#(AppleWorld.product)"}"#
        }
        try cli.ok(["orders", "create", "--from", cli.write("orders.ndjson", orders.joined(separator: "\n") + "\n")])
        var lines: [String] = []
        var jwsOfLine: [String] = []
        var series = SubscriptionSeries(orders: 40, renewals: 3, tokens: tokens)
        series.productId = AppleWorld.product
        try series.generate(with: world.builder) { jws in
            // Every seventh line as the webhook body Apple posts.
            // (the ledger keeps the JWS it carries).
            lines.append(lines.count % 7 == 3 ? #"{"signedPayload":"\#(jws)"}"# : jws)
            jwsOfLine.append(jws)
        }
        let redelivered = Array(lines[0..<40])
        let first = try cli.run(["notify", cli.write("a.ndjson", lines.joined(separator: "\n") + "\n"), "-o", "ndjson"] + world.trust)
        #expect(first.status == 0, "\(first)")
        #expect(try first.ndjson().allSatisfy { $0["verdict"] as? String == "applied" })
        let second = try cli.run(
            ["notify", cli.write("b.ndjson", redelivered.joined(separator: "\n") + "\n"), "-o", "ndjson"] + world.trust)
        #expect(try second.ndjson().allSatisfy { $0["verdict"] as? String == "duplicate" }, "\(second)")
        let expected = jwsOfLine + jwsOfLine[0..<40]
        #expect(expected.count == 200)
        var differing: [Int] = []
        for (index, raw) in expected.enumerated() {
            let printed = try cli.ok(["audit", "raw", String(index + 1)])
            if !printed.stdout.utf8.elementsEqual(raw.utf8) { differing.append(index + 1) }
        }
        #expect(differing.isEmpty, "ledger items whose bytes differ: \(differing)")
        let missing = try cli.run(["audit", "raw", "201"])
        #expect(missing.status == 3 && missing.stdout.isEmpty)
        #expect(missing.stderr.contains("no ledger item 201"))
    }
}
