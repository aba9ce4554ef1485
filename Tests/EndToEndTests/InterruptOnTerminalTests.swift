import Foundation
import Testing

/// Ctrl-C while `notify` waits on an input pipe that stays open, its output on a terminal.
@Suite("Ctrl-C on an open pipe, seen on a terminal", .serialized)
struct InterruptOnTerminalTests {
    /// Runs `iapctl ARGS` with stdout and stderr on a pseudo-terminal and `input` on a pipe that
    /// stays open; once the terminal shows `waitFor`, sends SIGINT. Returns the screen and status.
    static func interruptedOnOpenPipe(
        _ args: [String], input: String, waitFor: String, environment: [String: String]
    ) throws -> (screen: String, status: Int32) {
        let body = """
            unblock = lambda: signal.pthread_sigmask(signal.SIG_SETMASK, [])
            p = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=slave, stderr=slave, close_fds=True,
                preexec_fn=unblock)
            data = open(sys.argv[2], "rb").read()
            p.stdin.write(data); p.stdin.flush()
            deadline = time.time() + 120
            while sys.argv[1].encode() not in screen and time.time() < deadline and p.poll() is None: drain(0.2)
            p.send_signal(signal.SIGINT)
            deadline = time.time() + 60
            while p.poll() is None and time.time() < deadline: drain(0.1)
            if p.poll() is None: p.kill(); p.wait()
            drain(0.3)
            sys.stdout.write("%d\\n" % p.returncode)
            sys.stdout.buffer.write(screen)
            """
        let data = try PseudoTerminal.run(body, waitFor: waitFor, input: input, iapctl: args, environment: environment)
        let text = String(decoding: data, as: UTF8.self)
        return (String(text.drop { $0 != "\n" }.dropFirst()), Int32(text.prefix { $0 != "\n" }) ?? -1)
    }

    /// 600 notifications already applied, piped again on a pipe left open: the progress line
    /// shows all 600, and after Ctrl-C the table comes whole, then "interrupted after 600 items:
    /// nothing changed (every item was a duplicate)", last.
    @Test(.enabled(if: Examples.hasPython)) func theStopLineComesAfterTheTable() throws {
        let cli = try Examples.exampleDatabase()
        let text = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        // Lines 2–5 of the examples were applied by exampleDatabase: now each is a duplicate.
        let applied = text.split(separator: "\n")[1...4].joined(separator: "\n") + "\n"
        let input = String(repeating: applied, count: 150)
        let r = try Self.interruptedOnOpenPipe(
            ["notify"] + Examples.exampleTrust, input: input, waitFor: "600 items", environment: cli.environment)
        #expect(r.status == 130, "\(r.screen.suffix(2000))")
        // The progress line reached the true count (it was left at the last multiple of 256).
        #expect(r.screen.contains("600 items… 600 duplicate"), "\(r.screen.suffix(2000))")
        let lines = r.screen.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").map(String.init)
        let rows = lines.filter { $0.contains("  duplicate  ") }
        #expect(rows.count == 600)
        let stop = try #require(lines.lastIndex { $0.contains("interrupted after 600 items") }, "\(lines.suffix(5))")
        #expect(lines[stop].hasSuffix("nothing changed (every item was a duplicate); re-running is safe"), "\(lines[stop])")
        // Every row comes before it: the line is not inside the table.
        let lastRow = try #require(lines.lastIndex { $0.contains("  duplicate  ") })
        #expect(lastRow < stop)
        #expect(stop == lines.count - 1, "\(lines.suffix(3))")
    }
}
