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
        // Lines are wrapped at 80 columns (#26): compare with spaces and newlines collapsed.
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
        // #26: the global options are listed once, by `help options`, not in every command's help.
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

    /// `iapctl --version` alone runs against `CommandTree.versionRoot` (no commands built): it prints
    /// exactly what the whole tree prints, and that root knows no other option or command.
    @Test func versionAloneNeedsNoCommandTree() {
        func run(_ arguments: [String], root: CommandSpec) -> (code: Int32, out: String, err: String) {
            let out = BufferSink()
            let err = BufferSink()
            let code = runIAPCtl(
                arguments: arguments, environment: [:], stdin: InputReader(string: ""), stdout: out, stderr: err,
                root: root)
            return (code, out.text, err.text)
        }
        let whole = run(["--version"], root: CommandTree.root)
        let alone = run(["--version"], root: CommandTree.versionRoot)
        #expect(alone.code == whole.code)
        #expect(alone.out == whole.out)
        #expect(alone.err == whole.err)
        #expect(CommandTree.versionRoot.subcommands.isEmpty)
        #expect(CommandTree.versionRoot.name == CommandTree.root.name)
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
            #expect(spec.isRunnable != !spec.subcommands.isEmpty, "\(path): a command runs, or is a group")
        }
    }

    @Test func statusValuesMatchTheSchema() {
        let list = CommandTree.root.descendant(at: ["contracts", "list"])!
        #expect(
            list.options.first { $0.long == "status" }?.allowedValues
                == ["active", "canceled", "grace_period", "billing_retry", "expired", "revoked"])
    }
}
