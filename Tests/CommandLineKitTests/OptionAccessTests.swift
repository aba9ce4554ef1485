import Foundation
import Testing

@testable import CommandLineKit

/// Handlers read options and arguments by their spec, and only those their command declares.
@Suite("Options and arguments read by their spec")
struct OptionAccessTests {
    let parser = CommandLineParser(root: Toy.root)

    @Test func argumentsAreReadByTheirSpec() throws {
        let thing = ArgumentSpec("thing", help: "What to paint.")
        let parsed = try parser.parse(["paint", "wall"])
        #expect(parsed.argument(thing) == "wall")
        let root = Toy.root.replacingHandler(at: ["paint"]) { invocation in
            invocation.print("thing \(invocation.argument(thing) ?? "-")")
            return .success
        }
        #expect(toy(["paint", "door"], root: root).out == "thing door\n")
    }

    @Test func aCommandDeclaresItsOwnInheritedAndHelpOptions() throws {
        let paint = try parser.parse(["paint", "wall"])
        #expect(paint.declares(Toy.color) && paint.declares(Toy.tag))
        #expect(paint.declares(Toy.count.with(help: "Other words, same option.")))
        #expect(paint.declares(OptionSpec.help))
        #expect(paint.declares(OptionSpec.flag("quiet", short: "q", help: "Inherited from the root.")))
        #expect(paint.declares(ArgumentSpec("thing", help: "By name.")))

        let leaves = try parser.parse(["shed", "leaves"])
        #expect(!leaves.declares(Toy.color))
        #expect(!leaves.declares(ArgumentSpec("thing", help: "paint's argument.")))
        // The same name with other values is another option: reading it would misread this one.
        let otherColor = OptionSpec("color", valueName: "color", help: "A colour.", allowedValues: ["pink"])
        #expect(!paint.declares(otherColor))
        #expect(!paint.declares(OptionSpec("count", valueName: "n", help: "Any text.")))
        #expect(!paint.declares(OptionSpec.flag("count", help: "A flag now.")))
        // A command that inherits nothing lacks the root's options; a wrapper asks before reading.
        #expect(!(try parser.parse(["help"])).declares(OptionSpec.flag("quiet", short: "q", help: "Less.")))
    }

    #if DEBUG
        @Test func readingAnOptionTheCommandLacksStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let root = Toy.root.replacingHandler(at: ["shed", "leaves"]) { invocation in
                    _ = invocation.value(Toy.color)
                    return .success
                }
                _ = toy(["shed", "leaves"], root: root)
            }
            await #expect(processExitsWith: .failure) {
                let root = Toy.root.replacingHandler(at: ["shed", "leaves"]) { invocation in
                    _ = invocation.parsed.flag(Toy.count)
                    return .success
                }
                _ = toy(["shed", "leaves"], root: root)
            }
            await #expect(processExitsWith: .failure) {
                let root = Toy.root.replacingHandler(at: ["shed", "leaves"]) { invocation in
                    _ = invocation.argument(ArgumentSpec("thing", help: "paint's argument."))
                    return .success
                }
                _ = toy(["shed", "leaves"], root: root)
            }
        }

        @Test func readingTheDeclaredOptionsDoesNotStop() async {
            await #expect(processExitsWith: .success) {
                let run = toy(["paint", "wall", "--count", "2", "--tag", "a"])
                guard run.out == "paint red wall\ntags a\ncount 2\n" else { exit(3) }
            }
        }
    #endif
}
