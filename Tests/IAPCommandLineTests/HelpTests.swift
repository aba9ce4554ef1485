import Glibc
import Testing

@testable import IAPCommandLine

@Suite("Help and version")
struct HelpTests {
    static let paths = CommandTree.root.allPaths()

    @Test(arguments: paths)
    func helpOnEveryCommand(path: [String]) {
        for flag in ["--help", "-h"] {
            let result = iapctl(path + [flag])
            #expect(result.code == 0)
            #expect(result.err.isEmpty)
            let spec = CommandTree.root.descendant(at: path)!
            #expect(result.out.contains(spec.abstract.prefix(30)))
            #expect(result.out.contains("Usage: iapctl"))
        }
        let viaHelp = iapctl(["help"] + path)
        #expect(viaHelp.code == 0)
        #expect(viaHelp.out == iapctl(path + ["--help"]).out)
    }

    @Test(arguments: paths.filter { CommandTree.root.descendant(at: $0)?.isRunnable == true && !$0.isEmpty })
    func everyCommandTeaches(path: [String]) {
        let spec = CommandTree.root.descendant(at: path)!
        #expect(spec.examples.count >= 1, "\(path) has no examples")
        #expect(!spec.abstract.isEmpty)
        let help = iapctl(path + ["--help"]).out
        #expect(help.contains("Examples:"))
        for option in CommandTree.root.effectiveOptions(at: path) {
            #expect(help.contains("--\(option.long)"), "\(path) help lacks --\(option.long)")
        }
    }

    @Test func helpWinsOverOtherErrors() {
        let result = iapctl(["orders", "list", "--bogus", "--help"])
        #expect(result.code == 0)
        #expect(result.out.contains("iapctl orders list"))
    }

    @Test func topLevelHelpListsExitCodesAndCommands() {
        let result = iapctl(["--help"])
        // Lines are wrapped at 80 columns: compare with spaces and newlines collapsed.
        let flat = result.out.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        for code in ExitCode.allCases {
            #expect(flat.contains(code.meaning.split(separator: " ").joined(separator: " ")))
        }
        for name in ["db", "orders", "contracts", "notify", "verify", "restore", "completion", "help"] {
            #expect(result.out.contains("\n  \(name) "))
        }
        #expect(!result.out.contains("__man"))
    }

    @Test func commandHelpShowsOwnOptionsBeforeGlobal() throws {
        let out = iapctl(["orders", "list", "--help"]).out
        let own = try #require(out.range(of: "--status <status>"))
        let global = try #require(out.range(of: "Global options ("))
        #expect(own.lowerBound < global.lowerBound)
        // The global options are listed once, by `help options`, not in every command's help.
        #expect(!out.contains("--csv-raw  "))
        let options = iapctl(["help", "options"])
        #expect(options.code == 0)
        #expect(options.out.contains("--db <url>") && options.out.contains("--csv-raw"))
        for command in [[], ["orders", "list"], ["notify"], ["help", "options"]] {
            let text = iapctl(command + (command.first == "help" ? [] : ["--help"])).out
            for line in text.split(separator: "\n") where !line.hasPrefix("  iapctl ") {
                #expect(line.count <= 80, "\(command): \(line)")
            }
        }
        let redact = iapctl(["help", "options"]).out.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        for masked in ["user ids", "order numbers", "contract ids", "notification UUIDs", "actors", "e-mail", "phone"] {
            #expect(redact.contains(masked), "\(masked)")
        }
        let flat = out.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(flat.contains("[values: pending, paid, refunded, revoked]"))
    }

    @Test func version() {
        let result = iapctl(["--version"])
        #expect(result.code == 0)
        #expect(result.out == "iapctl \(CommandTree.version)\n")
    }

