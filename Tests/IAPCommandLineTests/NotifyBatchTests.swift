import Foundation
import JWSForge
import SQLiteStore
import Testing

@testable import IAPCommandLine
@testable import SubscriptionEngine
@testable import SubscriptionModel

/// `notify`'s batching: chunks verified in parallel, applied in input order, one transaction per
/// chunk with a savepoint per item; --atomic and --dry-run keep their meaning across chunks.
@Suite struct NotifyBatchTests {
    /// A throwaway CA, a fresh database with `orders` pending orders, and the series' notifications.
    struct World {
        let dir: URL
        let db: String
        let root: String
        let lines: [String]
        let orders: Int
        let renewals: Int

        init(orders: Int, renewals: Int) throws {
            dir = try temporaryDirectory()
            let pki = try TestPKI.make()
            try pki.save(to: dir.path)
            root = dir.appendingPathComponent("root.pem").path
            db = dir.appendingPathComponent("batch.db").path
            self.orders = orders
            self.renewals = renewals
            let tokens = (0..<orders).map { String(format: "0badcafe-0000-4000-8000-%012x", $0) }
            let store = try SQLiteStore(path: db, create: true)
            _ = try store.migrate()
            try store.write { session in
                for (i, token) in tokens.enumerated() {
                    _ = try session.insertOrder(
                        Order(no: token, userId: "user-\(i)", productId: "com.example.iapctl.monthly"))
                }
            }
            let builder = PayloadBuilder(pki: pki, bundleId: "com.example.iapctl", environment: "Sandbox")
            var lines: [String] = []
            try SubscriptionSeries(orders: orders, renewals: renewals, tokens: tokens).generate(with: builder) {
                lines.append($0)
            }
            self.lines = lines
        }

        func notify(_ lines: [String], _ extra: [String] = []) -> RunResult {
            iapctl(
                [
                    "notify", "-", "--db", db, "--root-ca", root, "--bundle-id", "com.example.iapctl",
                    "--environment", "Sandbox", "-o", "ndjson",
                ] + extra,
                stdin: lines.joined(separator: "\n") + "\n")
        }

        func count(_ sql: String) throws -> Int {
            let store = try SQLiteStore(path: db, create: false)
            return try store.read { session in
                let counts = try session.counts()
                switch sql {
                case "orders": return counts.orders
                case "ledger": return counts.ledger
                case "contracts": return counts.contracts
                default: return try session.orders(matching: OrderFilter(status: .paid)).count
                }
            }
        }
    }

    static func results(_ out: String) throws -> [[String: Any]] {
        try out.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func moreThanOneChunkIsAppliedInInputOrderAndEveryRenewalOnce() throws {
        // 300 SUBSCRIBED then 300 DID_RENEW: each renewal needs its purchase applied first, within a
        // chunk and across the chunk boundary at 512.
        let world = try World(orders: 300, renewals: 1)
        #expect(world.lines.count > NotifyCommand.chunkSize)
        let run = world.notify(world.lines)
        #expect(run.code == 0, "\(run.err)")
        let results = try Self.results(run.out)
        #expect(results.map { $0["line"] as? Int } == Array(1...600))
        #expect(results.allSatisfy { $0["verdict"] as? String == "applied" })
        #expect(try world.count("orders") == 600)
        #expect(try world.count("paid") == 600)
        #expect(try world.count("ledger") == 600)
        #expect(try world.count("contracts") == 300)

        // Replaying the same input again: every item is a duplicate, nothing new.
        let again = world.notify(world.lines)
        #expect(again.code == 0)
        #expect(try Self.results(again.out).allSatisfy { $0["verdict"] as? String == "duplicate" })
        #expect(try world.count("orders") == 600)
    }

    @Test func oneFailingItemNeverUndoesTheOthers() throws {
        let world = try World(orders: 300, renewals: 1)
        var lines = world.lines
        lines[100] = "not.a.jws"  // rejected in the first chunk
        lines[550] = String(lines[550].dropLast(4)) + "AAAA"  // a broken signature in the second
        let run = world.notify(lines)
        #expect(run.code == 1)
        let results = try Self.results(run.out)
        #expect(results.count == 600)
        #expect(results.map { $0["line"] as? Int } == Array(1...600))
        #expect(results[100]["verdict"] as? String == "rejected")
        #expect(results[550]["verdict"] as? String == "rejected")
        // Line 101's renewal still pays its pending order (the token links it).
        #expect(results.filter { $0["verdict"] as? String == "applied" }.count == 598)
        // The two rejected JWS are kept too (every JWS received is kept), with verdict rejected.
        #expect(try world.count("ledger") == 600)
    }

    @Test func atomicRollsEverythingBackWhenAnItemInALaterChunkFails() throws {
        let world = try World(orders: 300, renewals: 1)
        var lines = world.lines
        lines[599] = "garbage"
        let run = world.notify(lines, ["--atomic"])
        #expect(run.code == 1)
        #expect(run.err.contains("--atomic: nothing was applied"))
        #expect(try world.count("ledger") == 0)
        #expect(try world.count("paid") == 0)

        let clean = world.notify(world.lines, ["--atomic"])
        #expect(clean.code == 0, "\(clean.err)")
        #expect(try world.count("ledger") == 600)
    }

    @Test func dryRunWritesNothingAndJudgesEachItemAlone() throws {
        let world = try World(orders: 300, renewals: 1)
        let run = world.notify(world.lines, ["--dry-run"])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.err.contains("dry run: nothing was written"))
        let results = try Self.results(run.out)
        #expect(results.count == 600)
        #expect(try world.count("ledger") == 0)
        #expect(try world.count("orders") == 300)
        #expect(try world.count("paid") == 0)
    }

