import Foundation
import Testing

/// `tail -f webhook.log | iapctl notify` at a terminal: the input is a pipe that stays open, the
/// output a terminal. Each item is applied as it arrives, and the terminal shows it counted then,
/// not only at the end of the input.
@Suite("Progress on an open pipe, seen on a terminal", .serialized)
struct OpenPipeProgressTests {
    /// Runs `iapctl ARGS` with stdout and stderr on a pseudo-terminal and `input` written to a pipe
    /// kept open; waits (at most 20 s) for the terminal to show `waitFor`, then closes the input.
    /// Returns what the terminal showed before the input was closed, all it showed, whether the
    /// program was still running (waiting on the pipe) when `waitFor` showed, and the exit status.
    static func onOpenPipe(
        _ args: [String], input: String, waitFor: String, environment: [String: String]
    ) throws -> (beforeClose: String, screen: String, wasRunning: Bool, status: Int32) {
        let body = """
            p = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=slave, stderr=slave, close_fds=True)
            p.stdin.write(open(sys.argv[2], "rb").read()); p.stdin.flush()
            wanted = sys.argv[1].encode()
            deadline = time.time() + 20
            while wanted not in screen and time.time() < deadline and p.poll() is None: drain(0.1)
            running = p.poll() is None
            before = len(screen)
            p.stdin.close()
            deadline = time.time() + 60
            while p.poll() is None and time.time() < deadline: drain(0.1)
            if p.poll() is None: p.kill(); p.wait()
            drain(0.3)
            sys.stdout.write("%d %d %d\\n" % (p.returncode, before, 1 if running else 0))
            sys.stdout.buffer.write(screen)
            """
        let data = try PseudoTerminal.run(body, waitFor: waitFor, input: input, iapctl: args, environment: environment)
        let newline = data.firstIndex(of: 10) ?? data.endIndex
        let head = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        let screen = data[data.index(after: min(newline, data.endIndex - 1))...]
        let before = head.count == 3 ? min(head[1], screen.count) : 0
        return (
            String(decoding: screen.prefix(before), as: UTF8.self), String(decoding: screen, as: UTF8.self),
            head.count == 3 && head[2] == 1, Int32(head.first ?? -1)
        )
    }

    /// One notification written to a pipe that stays open: the terminal shows it counted as
    /// applied while `notify` still waits for more; closing the input ends the batch as usual
    /// (the table, then the summary), and the database has what the count said.
    @Test(.enabled(if: Examples.hasPython)) func theAppliedCountShowsBeforeTheInputEnds() throws {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--from", CLI.packageRoot.appendingPathComponent("examples/orders.ndjson").path, "-q"])
        let line = try Examples.exampleNotification() + "\n"
        let r = try Self.onOpenPipe(
            ["notify"] + Examples.exampleTrust, input: line, waitFor: "1 item… 1 applied", environment: cli.environment)
        #expect(r.wasRunning, "the count showed while the pipe was still open: \(r.screen)")
        #expect(r.beforeClose.contains("1 item… 1 applied"), "\(r.beforeClose)")
        #expect(r.status == 0, "\(r.screen)")
        // At the end the progress line is cleared and the batch ends as it does in a file.
        #expect(r.screen.contains("notify: 1 item: 1 applied"), "\(r.screen)")
        #expect(r.screen.contains("  applied  "), "the table at the end: \(r.screen)")
        let contract = try cli.ok(["contracts", "show", "2000000900000001", "-o", "json"]).jsonObject()
        #expect((contract["contract"] as? [String: Any])?["status"] as? String == "active", "\(contract)")
    }
}
