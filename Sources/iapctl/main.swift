import IAPCommandLine

exitProcess(with: runIAPCtl(arguments: Array(CommandLine.arguments.dropFirst())))
