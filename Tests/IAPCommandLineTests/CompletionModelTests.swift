import CommandLineKit
import Foundation
import StoreTestSupport
import Testing

@testable import IAPCommandLine

/// The committed scripts, run by their shells, offer for every command what the command model says:
/// bash each option's value words, the option names, the subcommands or the argument's kind; fish
/// each command's options and their word lists.
@Suite("Completion scripts match the command model")
struct CompletionModelTests {
    /// One completion asked of the script: the words on the line (the last is completed).
    struct Case {
        var label: String
        var words: [String]
        var expected: [String]
        /// Files and look-ups come in no fixed order.
        var ordered: Bool
    }

    /// What the script must offer for `kind` with nothing typed, in a folder holding `a.txt` and
    /// `sub/`, with `iapctl` on PATH answering a look-up with `lookup:KIND`.
    static func expected(_ kind: CompletionKind) -> (words: [String], ordered: Bool) {
        switch kind {
        case .none: return ([], true)
        case .file: return (["a.txt", "sub"], false)
        case .directory: return (["sub"], false)
        case .values(let values): return (values, true)
        case .lookup(let kind): return (["lookup:\(kind)"], true)
        }
    }

    static func cases(_ root: CommandSpec) -> [Case] {
        var cases: [Case] = []
        let everyValued = Set(root.allPaths().flatMap { root.effectiveOptions(at: $0) }.filter(\.takesValue).map(\.long))
        for path in root.allPaths() {
            guard let spec = root.descendant(at: path) else { continue }
            let line = [root.name] + path
            let label = path.isEmpty ? "(root)" : path.joined(separator: " ")
            let options = root.effectiveOptions(at: path)
            let subcommands = spec.visibleSubcommands.map(\.name)
            let argument =
                subcommands.isEmpty
                ? expected(spec.arguments.first?.completion ?? .none) : (words: subcommands, ordered: true)
            cases.append(Case(label: "\(label) <argument>", words: line + [""], expected: argument.words, ordered: argument.ordered))
            cases.append(Case(label: "\(label) --", words: line + ["--"], expected: options.map { "--\($0.long)" }, ordered: true))
            for option in options where option.takesValue {
                let value = expected(option.completion)
                for name in (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.long)"] {
                    cases.append(Case(label: "\(label) \(name)", words: line + [name, ""], expected: value.words, ordered: value.ordered))
                    cases.append(
                        Case(label: "\(label) \(name)=", words: line + [name, "=", ""], expected: value.words, ordered: value.ordered))
                }
            }
            // A value option of other commands is no option here: the argument is completed.
            let own = Set(options.map(\.long))
            for long in everyValued.subtracting(own).sorted() {
                cases.append(
                    Case(
                        label: "\(label) --\(long) (not its option)", words: line + ["--\(long)", ""], expected: argument.words,
                        ordered: argument.ordered))
            }
        }
        return cases
    }

    func shellQuoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test(.enabled(if: Programs.which("bash") != nil, "bash is not installed"))
    func everyOptionOfEveryCommandCompletesAsTheModelSays() throws {
        let root = CommandTree.root
        let folder = try temporaryDirectory()
        let bin = folder.appendingPathComponent("bin")
        let work = folder.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: work.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data().write(to: work.appendingPathComponent("a.txt"))
        let stub = bin.appendingPathComponent(root.name)
        try Data("#!/bin/sh\n[ \"$1\" = __complete ] && echo \"lookup:$2\"\n".utf8).write(to: stub)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)

        let cases = Self.cases(root)
        var script = "PATH=\(shellQuoted(bin.path)):\"$PATH\"\ncd \(shellQuoted(work.path)) || exit 1\n"
        script += "source \(shellQuoted(packageRoot.appendingPathComponent("completions/iapctl.bash").path))\n"
        for item in cases {
            script += "COMP_WORDS=(\(item.words.map(shellQuoted).joined(separator: " "))); COMP_CWORD=\(item.words.count - 1); "
            script += "_iapctl; printf '%s\\n' \"${COMPREPLY[*]}\"\n"
        }
        let file = folder.appendingPathComponent("cases.bash")
        try Data(script.utf8).write(to: file)
        let result = try Programs.run(Programs.which("bash")!, [file.path])
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count == cases.count + 1, "\(result.output)")
        #expect(cases.count > 1000, "every command and option is asked: \(cases.count)")
        for (item, line) in zip(cases, lines) {
            let got = line.split(separator: " ").map(String.init)
            if item.ordered {
                #expect(got == item.expected, "\(item.label)")
            } else {
                #expect(got.sorted() == item.expected.sorted(), "\(item.label)")
            }
        }
    }

    func fishQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// fish offers each command exactly its options (the conditions list the right commands) and
    /// each word-list option its words there (by command where one name has different words).
    @Test(.enabled(if: Programs.which("fish") != nil, "fish is not installed"))
    func fishOffersEveryCommandItsOptionsAndTheirWords() throws {
        let root = CommandTree.root
        var cases: [(label: String, line: String, expected: Set<String>)] = []
        for path in root.allPaths() {
            let line = ([root.name] + path).joined(separator: " ")
            let options = root.effectiveOptions(at: path)
            cases.append((line + " --", line + " --", Set(options.map { "--\($0.long)" })))
            for option in options {
                guard case .values(let values) = option.completion, option.takesValue else { continue }
                cases.append((line + " --\(option.long)", line + " --\(option.long) ", Set(values)))
            }
        }
        let folder = try temporaryDirectory()
        let file = folder.appendingPathComponent("cases.fish")
        // The look-ups of an argument run for `--` too: here they find nothing.
        var script =
            "function \(root.name); end\nsource \(fishQuoted(packageRoot.appendingPathComponent("completions/iapctl.fish").path))\n"
        for item in cases { script += "echo @@; complete -C \(fishQuoted(item.line))\n" }
        try Data(script.utf8).write(to: file)
        let result = try Programs.run(Programs.which("fish")!, ["--no-config", file.path])
        #expect(result.status == 0, "\(result.output)")
        let blocks = result.output.components(separatedBy: "@@\n").dropFirst()
        try #require(blocks.count == cases.count, "\(result.output)")
        for (item, block) in zip(cases, blocks) {
            let offered = block.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            #expect(Set(offered) == item.expected, "\(item.label)")
        }
    }
}
