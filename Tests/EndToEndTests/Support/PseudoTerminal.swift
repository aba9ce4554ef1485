import Foundation

/// Python 3 scripts that run iapctl on a pseudo-terminal (the pty tests): the common start and
/// the runner. A script's body uses `master`, `slave`, `screen` and `drain(seconds)`, which reads
/// what the terminal shows into `screen`.
enum PseudoTerminal {
    /// Opens the pty (as wide as `$PTY_COLUMNS` when set) and defines `drain`.
    static let prelude = """
        import os, sys, subprocess, termios, time, signal, select, fcntl, struct
        master, slave = os.openpty()
        if int(os.environ.get("PTY_COLUMNS", "0")) > 0:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, int(os.environ["PTY_COLUMNS"]), 0, 0))
        screen = b""
        def drain(t):
            global screen
            end = time.time() + t
            while time.time() < end:
                r, _, _ = select.select([master], [], [], 0.05)
                if r:
                    try: screen += os.read(master, 65536)
                    except OSError: return

        """

    /// Runs `body` with sys.argv `[waitFor, a file holding `input`, iapctl, args…]`: the scripts
    /// that feed iapctl's stdin from a file they keep open.
    static func run(
        _ body: String, waitFor: String, input: String, iapctl args: [String], environment: [String: String] = [:]
    ) throws -> Data {
        let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("open-pipe-\(UUID().uuidString)")
        try Data(input.utf8).write(to: inputFile)
        defer { try? FileManager.default.removeItem(at: inputFile) }
        return try run(body, arguments: [waitFor, inputFile.path, CLI.binary.path] + args, environment: environment)
    }

    /// Runs `prelude + body` with `arguments` (sys.argv[1...]), `input` on its stdin and
    /// `environment` added to this process's; returns what the script printed.
    static func run(
        _ body: String, arguments: [String], input: Data = Data(), columns: Int = 0, environment: [String: String] = [:]
    ) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", prelude + body] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(
            environment.merging(["PTY_COLUMNS": String(columns)]) { $1 }
        ) { $1 }
        let stdin = Pipe()
        let output = Pipe()
        process.standardInput = stdin
        process.standardOutput = output
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }
}
