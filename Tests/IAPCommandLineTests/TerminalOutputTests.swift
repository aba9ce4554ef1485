import AppStoreJWS
import Testing

@testable import IAPCommandLine

/// Issue #14.4 (tables cut only on a terminal, to its width) and #18.14–15 (control characters,
/// CSV formulas).
@Suite("Terminal-safe output")
struct TerminalOutputTests {
    let long = String(repeating: "x", count: 150)

    @Test func tablesAreNeverCutOffATerminal() {
        let records: [Record] = [["no": .string("a"), "detail": .string(long)]]
        let text = OutputRenderer.render(
            records: records, columns: ["no", Column("detail", maxWidth: 20)], format: .table)
        #expect(text.contains(long))
        #expect(!text.contains("…"))
    }

    @Test func onATerminalTablesFitItsWidth() {
        let records: [Record] = [
            ["no": .string("order-1"), "user": .string("alice"), "detail": .string(long)],
            ["no": .string("order-2"), "user": .string("bob"), "detail": .string("short")],
        ]
        let columns: [Column] = ["no", "user", Column("detail", maxWidth: 20)]
        for width in [40, 80, 120] {
            let text = OutputRenderer.render(
                records: records, columns: columns, format: .table, style: OutputStyle(width: width))
            for line in text.split(separator: "\n") { #expect(TextWidth.of(String(line)) <= width, "\(width): \(line)") }
            #expect(text.contains("order-1") && text.contains("alice") && text.contains("…"))
        }
        // A table that fits is not touched.
        let narrow: [Record] = [["no": .string("order-1"), "detail": .string("fits")]]
        #expect(
            OutputRenderer.render(
                records: narrow, columns: ["no", Column("detail", maxWidth: 20)], format: .table,
                style: OutputStyle(width: 80))
                == "NO       DETAIL\norder-1  fits\n")
    }

    @Test func columnsThatCannotFitAreLeftOutAndSaidSo() {
        let uuid = "7b1f0c1e-2d3a-4b5c-8d6e-0f1a2b3c4d5e"
        let record: Record = [
            "no": .string(uuid), "user_id": .string("alice"), "product_id": .string("com.example.app.monthly"),
            "status": .string("paid"), "trade_no": .string("2000000900000001"),
            "origin_no": .string("2000000900000001"), "expires_date": .int(1_757_035_472_000),
            "updated_at": .int(1_757_035_472_000),
        ]
        let text = OutputRenderer.render(records: [record], format: .table, style: OutputStyle(width: 80))
        let lines = text.split(separator: "\n")
        #expect(lines.allSatisfy { TextWidth.of(String($0)) <= 80 }, "\(text)")
        #expect(lines[0].hasSuffix(": --wide)"), "\(text)")
        #expect(lines[0].hasPrefix("NO"))
        #expect(text.contains("alice") && text.contains("paid"))
        // The row's key (the first column) is never cut: it is what support copies into a ticket.
        #expect(text.contains(uuid), "\(text)")
        // Off a terminal nothing is left out.
        #expect(OutputRenderer.render(records: [record], format: .table).contains("2025-09-05T01:24:32Z"))
    }

    @Test func instructionsAndHintColumnsAreNeverCut() {
        let hint = "no contract 42; recorded for replay (fix the cause, then run `iapctl notify --replay-unmatched`)"
        let records: [Record] = [
            ["line": .int(1), "detail": .string(hint), "fix": .string(long)],
            ["line": .int(2), "detail": .string(long), "fix": .string("x")],
        ]
        let columns: [Column] = ["line", Column("detail", maxWidth: 30), Column("fix", keepWhole: true)]
        let text = OutputRenderer.render(
            records: records, columns: columns, format: .table, style: OutputStyle(width: 80))
        #expect(text.contains(hint))
        #expect(text.contains(long))
    }

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

    @Test func controlCharactersAreShownNeverObeyed() {
        let hostile = "a\u{1B}]52;c;aGk=\u{07}b\u{9B}31mc\u{9D}0;t\u{9C}d\u{202E}fdp.exe\u{2066}"
        let records: [Record] = [["user_id": .string(hostile)]]
        for style in [OutputStyle(), OutputStyle(width: 80)] {
            let text = OutputRenderer.render(records: records, format: .table, style: style)
            #expect(!TerminalText.containsControl(text.replacingOccurrences(of: "\n", with: "")), "\(text)")
            #expect(text.contains("\\u{1b}]52") && text.contains("\\u{9b}") && text.contains("\\u{202e}"))
            let view = OutputRenderer.render(document: records[0], format: .table, style: style)
            #expect(!TerminalText.containsControl(view.replacingOccurrences(of: "\n", with: "")))
        }
        // CSV to a terminal is made visible too; to a file it stays exact.
        let toTerminal = OutputRenderer.render(
            records: records, format: .csv, style: OutputStyle(csvEscapesControls: true))
        #expect(!TerminalText.containsControl(toTerminal.replacingOccurrences(of: "\n", with: "")))
        let toFile = OutputRenderer.render(records: records, format: .csv)
        #expect(toFile.contains(hostile))
        // JSON on a terminal: C1 and bidi as \u escapes, still the same JSON.
        let json = TerminalText.jsonEscaped(JSONValue.object([("a", .string(hostile))]).serialized())
        #expect(!TerminalText.containsControl(json))
        #expect((try? JSONText.parse(json)) == .object([("a", .string(hostile))]))
    }

    /// The last line of defence on a terminal sink: only newline, tab, CR and iapctl's own
    /// bold/reset/erase sequences pass; every other control character is shown escaped.
    @Test func terminalSinksLetNoForeignControlThrough() {
        let text = "a\u{9B}2Jb\u{1B}[1mBOLD\u{1B}[0m\u{1B}]52;c;aGk=\u{07}\u{202E}x\r\u{1B}[Kn\tm\n"
        let safe = TerminalText.terminalSafe(text)
        #expect(safe == "a\\u{9b}2Jb\u{1B}[1mBOLD\u{1B}[0m\\u{1b}]52;c;aGk=\\u{7}\\u{202e}x\r\u{1B}[Kn\tm\n", "\(safe)")
        #expect(TerminalText.terminalSafe("plain") == "plain")
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

    @Test func csvNeutralisesFormulasUnlessRaw() {
        let records: [Record] = [
            [
                "a": .string("=HYPERLINK(\"http://x\")"), "b": .string("+1"), "c": .string("-2+3"),
                "d": .string("@SUM(A1)"), "e": .string("\tx"), "f": .string("\rx"), "g": .int(-5),
                "h": .string("plain"), "i": .double(-1.5),
            ]
        ]
        let text = OutputRenderer.render(records: records, format: .csv)
        let row = text.split(separator: "\n")[1]
        #expect(row.hasPrefix("\"'=HYPERLINK(\"\"http://x\"\")\",'+1,'-2+3,'@SUM(A1),'\tx,\"'\rx\",-5,plain,-1.5"), "\(row)")
        let raw = OutputRenderer.render(records: records, format: .csv, style: OutputStyle(csvRaw: true))
        #expect(raw.split(separator: "\n")[1].hasPrefix("\"=HYPERLINK"))
        // The same in detail views, and from the command line.
        let detail = DetailView(sections: [.init(key: "s", title: "S", content: .fields(records[0]))])
        #expect(OutputRenderer.render(detail: detail, format: .csv).contains("s,,a,\"'=HYPERLINK"))
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

    /// Issue #14.2: masking happens by field before layout, so a cut cell never shows a raw id's prefix.
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

    /// #14.4/#14.8: on a terminal doctor shows one block per finding, problem and fix whole.
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
