#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C during a batch: the handler only sets a flag. The batch stops between items (the open
/// chunk is rolled back), reports what was committed and exits 130; a blocked read of the input
/// returns (no `SA_RESTART`) and says so.
public enum Interrupt {
    nonisolated(unsafe) private static var flag: sig_atomic_t = 0
    /// The read end of a pipe the handler writes to: a read of the input waits on it too, since
    /// the signal may land on any thread (the verification workers), not the one that reads.
    nonisolated(unsafe) private(set) static var wakeDescriptor: Int32 = -1
    nonisolated(unsafe) private static var wakeWriter: Int32 = -1

    /// Whether SIGINT arrived since ``install()``.
    public static var isRequested: Bool { flag != 0 }

    /// What a batch stopped by Ctrl-C says last, on `stderr` (flushed): how many items it reported
    /// and how many of them were committed, or that nothing changed when `unchanged` says what every item was
    /// (`a duplicate`); the caller then exits 130 (``ExitCode/interrupted``).
    public static func reportStop(items: Int, committed: Int, unchanged: String? = nil, on stderr: OutputSink) -> ExitCode {
        let plural = items == 1 ? "" : "s"
        let what = unchanged.map { "nothing changed (every item was \($0))" } ?? "\(committed) committed"
        stderr.writeLine("interrupted after \(items) item\(plural): \(what); re-running is safe")
        try? stderr.flush()
        return .interrupted
    }

    /// Catches SIGINT from now on (the default ends the process and loses the report).
    public static func install() {
        if wakeDescriptor < 0 {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                for fd in fds {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                }
                wakeDescriptor = fds[0]
                wakeWriter = fds[1]
            }
        }
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in Interrupt.handle() }
        #else
            action.__sigaction_u.__sa_handler = { _ in Interrupt.handle() }
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        // A parent may have started us with SIGINT blocked (the mask is inherited): unblock it here.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// The handler: async-signal-safe (a store and a write).
    private static func handle() {
        flag = 1
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Thrown where the work stops.
    public struct Stop: Error {
        /// The stop of a batch.
        public init() {}
    }
}
