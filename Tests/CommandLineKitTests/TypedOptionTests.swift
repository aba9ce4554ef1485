import Foundation
import Testing

@testable import CommandLineKit

/// A program whose handler reads typed values: each option and argument is converted once, when the
/// line is parsed, and a bad value is refused before the handler runs, naming the option.
enum Typed {
    enum Level: String, CaseIterable, Sendable, OptionValue {
        case low, high
    }

    /// A value whose problem says everything itself (no option name in front).
    struct Even: OptionValue {
        let value: Int

        init(optionText text: String) throws(OptionValueProblem) {
            guard let number = Int(text), number % 2 == 0 else {
                throw OptionValueProblem("'\(text)' is odd or not a number", hint: "give 2, 4, …", naming: .none)
            }
            value = number
        }
    }

    static let limit = Option<Int?>("limit", valueName: "n", help: "At most.", validation: .positiveInteger)
    static let width = Option<Int>("width", valueName: "n", help: "Columns.", environmentVariable: "TYPED_WIDTH", defaultValue: "80")
    static let level = Option<Level?>("level", valueName: "level", help: "How much.", allowedValues: OptionSpec.choices(Level.self))
    static let port = Option<[Int]>("port", valueName: "n", help: "A port (repeatable).")
    static let since = Option<PointInTime?>("since", valueName: "time", help: "From.")
    static let name = Option<String>("name", valueName: "name", help: "Who.")
    static let pair = Option<Even?>("pair", valueName: "n", help: "An even number.")
    static let count = Argument<Int>("count", help: "How many.")
    static let rest = Argument<[String]>("word", help: "Words.")

    /// Records every value it read, typed.
    static func run(_ invocation: Invocation) throws -> ExitCode {
        let limit: Int? = invocation[limit]
        let width: Int = invocation[width]
        let ports: [Int] = invocation[port]
        invocation.print("count \(invocation[count] + 1) words \(invocation[rest].joined(separator: ","))")
        invocation.print("limit \(limit.map(String.init) ?? "-") width \(width) ports \(ports.map(String.init).joined(separator: ","))")
        invocation.print("level \(invocation[level]?.rawValue ?? "-") name \(invocation[name]) pair \(invocation[pair]?.value ?? 0)")
        if let since = invocation[since] { invocation.print("since \(since.at(0))") }
        return .success
    }

    static let root = CommandSpec(
        name: "typed", abstract: "Typed values.",
        subcommands: [
            CommandSpec(
                name: "go", abstract: "Go.", options: [limit, width, level, port, since, name, pair],
                arguments: [count, rest], handler: run)
        ])
}

@Suite("Typed options and arguments")
struct TypedOptionTests {
    func typed(_ arguments: [String], environment: [String: String] = [:]) -> ToyRun {
        toy(arguments, environment: environment, root: Typed.root)
    }

    @Test func handlersReadConvertedValues() {
        let run = typed([
            "go", "2", "a", "b", "--limit", "5", "--level", "HIGH", "--port", "80", "--port", "443", "--name", "x",
            "--pair", "4", "--since", "1757035472000",
        ])
        #expect(run.code == 0)
        #expect(
            run.out == "count 3 words a,b\nlimit 5 width 80 ports 80,443\nlevel high name x pair 4\nsince 1757035472000\n")
    }

    @Test func absentOptionsAreNilEmptyOrTheirDefault() {
        let run = typed(["go", "1", "--name", "x"], environment: ["TYPED_WIDTH": "120"])
        #expect(run.out == "count 2 words \nlimit - width 120 ports \nlevel - name x pair 0\n")
    }

    @Test func aBadValueIsRefusedWhenParsedNamingTheOption() {
        let bad: [([String], String)] = [
            (["go", "1", "--name", "x", "--port", "http"], "error: --port: 'http' is not an integer\n"),
            (["go", "1", "--name", "x", "--limit", "0"], "error: --limit: '0' is not a positive integer\n"),
            (["go", "1", "--name", "x", "--since", "soon"], "error: --since 'soon' is not a time\nhint: use "),
            (["go", "1", "--name", "x", "--pair", "3"], "error: '3' is odd or not a number\nhint: give 2, 4, …\n"),
            (["go", "one", "--name", "x"], "error: <count>: 'one' is not an integer\n"),
            (["go", "1"], "error: missing required option --name <name>\n"),
        ]
        for (line, message) in bad {
            let run = typed(line)
            #expect(run.code == 64, "\(line)")
            #expect(run.out.isEmpty, "the handler ran for \(line)")
            #expect(run.err.hasPrefix(message), "\(line): \(run.err)")
        }
    }

    /// A span back is read once but resolved against the handler's clock reading: one run, one now.
    @Test func aSpanBackFollowsTheRunsNow() throws {
        let now: Int64 = 1_757_035_472_000
        let week = try PointInTime(optionText: "7d")
        #expect(week.followsNow && week.at(now) == now - 7 * 86_400_000 && week.at(now + 5) == now + 5 - 7 * 86_400_000)
        #expect(try PointInTime(optionText: " now ").at(now) == now)
        let fixed = try PointInTime(optionText: "2025-09-05T01:24:32Z")
        #expect(!fixed.followsNow && fixed.at(0) == now && fixed.at(now) == now)
    }

    @Test func aBadValueFromTheEnvironmentIsAConfigurationError() {
        let run = typed(["go", "1", "--name", "x"], environment: ["TYPED_WIDTH": "wide"])
        #expect(run.code == 78)
        #expect(run.err.hasPrefix("error: environment variable TYPED_WIDTH: 'wide' is not an integer\n"))
    }

    @Test func theSameNameReadAsAnotherTypeIsAnotherOption() throws {
        let parsed = try CommandLineParser(root: Typed.root).parse(["go", "1", "--name", "x"])
        #expect(parsed.declares(Typed.limit.spec))
        #expect(!parsed.declares(Option<String?>("limit", valueName: "n", help: "Text.", validation: .positiveInteger).spec))
        // Required and optional reads of one option are the same option.
        #expect(parsed.declares(Typed.name.reading(String?.self, help: "Maybe who.").spec))
    }
}