    /// One in-process run against `root`.
    static func run(_ arguments: [String], root: CommandSpec) -> RunResult {
        let out = BufferSink()
        let err = BufferSink()
        let code = runIAPCtl(
            arguments: arguments, environment: [:], stdin: InputReader(string: ""), stdout: out, stderr: err, root: root)
        return RunResult(code: code, out: out.text, err: err.text)
    }

    /// `iapctl --version`, `verify …` and `notify …` run against a root with only the commands they
    /// need (`CommandTree.root(for:configInEnvironment:)`): each prints exactly what the whole tree
    /// prints — help, usage errors, refusals — and any config file brings back the whole tree.
    @Test func versionVerifyAndNotifyNeedNoOtherCommand() {
        let runs: [[String]] = [
            ["--version"], ["verify", "--help"], ["notify", "--help"], ["verify", "-h"], ["verify"],
            ["verify", "--bogus"], ["notify", "--bundle-i", "x"], ["verify", "--bundle-id"],
            ["verify", "/nonexistent/one.jws", "--bundle-id", "com.example", "-v"],
            ["notify", "--db", "/nonexistent/x.db", "--bundle-id", "com.example", "/dev/null"],
            ["notify", "--db", "/nonexistent/x.db", "--bundle-id", "com.example", "--redact", "-o", "json", "/dev/null"],
            ["verify", "--environment", "Nowhere", "--bundle-id", "com.example", "/dev/null"],
        ]
        for arguments in runs {
            let small = CommandTree.root(for: arguments, configInEnvironment: false)
            #expect(small.subcommands.count <= 1, "\(arguments)")
            let whole = Self.run(arguments, root: CommandTree.root)
            let alone = Self.run(arguments, root: small)
            #expect(alone.code == whole.code, "\(arguments)")
            #expect(alone.out == whole.out, "\(arguments)")
            #expect(alone.err == whole.err, "\(arguments)")
        }
        let whole = CommandTree.root.subcommands.count
        #expect(CommandTree.root(for: ["verify", "--config", "c.json"], configInEnvironment: false).subcommands.count == whole)
        #expect(CommandTree.root(for: ["notify", "--config=c.json"], configInEnvironment: false).subcommands.count == whole)
        #expect(CommandTree.root(for: ["verify", "x.jws"], configInEnvironment: true).subcommands.count == whole)
        #expect(CommandTree.root(for: ["orders", "list"], configInEnvironment: false).subcommands.count == whole)
        #expect(CommandTree.root(for: ["help", "verify"], configInEnvironment: false).subcommands.count == whole)
        #expect(CommandTree.root(for: ["--version", "--help"], configInEnvironment: false).subcommands.count == whole)
        #expect(CommandTree.root(for: ["--version"], configInEnvironment: false).subcommands.isEmpty)
    }

    @Test func aMissingDatabaseIsNoInputAndIsNotCreated() {
        let path = "/tmp/iapctl-missing-\(UInt64.random(in: 0...UInt64.max)).db"
        let result = iapctl(["db", "status", "--db", path])
        #expect(result.code == 66)
        #expect(result.err.contains("iapctl db init"))
        #expect(access(path, F_OK) != 0)
    }

    @Test func everyCommandRunsOrIsAGroup() {
        for path in CommandTree.root.allPaths(includeHidden: true) {
            let spec = CommandTree.root.descendant(at: path)!
            #expect(spec.isRunnable || !spec.subcommands.isEmpty, "\(path): a command runs, or is a group")
            // Both (`customer KEY` beside `customer note …`) only with an argument the subcommands' names stand apart from.
            if spec.isRunnable && !spec.subcommands.isEmpty {
                #expect(!spec.arguments.isEmpty, "\(path): a command that runs and has subcommands takes an argument")
            }
        }
    }

    @Test func statusValuesMatchTheSchema() {
        let list = CommandTree.root.descendant(at: ["contracts", "list"])!
        #expect(
            list.options.first { $0.long == "status" }?.allowedValues
                == ["active", "canceled", "grace_period", "billing_retry", "expired", "revoked"])
    }
}
