import Foundation
import Testing

@testable import IAPCommandLine

/// Every handler reads its options and arguments by the descriptors declared beside its command's
/// spec (no look-up by a string the compiler cannot check), and only those.
@Suite("Handlers read the options their command declares")
struct OptionDescriptorTests {
    let parser = CommandLineParser(root: CommandTree.root)

    /// What each handler reads, by command line: the command must declare every one.
    @Test func eachCommandDeclaresWhatItsHandlerReads() throws {
        let reads: [([String], [any OptionDeclaration], [any ArgumentDeclaration])] = [
            (
                ["notify"], [NotifyCommand.atomic, NotifyCommand.replayUnmatched, NotifyCommand.gapReport],
                [CommandTree.inputFile]
            ),
            (["restore", "--user", "u"], [RestoreCommand.user, RestoreCommand.policy, RestoreCommand.order], []),
            (["entitled", "--user", "u"], [EntitledCommand.user, EntitledCommand.product, EntitledCommand.at], []),
            (
                ["orders", "create"], [OrdersCreate.user, OrderOptions.product, OrdersCreate.no, OrdersCreate.from], []
            ),
            (
                ["orders", "list"],
                [OrdersList.user, OrderOptions.status, OrdersList.product, CommandTree.limitOption, CommandTree.asOfOption],
                []
            ),
            (["orders", "show", "k"], [], [OrdersShow.key]),
            (
                ["orders", "update", "--reason", "r"],
                OrdersUpdate.fields.map(\.option) + [OrdersUpdate.from, OrdersUpdate.clearOverride], [OrdersUpdate.key]
            ),
            (["contracts", "list"], [ContractsList.user, ContractOptions.status, CommandTree.limitOption], []),
            (["contracts", "show", "c"], [CommandTree.asOfOption], [ContractOptions.id]),
            (["contracts", "explain", "c"], [], [ContractOptions.id]),
            (
                ["contracts", "update", "c", "--reason", "r"],
                ContractsUpdate.fields.map(\.option) + [ContractsUpdate.clearOverride], [ContractOptions.id]
            ),
            (
                ["audit", "list"],
                [
                    AuditList.since, AuditList.order, AuditList.contract, AuditList.commandName, AuditList.ticket,
                    AuditList.user,
                ], []
            ),
            (["audit", "show", "1"], [], [AuditShow.id]),
            (["audit", "raw", "1"], [], [AuditRaw.id]),
            (["audit", "undo", "1", "--reason", "r"], [], [AuditUndo.ids]),
            (["doctor"], [DoctorCommand.environment, DoctorCommand.lapsedBefore], []),
            (
                ["apple", "transactions", "history", "1000"],
                [
                    AppleTransactionsHistory.productOption, AppleTransactionsHistory.productTypeOption,
                    AppleTransactionsHistory.sinceOption,
                    AppleTransactionsHistory.untilOption, AppleTransactionsHistory.sortOption, AppleTransactionsHistory.revokedOption,
                    AppleTransactionsHistory.notRevokedOption, AppleCommands.rootCAOption, StandardOptions.output,
                ], [AppleCommands.transactionArgument]
            ),
            (["apple", "subscriptions", "status", "1000"], [AppleSubscriptionsStatus.statusOption], []),
            (
                ["apple", "notifications", "history", "--since", "1d"],
                [
                    AppleNotificationsHistory.sinceOption, AppleNotificationsHistory.untilOption, AppleNotificationsHistory.typeOption,
                    AppleNotificationsHistory.subtypeOption, AppleNotificationsHistory.transactionOption,
                    AppleNotificationsHistory.onlyFailuresOption, AppleNotificationsHistory.gapReportOption, CommandTree.applyOption,
                    CommandTree.dryRun,
                ], []
            ),
            (
                ["apple", "extend", "--days", "1", "--reason-code", "0", "--reason", "r"],
                [
                    AppleExtend.daysOption, AppleExtend.reasonCodeOption, AppleExtend.allActiveOption,
                    AppleExtend.productOption, AppleExtend.storefrontOption, AppleWrites.requestIdOption,
                ], [AppleExtend.extendOriginalArgument]
            ),
            (
                ["apple", "consumption", "t", "--delivery-status", "DELIVERED", "--reason", "r"],
                [
                    AppleWrites.customerConsentedOption, AppleWrites.sampleContentProvidedOption,
                    AppleConsumption.deliveryStatusOption, AppleConsumption.consumptionPercentageOption,
                    AppleWrites.refundPreferenceOption,
                ], [AppleWrites.consumptionTransactionArgument]
            ),
            (
                ["apple", "set-app-account-token", "t", "--token", "7389a31a-fb6d-4569-a2a6-db7d85d84813", "--reason", "r"],
                [AppleSetAppAccountToken.tokenOption],
                [AppleSetAppAccountToken.originalArgument]
            ),
        ]
        for (line, options, arguments) in reads {
            let parsed = try parser.parse(line)
            for option in options.map(\.spec) {
                #expect(parsed.declares(option), "\(parsed.commandName) lacks --\(option.long)")
            }
            for argument in arguments.map(\.spec) {
                #expect(parsed.declares(argument), "\(parsed.commandName) lacks <\(argument.name)>")
            }
        }
    }

    /// Same-named options of different commands are different options.
    @Test func anotherCommandsOptionIsNotDeclared() throws {
        #expect(!(try parser.parse(["contracts", "list"])).declares(OrderOptions.status.spec))
        #expect(
            !(try parser.parse(["apple", "notifications", "history", "--since", "1d"])).declares(NotifyCommand.gapReport.spec))
        #expect(!(try parser.parse(["entitled", "--user", "u"])).declares(CommandTree.atOption.spec))
        #expect(!(try parser.parse(["verify"])).declares(NotifyCommand.atomic))
        // The same name read as another type is another option: `--limit` as text is not `Option<Int?>`.
        #expect(
            !(try parser.parse(["orders", "list"])).declares(
                Option<String?>("limit", valueName: "n", help: "Text.", validation: .positiveInteger).spec))
        // `help` inherits no options, so the --redact wrapper must ask before reading it.
        #expect(!(try parser.parse(["help"])).declares(CommandTree.redactOption))
        #expect(iapctl(["help", "version"]).code == 0)
    }

    #if DEBUG
        @Test func aHandlerReadingAnUndeclaredOptionStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let read: CommandHandler = { invocation in
                    _ = invocation[OrderOptions.status]
                    return .success
                }
                _ = iapctl(["contracts", "list"], handlers: ["contracts list": read])
            }
            await #expect(processExitsWith: .failure) {
                let read: CommandHandler = { invocation in
                    _ = invocation.flag(NotifyCommand.atomic)
                    return .success
                }
                _ = iapctl(["verify", "--bundle-id", "b"], handlers: ["verify": read])
            }
        }
    #endif
}
