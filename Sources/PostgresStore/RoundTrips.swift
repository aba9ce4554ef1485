import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client/server round trips this process made to PostgreSQL: every statement sent, every
/// prepare and every execution of a prepared statement counts one; connecting counts one.
///
/// With `IAPCTL_POSTGRES_ROUND_TRIPS=1` in the environment the total, and the statements that made
/// them, are printed to standard error when the process exits (a line starting
/// `postgres round trips:`), for `scripts/bench`. Without it nothing is printed.
enum RoundTrips {
    private static let total = Atomic<Int>(0)
    private static let perStatement = Mutex<[String: Int]>([:])
    /// Whether the report is wanted; read once, at the first round trip.
    static let reporting: Bool = {
        guard let value = getenv("IAPCTL_POSTGRES_ROUND_TRIPS"), String(cString: value) == "1" else { return false }
        atexit { RoundTrips.report() }
        return true
    }()

    /// One round trip for `what` (a statement's text, or a short label such as `connect`).
    static func count(_ what: @autoclosure () -> String) {
        total.add(1, ordering: .relaxed)
        guard reporting else { return }
        let key = what()
        perStatement.withLock { $0[key, default: 0] += 1 }
    }

    private static func report() {
        var text = "postgres round trips: \(total.load(ordering: .relaxed))\n"
        let counts = perStatement.withLock { $0 }
        for (what, n) in counts.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            text += "  \(n)\t\(what.count > 160 ? String(what.prefix(160)) + "…" : what)\n"
        }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
