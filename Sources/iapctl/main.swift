import IAPCommandLine

#if canImport(Glibc)
    import Glibc

    // A file-size limit (RLIMIT_FSIZE) makes a write fail (EFBIG, reported as an I/O error, exit 74)
    // instead of killing the process halfway through a report.
    signal(SIGXFSZ, SIG_IGN)
#endif

exitProcess(with: runIAPCtl(arguments: Array(CommandLine.arguments.dropFirst())))
