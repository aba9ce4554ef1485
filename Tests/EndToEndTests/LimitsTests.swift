import Foundation
import Testing

/// Values longer than both backends' columns are refused up front with exit 65, on every backend,
/// instead of reaching MySQL and failing there.
@Suite("length limits")
struct LimitsTests {
    let long = String(repeating: "u", count: 256)

    @Test func overLongUserOrProductIsRefusedAndNothingIsCreated() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        let user = try cli.run(["orders", "create", "--user", long, "--product", "p"])
        #expect(user.status == 65, "\(user)")
        #expect(user.stderr.contains("limit is 255"))
        let product = try cli.run(["orders", "create", "--user", "u", "--product", long])
        #expect(product.status == 65)
        let batch = try cli.run(
            ["orders", "create", "--from", "-"], stdin: "{\"user\":\"ok\",\"product\":\"p\"}\n{\"user\":\"\(long)\",\"product\":\"p\"}\n")
        #expect(batch.status == 65)
        #expect(batch.stderr.contains("line 2"))
        #expect(try cli.ok(["orders", "list", "-o", "json"]).jsonArray().isEmpty)
        let exactly = try cli.run(["orders", "create", "--user", String(long.dropLast()), "--product", "p"])
        #expect(exactly.status == 0, "\(exactly)")
    }

    @Test func overLongCorrectionAndRestoreUserAreRefused() throws {
        let cli = try CLI()
        try cli.ok(["db", "init"])
        let no = try cli.ok(["orders", "create", "--user", "u", "--product", "p"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let update = try cli.run(["orders", "update", no, "--user", long, "--reason", "x"])
        #expect(update.status == 65 || update.status == 64, "\(update)")
        #expect(try cli.ok(["orders", "show", no, "-o", "json"]).stdout.contains("\"user_id\": \"u\""))
        let restore = try cli.run(["restore", "--user", long, "--bundle-id", "b", "--environment", "Sandbox"], stdin: "a.b.c")
        #expect(restore.status == 64)
    }
}
