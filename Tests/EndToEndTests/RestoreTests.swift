import Foundation
import JWSForge
import Testing

@Suite("restore, end to end")
struct RestoreE2ETests {
    let aliceToken = "5d0a1e2f-0000-4000-8000-00000000a11c"
    let t0 = AppleWorld.t0

    /// alice bought subscription 1000 (token order), bob has nothing.
    func world() throws -> (CLI, AppleWorld) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(aliceToken, "alice")])
        let jws = try world.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: world.transaction("1000", original: "1000", token: aliceToken))
        try cli.ok(["notify", "-q"] + world.trust, stdin: jws)
        return (cli, world)
    }

    @Test func verdictsBasesAndExitCodes() throws {
        let (cli, world) = try world()
        let own = try world.signedTransaction(world.transaction("1000", original: "1000", token: aliceToken))
        let mine = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + world.trust, stdin: own)
        #expect(mine.status == 0, "\(mine)")
        let item = try #require(try mine.ndjson().first)
        #expect(item["verdict"] as? String == "restorable")
        #expect(item["basis"] as? String == "transaction-id")
        #expect(item["owner"] as? String == "alice")
        #expect(item["contract"] as? String == "1000")

        let other = try cli.run(["restore", "--user", "bob", "-o", "ndjson"] + world.trust, stdin: own)
        #expect(other.status == 4, "\(other)")
        #expect(try other.ndjson().first?["verdict"] as? String == "owned-by-other")

        let renewal = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        let byOriginal = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + world.trust, stdin: renewal)
        #expect(try byOriginal.ndjson().first?["basis"] as? String == "original-transaction-id")

        let stranger = try world.signedTransaction(world.transaction("9000", original: "9000"))
        let unknown = try cli.run(["restore", "--user", "alice", "-o", "ndjson"] + world.trust, stdin: stranger)
        #expect(unknown.status == 3)
        #expect(try unknown.ndjson().first?["verdict"] as? String == "unknown")

        // A batch: one verdict per line, in order; exit 1.
        let batch = try cli.run(
            ["restore", "--user", "alice", "-o", "ndjson"] + world.trust, stdin: [own, "garbage", stranger].joined(separator: "\n"))
        #expect(batch.status == 1)
        #expect(try batch.ndjson().map { $0["verdict"] as? String } == ["restorable", "rejected", "unknown"])
    }

    @Test func lookUpsWriteNothingAndForgedInputIsRejected() throws {
        let (cli, world) = try world()
        let before = try world.tables(maskGeneratedNumbers: [aliceToken])
        let renewal = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        #expect(try cli.run(["restore", "--user", "alice"] + world.trust, stdin: renewal).status == 0)
        let forger = try AppleWorld(cli: cli, pki: TestPKI.make())
        let forged = try forger.signedTransaction(forger.transaction("1001", original: "1000", period: 1))
        #expect(try cli.run(["restore", "--user", "alice", "--apply"] + world.trust, stdin: forged).status == 2)
        #expect(try cli.run(["restore", "--user", "alice", "--apply"] + world.trust, stdin: "a.b.c").status == 65)
        #expect(try world.tables(maskGeneratedNumbers: [aliceToken]) == before)
    }

    @Test func applyRecordsAnUnseenRenewal() throws {
        let (cli, world) = try world()
        let renewal = try world.signedTransaction(world.transaction("1001", original: "1000", period: 1))
        // A dry run says what it would do (restorable), --apply what it did (restored).
        let dry = try cli.run(["restore", "--user", "alice", "--apply", "--dry-run", "-o", "ndjson"] + world.trust, stdin: renewal)
        #expect(try dry.ndjson().first?["verdict"] as? String == "restorable", "\(dry)")
        let r = try cli.run(["restore", "--user", "alice", "--apply", "-o", "ndjson"] + world.trust, stdin: renewal)
        #expect(r.status == 0, "\(r)")
        #expect(try r.ndjson().first?["verdict"] as? String == "restored", "\(r)")
        #expect(r.stderr.contains("1 restored"), "\(r)")
        #expect(try world.order(tradeNo: "1001")?["user_id"] as? String == "alice")
    }

    @Test func transferNeedsAReasonMovesEverythingAndIsAudited() throws {
        let (cli, world) = try world()
        let own = try world.signedTransaction(world.transaction("1000", original: "1000", token: aliceToken))
        let noReason = try cli.run(["restore", "--user", "bob", "--apply", "--policy", "transfer"] + world.trust, stdin: own)
        #expect(noReason.status == 64)
        // The world's periods ended long ago, so transfer-if-inactive ("not entitled now") would
        // move it; keep refuses.
        let refused = try cli.run(["restore", "--user", "bob", "--apply", "--policy", "keep"] + world.trust, stdin: own)
        #expect(refused.status == 4, "\(refused)")
        #expect(try world.contract("1000")?["user_id"] as? String == "alice")

        let moved = try cli.run(
            [
                "restore", "--user", "bob", "--apply", "--policy", "transfer", "--reason", "ticket 42: same Apple ID", "--actor",
                "sam-support", "-o", "ndjson",
            ] + world.trust,
            stdin: own)
        #expect(moved.status == 0, "\(moved)")
        #expect(try moved.ndjson().first?["verdict"] as? String == "transferred")
        #expect(moved.stderr.contains("appAccountToken"))
        #expect(try world.contract("1000")?["user_id"] as? String == "bob")
        #expect(try world.order(no: aliceToken)?["user_id"] as? String == "bob")
        let show = try cli.ok(["contracts", "show", "1000", "-o", "json"]).stdout
        #expect(show.contains("sam-support"))
        #expect(show.contains("ticket 42: same Apple ID"))
        #expect(show.contains("alice"))
    }
}
