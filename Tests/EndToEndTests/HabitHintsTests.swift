import Foundation
import Testing

/// What support types by habit from other tools, and the hint that points at the iapctl way.
@Suite("habits from other tools get the iapctl spelling, end to end")
struct HabitHintsTests {
    @Test func habitsFromOtherToolsGetTheIapctlSpelling() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        let cases: [(args: [String], hint: String)] = [
            (["orders", "list", "--json"], "did you mean '-o json'?"),
            (["orders", "list", "--format", "json"], "did you mean '-o json'?"),
            (["orders", "list", "--format=csv"], "did you mean '-o csv'?"),
            (["entitled", "alice"], "did you mean '--user alice'?"),
            (["orders", "list", "--user"], "give it as '--user <user>'"),
            (["orders", "list", "--status", "payed"], "did you mean 'paid'?"),
        ]
        for (args, hint) in cases {
            let r = try cli.run(args)
            #expect(r.status == 64, "\(args): \(r)")
            #expect(r.stderr.contains(hint), "\(args): \(r.stderr)")
        }
    }
}
