import CProcess
import IAPCommandLine

#if canImport(Glibc)
    import Glibc

    // Before anything is read: a signing key, a JWT or a database password in memory never reaches
    // a core dump, and other processes of the same user cannot read this one's memory (ptrace,
    // /proc/PID/mem): not dumpable, core file size 0.
    _ = iapctl_keep_out_of_core_dumps()

    // A file-size limit (RLIMIT_FSIZE) makes a write fail (EFBIG, reported as an I/O error, exit 74)
    // instead of killing the process halfway through a report.
    signal(SIGXFSZ, SIG_IGN)
#endif

exitProcess(with: runIAPCtl(arguments: Array(CommandLine.arguments.dropFirst())))
