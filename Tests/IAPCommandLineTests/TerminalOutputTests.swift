import AppStoreJWS
import Testing

@testable import IAPCommandLine

/// Tables cut only on a terminal, to its width; control characters and CSV formulas neutralised.
@Suite("Terminal-safe output")
struct TerminalOutputTests {
    let long = String(repeating: "x", count: 150)

    @Test func widthComesFromTheTerminalAndWideTurnsCuttingOff() throws {
        let dir = try temporaryDirectory()
        let db = dir.appendingPathComponent("t.db").path
        #expect(iapctl(["db", "init", "--db", db]).code == 0)
        let reason = "a reason that is certainly much longer than the forty columns of this terminal window"
        let order = iapctl(["orders", "create", "--db", db, "--user", "alice", "--product", "p1"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let update = iapctl([
            "orders", "update", order, "--db", db, "--status", "paid", "--reason", reason,
        ])
        #expect(update.code == 0, "\(update)")
        let onTerminal = iapctl(["audit", "list", "--db", db], environment: ["COLUMNS": "100", "NO_COLOR": "1"], tty: true)
        #expect(!onTerminal.out.contains(reason))
        #expect(onTerminal.out.split(separator: "\n").allSatisfy { TextWidth.of(String($0)) <= 100 }, "\(onTerminal.out)")
        let wide = iapctl(["audit", "list", "--db", db, "--wide"], environment: ["COLUMNS": "100"], tty: true)
        #expect(wide.out.contains(reason))
        let piped = iapctl(["audit", "list", "--db", db], environment: ["COLUMNS": "100"])
        #expect(piped.out.contains(reason))
    }

    @Test func errorsAndNotesShowControlCharactersEscaped() throws {
        let r = iapctl(["orders", "show", "x\u{9B}2J"], environment: [:])
        #expect(r.code == 64)
        #expect(!TerminalText.containsControl(r.err.replacingOccurrences(of: "\n", with: "")), "\(r.err)")
        #expect(r.err.contains("<key>") && r.err.contains("control character"))
    }

    @Test(arguments: [
        ["orders", "update", "o1", "--status", "paid", "--reason", "ok\u{1B}[31m"],
        ["orders", "update", "o1", "--status", "paid", "--reason", "ok", "--ticket", "T\u{07}1"],
        ["orders", "update", "o1", "--status", "paid", "--reason", "ok", "--actor", "eve\u{202E}"],
        ["orders", "list", "--user", "al\u{9D}ice"],
        ["contracts", "show", "2000\u{0}1"],
    ])
    func controlCharactersAreRefusedInIdsAndAuditTexts(arguments: [String]) {
        let r = iapctl(arguments + ["--db", "/nonexistent/x.db"])
        #expect(r.code == 64, "\(arguments): \(r)")
        #expect(r.err.contains("control character"))
        #expect(
            r.err.contains("--reason") || r.err.contains("--ticket") || r.err.contains("--actor")
                || r.err.contains("--user") || r.err.contains("<key>") || r.err.contains("<id>"), "\(r.err)")
    }

    @Test func anActorFromTheEnvironmentWithControlsIsRefused() {
        let r = iapctl(
            ["orders", "update", "o1", "--status", "paid", "--reason", "ok", "--db", "/nonexistent/x.db"],
            environment: ["IAPCTL_ACTOR": "eve\u{1B}]0;pwned\u{07}"])
        #expect(r.code == 78, "\(r)")
        #expect(r.err.contains("IAPCTL_ACTOR") && r.err.contains("control character"))
        #expect(!r.err.contains("\u{1B}"))
    }

    @Test func csvRawFlagFromTheCommandLine() throws {
        let dir = try temporaryDirectory()
        let db = dir.appendingPathComponent("t.db").path
        #expect(iapctl(["db", "init", "--db", db]).code == 0)
        #expect(iapctl(["orders", "create", "--db", db, "--user", "=cmd|' /C calc'!A0", "--product", "p1"]).code == 0)
        let safe = iapctl(["orders", "list", "--db", db, "-o", "csv"])
        #expect(safe.out.contains(",'=cmd|' /C calc'!A0,"), "\(safe.out)")
        let raw = iapctl(["orders", "list", "--db", db, "-o", "csv", "--csv-raw"])
        #expect(raw.out.contains(",=cmd|' /C calc'!A0,"), "\(raw.out)")
    }

    @Test func dumbTerminalsGetNoEscapeCodes() {
        let r = iapctl(["orders", "list"], environment: ["TERM": "dumb"], tty: true, handlers: probeHandlers())
        #expect(r.out.contains("color=false"))
        let colour = iapctl(["orders", "list"], environment: ["TERM": "xterm"], tty: true, handlers: probeHandlers())
        #expect(colour.out.contains("color=true"))
    }

    /// Masking happens by field before layout, so a cut cell never shows a raw id's prefix.
    @Test func redactedTablesOnANarrowTerminalShowNoPartOfAnId() throws {
        let dir = try temporaryDirectory()
        let db = dir.appendingPathComponent("t.db").path
        #expect(iapctl(["db", "init", "--db", db]).code == 0)
        let order = iapctl(["orders", "create", "--db", db, "--user", "customer-4711", "--product", "p1"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            iapctl([
                "orders", "update", order, "--db", db, "--status", "paid", "--reason",
                "asked by jane.doe@example.org on (555) 123-4567", "--actor", "ops-lead",
            ]).code == 0)
        for args in [["orders", "show", order], ["orders", "list"], ["audit", "list"]] {
            for columns in ["40", "80"] {
                let r = iapctl(
                    args + ["--db", db, "--redact"], environment: ["COLUMNS": columns, "NO_COLOR": "1"], tty: true)
                #expect(r.code == 0, "\(r)")
                for secret in [
                    String(order.prefix(8)), "customer-4711", "customer", "jane", "example.org", "123-4567",
                    "ops-lead",
                ] {
                    #expect(!r.out.contains(secret), "\(args) at \(columns) columns shows \(secret): \(r.out)")
                    #expect(!r.err.contains(secret))
                }
            }
        }
        let list = iapctl(["orders", "list", "--db", db, "--redact", "-o", "json"])
        #expect(list.out.contains("\"order-1\"") && list.out.contains("\"user-1\""))
    }

    /// On a terminal doctor shows one block per finding, problem and fix whole.
    @Test func doctorOnATerminalShowsBlocks() throws {
        let dir = try temporaryDirectory()
        let db = dir.appendingPathComponent("t.db").path
        let examples = packageRoot.appendingPathComponent("examples").path
        #expect(iapctl(["db", "init", "--db", db]).code == 0)
        #expect(iapctl(["orders", "create", "--db", db, "--from", examples + "/orders.ndjson"]).code == 0)
        _ = iapctl([
            "notify", examples + "/notifications.ndjson", "--db", db, "--root-ca", examples + "/ca/root.pem",
            "--bundle-id", "com.example.iapctl", "--environment", "Sandbox",
        ])
        let terminal = iapctl(["doctor", "--db", db], environment: ["COLUMNS": "80", "NO_COLOR": "1"], tty: true)
        #expect(terminal.code == 1, "\(terminal)")
        #expect(terminal.out.hasPrefix("1. environment: database\n"), "\(terminal.out)")
        #expect(terminal.out.contains("  fix      iapctl doctor --environment Sandbox --db \(db)\n"))
        let piped = iapctl(["doctor", "--db", db])
        #expect(piped.out.hasPrefix("CHECK"))
    }
}
