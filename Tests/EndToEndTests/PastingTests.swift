import Foundation
import Testing

/// Pasting at a terminal and copy-paste damage.
@Suite("Pasting: cut copies, rows as they are decided, a JWS as the argument", .serialized)
struct PastingTests {
    /// Types `line` and Enter at a pseudo-terminal running `iapctl ARGS`, waits, then Ctrl-D.
    /// Returns what the screen showed before Ctrl-D and after it.
    static func pasteThenEnd(_ args: [String], line: String, environment: [String: String] = [:]) throws -> (
        beforeEnd: String, all: String
    ) {
        let body = """
            p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
            data = sys.stdin.buffer.read()
            drain(0.5)
            for i in range(0, len(data), 1024):
                os.write(master, data[i:i+1024]); drain(0.01)
            os.write(master, b"\\n")
            drain(4)
            before = len(screen)
            os.write(master, b"\\x04")
            deadline = time.time() + 30
            while p.poll() is None and time.time() < deadline: drain(0.1)
            if p.poll() is None: p.kill(); p.wait()
            drain(0.2)
            sys.stdout.write("%d\\n" % before)
            sys.stdout.buffer.write(screen)
            """
        let data = try PseudoTerminal.run(
            body, arguments: [CLI.binary.path] + args, input: Data(line.utf8), environment: environment)
        let bytes = Array(data)
        let newline = bytes.firstIndex(of: 10) ?? 0
        let before = Int(String(decoding: bytes[..<newline], as: UTF8.self)) ?? 0
        let screen = Array(bytes[(newline + 1)...])
        return (String(decoding: screen.prefix(before), as: UTF8.self), String(decoding: screen, as: UTF8.self))
    }

    /// A row shows on the item's Enter, not at Ctrl-D; Ctrl-D is not echoed as `^D` glued to the header.
    @Test(.enabled(if: Examples.hasPython)) func eachRowShowsWhenItIsDecided() throws {
        let jws = try Examples.exampleNotification()
        let r = try Self.pasteThenEnd(["verify"] + Examples.exampleTrust, line: jws)
        #expect(r.beforeEnd.contains("VALID"), "\(r.beforeEnd.suffix(1500))")
        #expect(!r.all.contains("^D"), "\(r.all.suffix(1500))")
        // A batch's table row too, its header on a line of its own.
        let cli = try Examples.exampleDatabase()
        let restored = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/restored.ndjson"), encoding: .utf8)
        let line = String(restored.split(separator: "\n")[0])
        let restore = try Self.pasteThenEnd(
            ["restore", "--user", "alice"] + Examples.exampleTrust, line: line, environment: cli.environment)
        #expect(restore.beforeEnd.contains("restorable"), "\(restore.beforeEnd.suffix(1500))")
        #expect(!restore.all.contains("^D"))
        let lines = restore.all.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        #expect(lines.contains { $0.replacingOccurrences(of: "\u{1B}[1m", with: "").hasPrefix("LINE") }, "\(lines.suffix(5))")
    }

    /// A JWS cut inside its signature is copy-paste damage (65 and the hint), not a signature
    /// verdict (2); the 4,095-byte terminal limit is named only when the copy stopped there.
    @Test func aJWSCutInsideItsSignatureIsCutShort() throws {
        let cli = try CLI()
        let jws = try Examples.exampleNotification()
        let cut = try cli.run(["verify"] + Examples.exampleTrust, stdin: String(jws.dropLast(30)) + "\n")
        #expect(cut.status == 65, "\(cut)")
        #expect(cut.stdout.contains("this looks cut short") && cut.stdout.contains("not a forgery"), "\(cut)")
        #expect(!cut.stdout.contains("4,095"))
        let short = try cli.run(["verify"] + Examples.exampleTrust, stdin: String(jws.prefix(5000)) + "\n")
        #expect(short.status == 65 && short.stdout.contains("cut short") && !short.stdout.contains("4,095"), "\(short)")
        let atLimit = try cli.run(["verify"] + Examples.exampleTrust, stdin: String(jws.prefix(4095)) + "\n")
        #expect(atLimit.stdout.contains("4,095"), "\(atLimit)")
        // Apple's notification whose signature lost its end (fixture 90, 58 of 64 bytes): the same.
        let real = try cli.run([
            "verify",
            CLI.packageRoot.appendingPathComponent(
                "Tests/EndToEndTests/Fixtures/real/90-genius-subscribed-resubscribe-corrupted-signature.jws"
            ).path,
            "--bundle-id", "GeniusParentingAI", "--environment", "Sandbox", "--app-apple-id", "1",
        ])
        #expect(real.status == 65 && real.stdout.contains("its signature has 78 of the 86 characters"), "\(real)")
        // Cut inside the signature at every length, 4n+1 ones (85, 43) included, which are not base64url.
        for kept in [85, 84, 43, 1] {
            let cutJWS = String(jws.dropLast(86 - kept))
            let result = try cli.run(["verify"] + Examples.exampleTrust, stdin: cutJWS + "\n")
            #expect(
                result.status == 65 && result.stdout.contains("its signature has \(kept) of the 86 characters"),
                "\(kept): \(result)")
        }
        // A whole JWS still verifies.
        #expect(try cli.run(["verify"] + Examples.exampleTrust, stdin: jws + "\n").status == 0)
    }

    /// A JWS given where a file name goes is not echoed back 15 KB long: it is named as a JWS.
    @Test func aJWSAsTheArgumentIsNamed() throws {
        let cli = try CLI()
        let jws = try Examples.exampleNotification()
        let r = try cli.run(["verify", jws] + Examples.exampleTrust)
        #expect(r.status == 64, "\(r.stderr.prefix(500))")
        #expect(r.stderr.contains("looks like a JWS") && r.stderr.contains("paste it"), "\(r.stderr.prefix(500))")
        #expect(r.stderr.utf8.count < 1000)
        // A missing file is still a missing file.
        let missing = try cli.run(["verify", "nope.jws"] + Examples.exampleTrust)
        #expect(missing.status == 66 && missing.stderr.contains("cannot open nope.jws"))
    }
}
