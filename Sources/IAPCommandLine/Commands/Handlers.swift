/// Runs one command; returns its exit status or throws a `CLIError` (or a `CLIErrorConvertible`).
public typealias CommandHandler = (Invocation) throws -> ExitCode

/// The registry from `CommandSpec.handlerKey` to the code that runs the command.
///
/// The one place handlers are registered; every key of `CommandTree` must be here (a test checks).
public enum CommandHandlers {
    /// The handlers of the shipped binary.
    public static func standard() -> [String: CommandHandler] {
        [
            "help": HelpCommand.run,
            "completion": CompletionCommand.run,
            "__man": ManCommand.run,
            "db init": notImplemented,
            "db status": notImplemented,
            "orders create": notImplemented,
            "orders list": notImplemented,
            "orders show": notImplemented,
            "orders update": notImplemented,
            "contracts list": notImplemented,
            "contracts show": notImplemented,
            "contracts update": notImplemented,
            "notify": NotifyCommand.run,
            "verify": VerifyCommand.run,
            "restore": RestoreCommand.run,
        ]
    }

    /// A stand-in for commands whose implementation has not landed yet.
    static func notImplemented(_ invocation: Invocation) throws -> ExitCode {
        throw CLIError(.software, "'\(invocation.parsed.commandName)' is not implemented yet")
    }
}
