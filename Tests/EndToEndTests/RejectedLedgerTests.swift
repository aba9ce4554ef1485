import Foundation
import JWSForge
import Testing

/// End to end: every JWS received is in the ledger with its verdict, the
/// rejected ones too (once per distinct bytes, exactly as received); exit codes and results stay
/// as iapctl(1) says; `verify` without `--apply` and dry runs record nothing.
@Suite("rejected JWS are kept in the ledger")
struct RejectedLedgerTests {
    func ledgerCount(_ cli: CLI) throws -> Int? {
        try cli.ok(["db", "status", "-o", "json"]).jsonObject()["ledger"] as? Int
    }

    @Test func aRefusedJWSIsKeptOnceWithItsExactBytesAndNothingElseChanges() throws {
        let cli = try CLI()
        let world = try AppleWorld(cli: cli)
        let token = UUID().uuidString.lowercased()
        try world.database(orders: [(token, "alice")])
        // Signed by a CA this database does not trust.
        let stranger = try AppleWorld(cli: cli)
        let forged = try stranger.notification(
            "SUBSCRIBED", "INITIAL_BUY", signed: AppleWorld.t0, tx: world.transaction("5000", original: "5000", token: token))
        let forgedTx = try stranger.signedTransaction(world.transaction("5001", original: "5001", token: token))
        let before = try world.tables(maskGeneratedNumbers: [token])

        let notify = try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: forged + "\n")
        #expect(notify.status == 2, "\(notify)")
        #expect(try notify.ndjson().first?["verdict"] as? String == "rejected")
        #expect(try ledgerCount(cli) == 1)
        // The same bytes again: still rejected (exit 2), not stored twice.
        #expect(try cli.run(["notify", "-o", "ndjson"] + world.trust, stdin: forged + "\n").status == 2)
        #expect(try ledgerCount(cli) == 1)
        let raw = try cli.ok(["audit", "raw", "1"])
        #expect(raw.stdout.utf8.elementsEqual(forged.utf8))

        // verify is read-only; verify --apply --dry-run rolls back; verify --apply keeps it.
        #expect(try cli.run(["verify"] + world.trust, stdin: forgedTx + "\n").status == 2)
        #expect(try cli.run(["verify", "--apply", "--dry-run"] + world.trust, stdin: forgedTx + "\n").status == 2)
        #expect(try ledgerCount(cli) == 1)
        let apply = try cli.run(["verify", "--apply", "-o", "json"] + world.trust, stdin: forgedTx + "\n")
        #expect(apply.status == 2, "\(apply)")
        #expect(try apply.jsonObject()["verdict"] as? String == "rejected")
        #expect(try ledgerCount(cli) == 2)
        // The next ledger id (MySQL may skip the one the dry run's rolled-back insert used).
        let kept = try (2...4).lazy.map { try cli.run(["audit", "raw", String($0)]) }.first { $0.status == 0 }
        #expect(kept?.stdout.utf8.elementsEqual(forgedTx.utf8) == true)

        // restore: a look-up records nothing; --apply keeps the refused transaction (source restore).
        let forgedRestore = try stranger.signedTransaction(world.transaction("5002", original: "5002", token: token))
        #expect(try cli.run(["restore", "--user", "alice"] + world.trust, stdin: forgedRestore + "\n").status == 2)
        #expect(try ledgerCount(cli) == 2)
        let restore = try cli.run(["restore", "--user", "alice", "--apply", "-o", "ndjson"] + world.trust, stdin: forgedRestore + "\n")
        #expect(restore.status == 2, "\(restore)")
        #expect(try restore.ndjson().first?["verdict"] as? String == "rejected")
        #expect(try ledgerCount(cli) == 3)

        // Nothing else: the order is still pending, no contract.
        #expect(try world.tables(maskGeneratedNumbers: [token]) == before)
    }
}
