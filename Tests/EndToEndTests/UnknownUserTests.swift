import Foundation
import Testing

/// `entitled --user typo` is not a real "no".
@Suite("unknown users, end to end")
struct UnknownUserTests {
    /// A user with no orders and no contracts is "unknown user" (exit 3, not found); a known user
    /// without a contract is still a plain "no" (exit 1).
    @Test func entitledForAnUnknownUserSaysSo() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--user", "alice", "--product", "p1", "-q"])
        let typo = try cli.run(["entitled", "--user", "alcie"])
        #expect(typo.status == 3, "\(typo)")
        #expect(typo.stdout.hasPrefix("unknown user: no user alcie in the database"), "\(typo)")
        let json = try cli.run(["entitled", "--user", "alcie", "-o", "json"])
        #expect(json.status == 3)
        let object = try json.jsonObject()
        #expect(object["entitled"] as? Bool == false)
        #expect((object["reason"] as? String)?.contains("no user alcie in the database") == true)
        // alice has an order but no contract: a real "no".
        let known = try cli.run(["entitled", "--user", "alice"])
        #expect(known.status == 1, "\(known)")
        #expect(known.stdout.hasPrefix("no: no contract of alice"), "\(known)")
    }

    /// A user whose every record moved to another user is still known (the audit trail names them).
    @Test func aUserWhoseRecordsMovedIsStillKnown() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let order = try cli.ok(["orders", "create", "--user", "alice", "--product", "p1", "-q"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try cli.ok(["orders", "update", order, "--user", "bob", "--reason", "wrong account", "-q"])
        let moved = try cli.run(["entitled", "--user", "alice"])
        #expect(moved.status == 1, "\(moved)")
        #expect(moved.stdout.hasPrefix("no: "), "\(moved)")
    }
}
