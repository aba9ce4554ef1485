import Foundation
import Testing

@testable import IAPCommandLine

/// Every handler reads its options and arguments by the descriptors declared beside its command's
/// spec (issue #12: no look-up by a string the compiler cannot check), and only those.
@Suite("Handlers read the options their command declares")
struct OptionDescriptorTests {
    let parser = CommandLineParser(root: CommandTree.root)

    /// What each handler reads, by command line: the command must declare every one.
    @Test func eachCommandDeclaresWhatItsHandlerReads() throws {
        let reads: [([String], [OptionSpec], [ArgumentSpec])] = [
            (["notify"], [NotifySpec.atomic, NotifySpec.replayUnmatched, NotifySpec.gapReport], [CommandTree.inputFile]),
            (["restore", "--user", "u"], [RestoreSpec.policy, RestoreSpec.order], []),
            (["entitled", "--user", "u"], [EntitledSpec.product, EntitledSpec.at], []),
            (["orders", "create"], [CommandTree.userOption, OrdersSpec.product, OrdersSpec.no, CommandTree.fromOption], []),
            (["orders", "list"], [OrdersSpec.status, OrdersSpec.product, CommandTree.asOfOption], []),
            (["orders", "show", "k"], [], [OrdersSpec.key]),
            (
                ["orders", "update", "--reason", "r"],
                OrdersCommands.updateOptions.map(\.option) + [CommandTree.fromOption], [OrdersSpec.updateKey]
            ),
            (["contracts", "list"], [ContractsSpec.status], []),
            (["contracts", "show", "c"], [CommandTree.asOfOption], [ContractsSpec.id]),
            (["contracts", "explain", "c"], [], [ContractsSpec.id]),
            (["contracts", "update", "c", "--reason", "r"], ContractsCommands.updateOptions.map(\.option), [ContractsSpec.id]),
            (["audit", "list"], [AuditSpec.since, AuditSpec.order, AuditSpec.contract, AuditSpec.command], []),
            (["audit", "show", "1"], [], [AuditSpec.showId]),
            (["audit", "raw", "1"], [], [AuditSpec.rawId]),
            (["audit", "undo", "1", "--reason", "r"], [], [AuditSpec.undoId]),
            (
                ["apple", "transactions", "history", "t"],
                [
                    AppleCommands.productOption, AppleCommands.productTypeOption, AppleCommands.sinceOption,
                    AppleCommands.untilOption, AppleCommands.sortOption, AppleCommands.revokedOption,
                    AppleCommands.notRevokedOption, AppleCommands.rootCAOption, StandardOptions.output,
                ], [AppleCommands.transactionArgument]
            ),
            (["apple", "subscriptions", "status", "t"], [AppleCommands.statusOption], []),
            (
                ["apple", "notifications", "history", "--since", "1d"],
                [
                    AppleNotifications.sinceOption, AppleNotifications.untilOption, AppleNotifications.typeOption,
                    AppleNotifications.subtypeOption, AppleNotifications.transactionOption,
                    AppleNotifications.onlyFailuresOption, AppleNotifications.gapReportOption, CommandTree.applyOption,
                    CommandTree.dryRun,
                ], []
            ),
            (
                ["apple", "extend", "--days", "1", "--reason-code", "0", "--reason", "r"],
                [
                    AppleWrites.daysOption, AppleWrites.reasonCodeOption, AppleWrites.allActiveOption,
                    AppleWrites.productOption, AppleWrites.storefrontOption, AppleWrites.requestIdOption,
                ], []
            ),
            (
                ["apple", "consumption", "t", "--delivery-status", "DELIVERED", "--reason", "r"],
                [
                    AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption,
                    AppleWrites.deliveryStatusOption, AppleWrites.consumptionPercentageOption,
                    AppleWrites.refundPreferenceOption,
                ], []
            ),
            (["apple", "set-app-account-token", "t", "--token", "x", "--reason", "r"], [AppleWrites.tokenOption], []),
        ]
        for (line, options, arguments) in reads {
            let parsed = try parser.parse(line)
            for option in options {
                #expect(parsed.declares(option), "\(parsed.commandName) lacks --\(option.long)")
            }
            for argument in arguments {
                #expect(parsed.declares(argument), "\(parsed.commandName) lacks <\(argument.name)>")
            }
        }
    }

    /// Same-named options of different commands are different options.
    @Test func anotherCommandsOptionIsNotDeclared() throws {
        #expect(!(try parser.parse(["contracts", "list"])).declares(OrdersSpec.status))
        #expect(!(try parser.parse(["apple", "notifications", "history", "--since", "1d"])).declares(NotifySpec.gapReport))
        #expect(!(try parser.parse(["entitled", "--user", "u"])).declares(CommandTree.atOption))
        #expect(!(try parser.parse(["verify"])).declares(NotifySpec.atomic))
        // `help` inherits no options, so the --redact wrapper must ask before reading it.
        #expect(!(try parser.parse(["help"])).declares(CommandTree.redactOption))
        #expect(iapctl(["help", "version"]).code == 0)
    }

    #if DEBUG
        @Test func aHandlerReadingAnUndeclaredOptionStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let read: CommandHandler = { invocation in
                    _ = invocation.parsed.value(OrdersSpec.status)
                    return .success
                }
                _ = iapctl(["contracts", "list"], handlers: ["contracts list": read])
            }
            await #expect(processExitsWith: .failure) {
                let read: CommandHandler = { invocation in
                    _ = invocation.flag(NotifySpec.atomic)
                    return .success
                }
                _ = iapctl(["verify", "--bundle-id", "b"], handlers: ["verify": read])
            }
        }
    #endif
}
