import Foundation
import JWSForge
import Testing

/// `restore --apply` says what happened and its link holds: a purchase made without an
/// appAccountToken that Apple told us about first (unmatched) is linked to the pending order the
/// product fallback finds, that link outlasts Apple's newer versions without a token, and
/// `transfer-if-inactive` does not take "lapsed" for "inactive". Runs on SQLite and, in the
/// MariaDB pass, on MariaDB.
@Suite("restore links what it says it restored, end to end")
struct RestoreLinkE2ETests {
    let aliceOrder = "a11ce000-0000-4000-8000-00000000a11c"
    let t0 = AppleWorld.t0
    let day = AppleWorld.day

    func world() throws -> (CLI, AppleWorld) {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        try world.database(orders: [(aliceOrder, "alice")])
        return (cli, world)
    }

    @Test func aPurchaseWithoutATokenAppleToldFirstIsLinkedAndStaysLinked() throws {
        let (cli, world) = try world()
        // Apple's SUBSCRIBED (no appAccountToken) arrives first: nothing to attach it to.
        let purchase = world.transaction("3000", original: "3000")
        let subscribed = try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0 + 1000, tx: purchase)
        #expect(try cli.run(["notify"] + world.trust, stdin: subscribed).status == 3)

        // The device restores StoreKit's copy, signed a second before Apple's notification.
        let restored = try cli.run(
            ["restore", "--user", "alice", "--apply", "-o", "ndjson"] + world.trust, stdin: try world.signedTransaction(purchase))
        #expect(restored.status == 0, "\(restored)")
        let item = try #require(try restored.ndjson().first)
        #expect(item["verdict"] as? String == "restored", "\(restored)")
        #expect(item["basis"] as? String == "product")
        let order = try #require(try world.order(no: aliceOrder))
        #expect(order["status"] as? String == "paid", "\(order)")
        #expect(order["trade_no"] as? String == "3000")
        #expect(try world.contract("3000")?["user_id"] as? String == "alice")

        // A newer version of the same transaction from Apple, without a token, keeps the link.
        let off = try world.notification(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signed: t0 + 2 * day, tx: purchase, autoRenew: 0)
        let later = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: off)
        #expect(later.status == 0, "\(later)")
        #expect(try world.order(no: aliceOrder)?["trade_no"] as? String == "3000")
        #expect(try world.contract("3000")?["user_id"] as? String == "alice")
        #expect(try world.contract("3000")?["status"] as? String == "canceled")
        #expect(try world.orders().count == 1, "no second order for the same transaction")

        // The SUBSCRIBED kept as unmatched now has its order: the replay settles it.
        let replay = try cli.run(["notify", "--replay-unmatched", "-o", "ndjson"] + world.trust)
        #expect(replay.status == 0, "\(replay)")
        let again = try cli.run(["notify", "--replay-unmatched"] + world.trust)
        #expect(again.stderr.contains("no unmatched"), "\(again)")
        #expect(try world.order(no: aliceOrder)?["trade_no"] as? String == "3000")
    }

    @Test func aFamilyRevokeThatArrivedFirstIsLinkedByTheRestore() throws {
        let (cli, world) = try world()
        var shared = world.transaction("3100", original: "3100")
        shared.inAppOwnershipType = "FAMILY_SHARED"
        var revoked = shared
        revoked.revocationDate = t0 + day
        revoked.revocationReason = 0
        let revoke = try world.notification("REVOKE", signed: t0 + 2 * day, tx: revoked)
        #expect(try cli.run(["notify"] + world.trust, stdin: revoke).status == 3)

        let restored = try cli.run(
            ["restore", "--user", "alice", "--apply", "-o", "ndjson"] + world.trust, stdin: try world.signedTransaction(shared))
        #expect(restored.status == 0, "\(restored)")
        #expect(try restored.ndjson().first?["verdict"] as? String == "restored", "\(restored)")
        let order = try #require(try world.order(no: aliceOrder))
        #expect(order["trade_no"] as? String == "3100", "\(order)")
        #expect(order["status"] as? String == "revoked", "the family member's access was revoked first: \(order)")
        #expect(try world.contract("3100")?["user_id"] as? String == "alice")
        #expect(try world.contract("3100")?["status"] as? String == "revoked")
        // Revoked: not entitled, and said so.
        #expect(try cli.run(["entitled", "--user", "alice"]).status == 1)
        let replay = try cli.run(["notify", "--replay-unmatched"] + world.trust)
        #expect(replay.status == 0, "\(replay)")
        #expect(try cli.run(["notify", "--replay-unmatched"] + world.trust).stderr.contains("no unmatched"))
    }

    @Test func transferIfInactiveAsksAppleAboutALapsedContractInsteadOfGuessing() throws {
        let (cli, world) = try world()
        let bought = world.transaction("1000", original: "1000", token: aliceOrder)
        try cli.ok(["notify", "-q"] + world.trust, stdin: try world.notification("SUBSCRIBED", "INITIAL_BUY", signed: t0, tx: bought))
        // Paid until t0 + 30 days, nothing from Apple since: lapsed, which is not "inactive" on our word.
        let ask = ["restore", "--user", "bob", "--apply", "--policy", "transfer-if-inactive", "--reason", "new phone", "-o", "ndjson"]
        let refused = try cli.run(ask + world.trust, stdin: try world.signedTransaction(bought))
        #expect(refused.status == 4, "\(refused)")
        let item = try #require(try refused.ndjson().first)
        #expect(item["verdict"] as? String == "owned-by-other")
        #expect((item["detail"] as? String ?? "").contains("iapctl apple reconcile --contract 1000"), "\(item)")
        #expect(try world.contract("1000")?["user_id"] as? String == "alice")

        // Apple's word that it expired makes it inactive: now the policy moves it.
        let expired = try world.notification("EXPIRED", "VOLUNTARY", signed: t0 + 31 * day, tx: bought, autoRenew: 0)
        try cli.ok(["notify", "-q"] + world.trust, stdin: expired)
        let moved = try cli.run(ask + world.trust, stdin: try world.signedTransaction(bought))
        #expect(moved.status == 0, "\(moved)")
        #expect(try moved.ndjson().first?["verdict"] as? String == "transferred")
        #expect(try world.contract("1000")?["user_id"] as? String == "bob")
    }
}
