import Foundation
import Testing

@testable import CommandLineKit

/// A small program with no app knowledge: the framework's behaviour is tested on it.
enum Toy {
    enum Color: String, CaseIterable, Sendable {
        case red, green, blue
    }

    static let color = OptionSpec(
        "color", valueName: "color", help: "A colour.", allowedValues: Color.allCases.map(\.rawValue),
        environmentVariable: "TOY_COLOR", configKey: "color", defaultValue: "red")
    static let count = OptionSpec("count", valueName: "n", help: "How many.", validation: .positiveInteger)
    static let tag = OptionSpec("tag", valueName: "tag", help: "A tag.", kind: .repeatable, configKey: "tag")

    static func paint(_ invocation: Invocation) throws -> ExitCode {
        let color = try invocation.value(Toy.color, as: Color.self)
        invocation.print("paint \(color?.rawValue ?? "-") \(invocation.arguments.joined(separator: ","))")
        invocation.print("tags \(invocation.values(Toy.tag).joined(separator: ","))")
        if let count = invocation.parsed.value(Toy.count) { invocation.print("count \(count)") }
        return .success
    }

    static let root = CommandSpec(
        name: "toy",
        abstract: "A toy program.",
        discussion: "It paints things.",
        examples: [CommandExample("toy paint wall", "Paint the wall red.")],
        subcommands: [
            CommandSpec(
                name: "paint", abstract: "Paint something.", examples: [CommandExample("toy paint door", "Paint.")],
                options: [color, count, tag], arguments: [ArgumentSpec("thing", help: "What to paint.")],
                handler: paint),
            CommandSpec(
                name: "shed", abstract: "Shed things.",
                subcommands: [
                    CommandSpec(
                        name: "leaves", abstract: "Shed leaves.",
                        handler: { invocation in
                            invocation.note("shedding")
                            return ExitCode(5)
                        })
                ]),
            CommandSpec(
                name: "help", abstract: "Show help.",
                arguments: [ArgumentSpec("command", help: "The path.", isOptional: true, isRepeating: true)],
                handler: HelpCommand.run, inheritsOptions: false),
            CommandSpec(
                name: CompletionCommand.name, abstract: "Print a completion script.",
                arguments: [
                    ArgumentSpec(
                        "shell", help: "The shell.", allowedValues: CompletionScripts.Shell.allCases.map(\.rawValue))
                ],
                handler: CompletionCommand.run, inheritsOptions: false),
        ],
        options: [
            .flag("quiet", short: "q", help: "Less.", isInherited: true, section: "Global options"),
            .flag("version", help: "Print the version."),
            OptionSpec(
                "config", valueName: "file", help: "Settings.", environmentVariable: "TOY_CONFIG", isInherited: true,
                section: "Global options", completion: .file),
        ],
        program: ProgramInfo(
            version: "9.9", exitStatuses: [.init(.success, "fine"), .init(ExitCode(5), "shed")], manDate: "2026-01-01",
            displaySetting: { $0.replacing("secret", with: "******") })
    )
}

struct ToyRun {
    var code: Int32
    var out: String
    var err: String
}

func toy(
    _ arguments: [String], environment: [String: String] = [:], stdin: String = "", root: CommandSpec = Toy.root
) -> ToyRun {
    let out = BufferSink()
    let err = BufferSink()
    let code = runCommandLine(
        root: root, arguments: arguments, environment: environment, stdin: InputReader(string: stdin), stdout: out,
        stderr: err)
    return ToyRun(code: code, out: out.text, err: err.text)
}

@Suite("A program built on CommandLineKit")
struct ToyProgramTests {
    @Test func handlersRunFromTheTree() {
        let run = toy(["paint", "wall", "--color", "GREEN", "--tag", "a", "--tag", "b"])
        #expect(run.code == 0)
        #expect(run.out == "paint green wall\ntags a,b\n")
        let shed = toy(["shed", "leaves"])
        #expect(shed.code == 5)
        #expect(shed.err == "shedding\n")
        #expect(toy(["shed", "leaves", "-q"]).err.isEmpty)
    }

    @Test func optionsAreReadByTheirSpecAndChoicesByTheirEnum() throws {
        #expect(toy(["paint", "x", "--count", "3"]).out == "paint red x\ntags \ncount 3\n")
        #expect(OptionSpec.choices(Toy.Color.self) == ["red", "green", "blue"])
        let variant = Toy.count.with(help: "Other help.", isRequired: true)
        #expect(variant.long == "count" && variant.help == "Other help." && variant.isRequired)
        // A spec whose allowed values and enum disagree is the program's error (70), not the user's.
        let wrong = OptionSpec("color", valueName: "color", help: "A colour.", allowedValues: ["red", "pink"])
        let root = Toy.root.replacingHandler(at: ["paint"]) { invocation in
            _ = try invocation.value(wrong, as: Toy.Color.self)
            return .success
        }
        var tree = root
        tree.subcommands[0].options[0] = wrong
        let run = toy(["paint", "x", "--color", "pink"], root: tree)
        #expect(run.code == 70)
        #expect(run.err.hasPrefix("error: --color: 'pink' is not a Color"))
    }

