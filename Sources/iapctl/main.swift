import IAPCommandLine

exitProcess(with: runIAPCtl(arguments: CommandLine.arguments))
