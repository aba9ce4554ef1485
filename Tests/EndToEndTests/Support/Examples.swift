import Foundation
import Testing

/// The repository's examples (examples/: orders, signed notifications, the example CA) as the
/// end-to-end tests use them, and iapctl run on a pseudo-terminal.
enum Examples {
    /// The words bash splits `command` into (nothing is run: printf shows them).
    static func shellWords(_ command: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let script = "set -- " + command + "; printf '%s\\0' \"$@\""
        process.arguments = ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\0").map(String.init)
    }

    /// The example CA's trust options and a 15 KB notification of the examples.
    static let exampleTrust = [
        "--root-ca", CLI.packageRoot.appendingPathComponent("examples/ca/root.pem").path, "--bundle-id",
        "com.example.iapctl", "--environment", "Sandbox",
    ]
    static func exampleNotification() throws -> String {
        let text = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson"), encoding: .utf8)
        return String(text.split(separator: "\n")[1])
    }

    /// Runs `iapctl ARGS` on a pseudo-terminal (python3's pty), types `input`, and reports what
    /// the terminal showed, the exit status and whether canonical mode was back on afterwards.
    /// With `signal`, sends it instead of finishing the input; with `columns`, the terminal is
    /// that wide; `environment` is added to the run's (a `CLI`'s, for its database).
    static func onTerminal(
        _ args: [String], input typed: String, signal: Int32? = nil, columns: Int = 0, environment: [String: String] = [:]
    ) throws -> (screen: String, status: Int32, canonical: Bool) {
        let body = """
            unblock = lambda: signal.pthread_sigmask(signal.SIG_SETMASK, [])
            p = subprocess.Popen(sys.argv[2:], stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                preexec_fn=unblock)
            data = sys.stdin.buffer.read()
            sig = int(sys.argv[1])
            time.sleep(0.5)
            if sig:
                drain(0.3)
                p.send_signal(sig)
            elif not data:
                # Nothing to type: a run that ends by itself is never interrupted by an echoed
                # newline landing in the middle of its output; one still reading gets an end of file.
                wait = time.time() + 3
                while p.poll() is None and time.time() < wait: drain(0.05)
                if p.poll() is None: os.write(master, b"\\x04")
            else:
                for i in range(0, len(data), 1024):
                    os.write(master, data[i:i+1024]); drain(0.01)
                os.write(master, b"\\n\\x04")
            deadline = time.time() + 60
            while p.poll() is None and time.time() < deadline: drain(0.1)
            if p.poll() is None: p.kill(); p.wait()
            drain(0.2)
            canonical = bool(termios.tcgetattr(slave)[3] & termios.ICANON)
            sys.stdout.write("%d %d\\n" % (p.returncode, canonical))
            sys.stdout.buffer.write(screen)
            """
        let data = try PseudoTerminal.run(
            body, arguments: [String(signal ?? 0), CLI.binary.path] + args, input: Data(typed.utf8), columns: columns,
            environment: environment)
        let text = String(decoding: data, as: UTF8.self)
        let first = text.prefix { $0 != "\n" }.split(separator: " ")
        return (String(text.drop { $0 != "\n" }), Int32(first.first ?? "") ?? -1, first.last == "1")
    }

    static var hasPython: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") }

    /// The examples replayed into a fresh database (alice's contract 2000000900000001).
    static func exampleDatabase() throws -> CLI {
        let cli = try CLI()
        try cli.ok(["db", "init", "-q"])
        try cli.ok(["orders", "create", "--from", CLI.packageRoot.appendingPathComponent("examples/orders.ndjson").path, "-q"])
        _ = try cli.run(
            ["notify", CLI.packageRoot.appendingPathComponent("examples/notifications.ndjson").path, "-q"]
                + Self.exampleTrust)
        return cli
    }
}