    @Test func timingsArePrintedOnlyWhenAskedFor() throws {
        let world = try World(orders: 3, renewals: 1)
        let plain = world.notify(world.lines)
        #expect(!plain.err.contains("notify timings"))
        let timed = iapctl(
            [
                "notify", "-", "--db", world.db, "--root-ca", world.root, "--bundle-id", "com.example.iapctl",
                "--environment", "Sandbox", "-o", "ndjson",
            ],
            environment: ["IAPCTL_TIMINGS": "1"], stdin: world.lines.joined(separator: "\n"))
        #expect(timed.err.contains("notify timings: 6 items"))
        #expect(timed.err.contains("engine+store"))
    }
}

/// The engine's hand-written audit JSON must be byte for byte what `JSONEncoder` (`.sortedKeys`) writes.
@Suite struct EngineAuditJSONTests {
    static func encoder(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let strings: [String?] = [
        nil, "", "plain", "com.example/app", "quote\" back\\slash", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}",
        "é 😀 \u{2028} \u{7F}", "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e",
    ]
    static let numbers: [Int64?] = [nil, 0, -1, 9990, Int64.max, Int64.min, 1_735_689_605_000]

    @Test func ordersMatchJSONEncoder() throws {
        var checked = 0
        for (i, text) in Self.strings.enumerated() {
            for (j, number) in Self.numbers.enumerated() {
                let order = Order(
                    id: number ?? 7, no: text ?? "n", userId: Self.strings[(i + 1) % Self.strings.count] ?? "u",
                    productId: text ?? "p", status: OrderStatus.allCases[(i + j) % 4], tradeNo: text,
                    originNo: Self.strings[(i + j) % Self.strings.count], purchaseDate: number,
                    expiresDate: Self.numbers[(j + 1) % Self.numbers.count], environment: text, price: number,
                    currency: Self.strings[(i + 2) % Self.strings.count], createdAt: number ?? 1, updatedAt: (number ?? 4) / 2)
                #expect(SubscriptionEngine.EngineRun.json(order) == (try Self.encoder(order)))
                checked += 1
            }
        }
        #expect(checked == Self.strings.count * Self.numbers.count)
    }

    @Test func contractsMatchJSONEncoder() throws {
        for (i, text) in Self.strings.enumerated() {
            for (j, number) in Self.numbers.enumerated() {
                let contract = Contract(
                    id: number ?? 3, contractId: text ?? "c", userId: "u\(i)", productId: text ?? "p",
                    status: ContractStatus.allCases[(i + j) % ContractStatus.allCases.count], autoRenew: (i + j) % 2 == 0,
                    expiresDate: number, environment: text, nextProductId: Self.strings[(i + 3) % Self.strings.count],
                    lastEventDate: Self.numbers[(j + 2) % Self.numbers.count], createdAt: number ?? 0, updatedAt: 5)
                #expect(SubscriptionEngine.EngineRun.json(contract) == (try Self.encoder(contract)))
            }
        }
    }
}
