import SubscriptionEngine
import SubscriptionModel
import Testing

/// The rules of a grant's time in force and of rewriting a forgotten user's mentions.
@Suite("Engine: grants in force, mentions of a forgotten user")
struct GrantAndForgetRulesTests {
    @Test func aGrantIsInForceFromItsStartUntilJustBeforeItsEnd() {
        var grant = Grant(
            userId: "u", productId: "p", startsAt: 1_000, untilDate: 5_000, actor: "a", reason: "r", ticket: nil)
        #expect(!grant.inForce(at: 999))
        #expect(grant.inForce(at: 1_000))
        #expect(grant.inForce(at: 4_999))
        #expect(!grant.inForce(at: 5_000))
        grant.revokedAt = 3_000
        #expect(grant.inForce(at: 2_999))
        #expect(!grant.inForce(at: 3_000))
    }

    @Test func onlyWholeMentionsAreRewritten() {
        func rewrite(_ text: String) -> String? { UserForgetService.rewrite(text, userId: "u1", alias: "forgotten-x") }
        #expect(rewrite("asked by u1 by mail") == "asked by forgotten-x by mail")
        #expect(rewrite(#"{"userId":"u1","no":"o"}"#) == #"{"userId":"forgotten-x","no":"o"}"#)
        #expect(rewrite("u1") == "forgotten-x")
        #expect(rewrite("u1, u1.") == "forgotten-x, forgotten-x.")
        // Not inside another id, an e-mail address or a longer word.
        #expect(rewrite("u10 and xu1 and u1@example.com and u1-b and u1.b") == nil)
        #expect(rewrite("nothing here") == nil)
        // A JSON string escapes the id: the escaped form is found too.
        let quoted = UserForgetService.rewrite(#"{"userId":"a\"b"}"#, userId: #"a"b"#, alias: "forgotten-y")
        #expect(quoted == #"{"userId":"forgotten-y"}"#)
    }
}
