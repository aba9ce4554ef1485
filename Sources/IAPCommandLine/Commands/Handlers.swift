/// Runs one command; returns its exit status or throws a `CLIError` (or a `CLIErrorConvertible`).
public typealias CommandHandler = (Invocation) throws -> ExitCode

/// The registry from `CommandSpec.handlerKey` to the code that runs the command.
///
/// The one place handlers are registered; every key of `CommandTree` must be here (a test checks).
public enum CommandHandlers {
    /// The handlers of the shipped binary.
    public static func standard() -> [String: CommandHandler] {
        Redaction.wrap(
            StoreAccess.wrap(
                [
                    "help": HelpCommand.run,
                    "version": { invocation in
                        invocation.print("\(invocation.root.name) \(CommandTree.version)")
                        return .success
                    },
                    "completion": CompletionCommand.run,
                    "__man": ManCommand.run,
                    "db init": DbCommands.initialize,
                    "db status": DbCommands.status,
                    "orders create": OrdersCommands.create,
                    "orders list": OrdersCommands.list,
                    "orders show": OrdersShow.run,
                    "orders update": OrdersCommands.update,
                    "contracts list": ContractsCommands.list,
                    "contracts show": ContractsCommands.show,
                    "contracts update": ContractsCommands.update,
                    "notify": NotifyCommand.run,
                    "verify": VerifyCommand.run,
                    "restore": RestoreCommand.run,
                    "audit list": AuditCommands.list,
                    "audit show": AuditCommands.show,
                    "audit raw": AuditCommands.raw,
                    "audit undo": AuditUndo.run,
                    "doctor": DoctorCommand.run,
                    "entitled": EntitledCommand.run,
                    "contracts explain": ExplainCommand.run,
                ].merging(AppleCommands.handlers()) { $1 }.merging(AppleNotifications.handlers()) { $1 }
                    .merging(AppleWrites.handlers()) { $1 }))
    }
}