    @Test func aGroupWithoutCommandIsAUsageError() {
        let run = toy(["shed"])
        #expect(run.code == 64)
        #expect(run.err.hasPrefix("error: missing subcommand\nhint: commands: leaves\nUsage: toy shed <command>"))
    }

    @Test func replacingAndWrappingHandlers() {
        let replaced = Toy.root.replacingHandler(at: ["shed", "leaves"]) { invocation in
            invocation.print("replaced")
            return .success
        }
        #expect(toy(["shed", "leaves"], root: replaced).out == "replaced\n")
        let wrapped = Toy.root.mapHandlers { handler in
            { invocation in
                invocation.print("before")
                return try handler(invocation)
            }
        }
        #expect(toy(["paint", "x"], root: wrapped).out == "before\npaint red x\ntags \n")
        #expect(Toy.root.isRunnable == false)
        #expect(Toy.root.descendant(at: ["paint"])?.isRunnable == true)
    }

    @Test func versionAndExitTableComeFromTheProgramInfo() {
        #expect(toy(["--version"]).out == "toy 9.9\n")
        let help = toy(["--help"]).out
        #expect(help.contains("Exit status:\n    0  fine\n    5  shed\n"))
        #expect(help.contains("See 'toy help <command>'"))
    }

    @Test func usageErrorsNameTheProgram() {
        let run = toy(["paint", "x", "--colour", "red"])
        #expect(run.code == 64)
        #expect(run.err.contains("error: unknown option '--colour'\nhint: did you mean '--color'?\nUsage: toy paint"))
        let unknown = toy(["pant"])
        #expect(unknown.err.hasPrefix("error: unknown command 'pant'\nhint: did you mean 'paint'?"))
        let value = toy(["paint", "x", "--color", "rde"])
        #expect(value.err.hasPrefix("error: --color: 'rde' is not a valid color; allowed: red, green, blue"))
        #expect(toy(["help", "nope"]).err.hasPrefix("error: no command 'nope'"))
    }

    @Test func settingsFromTheEnvironmentAndVerboseDisplayMasksValues() {
        #expect(toy(["paint", "x"], environment: ["TOY_COLOR": "blue"]).out.hasPrefix("paint blue x\n"))
        let bad = toy(["paint", "x"], environment: ["TOY_COLOR": "pink"])
        #expect(bad.code == 78)
        #expect(bad.err.hasPrefix("error: environment variable TOY_COLOR: 'pink' is not a valid color"))
        let missing = toy(["paint", "x", "--config", "/nonexistent/toy.json"])
        #expect(missing.code == 78)
        #expect(missing.err.contains("hint: check --config or TOY_CONFIG"))
    }

    @Test func aConfigFileSetsOptionsByTheirConfigKeyAndRefusesUnknownOnes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let good = folder.appendingPathComponent("good.json").path
        try #"{"color": "Blue", "tag": ["x", "y"]}"#.write(toFile: good, atomically: true, encoding: .utf8)
        #expect(toy(["paint", "w", "--config", good]).out == "paint blue w\ntags x,y\n")
        #expect(toy(["paint", "w"], environment: ["TOY_CONFIG": good, "TOY_COLOR": "red"]).out.hasPrefix("paint red w"))
        let typo = folder.appendingPathComponent("typo.json").path
        try #"{"colour": "blue"}"#.write(toFile: typo, atomically: true, encoding: .utf8)
        let run = toy(["paint", "w", "--config", typo])
        #expect(run.code == 78)
        #expect(run.err == "error: config file \(typo): unknown setting 'colour'\nhint: did you mean 'color'?\n")
    }

    @Test func completionScriptsUseTheProgramName() {
        let bash = toy(["completion", "bash"]).out
        #expect(bash.hasPrefix("# bash completion for toy\n# Generated by `toy completion bash`"))
        #expect(bash.contains("complete -F _toy toy"))
        #expect(bash.contains("red green blue"))
        let fish = toy(["completion", "fish"]).out
        #expect(fish.contains("complete -c toy -n '__toy_at \"paint\"' -l color -x -a 'red green blue'"))
        #expect(toy(["completion", "zsh"]).out.hasPrefix("#compdef toy\n"))
    }

    @Test func manPagesUseTheProgramInfo() throws {
        let pages = ManPages.pages(root: Toy.root)
        #expect(pages.map(\.fileName) == ["toy.1", "toy-paint.1", "toy-shed.1", "toy-help.1", "toy-completion.1"])
        let main = try #require(pages.first).contents
        #expect(main.hasPrefix(".\\\" Generated by `toy __man`; do not edit.\n.TH TOY 1 2026-01-01 \"toy 9.9\""))
        #expect(main.contains(".SH \"EXIT STATUS\"\n.TP\n.B 0\nfine\n.TP\n.B 5\nshed\n"))
        #expect(main.contains(".B TOY_COLOR\nThe default of \\fB\\-\\-color\\fR."))
    }
}
