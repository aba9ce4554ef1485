import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client/server round trips this process made (what keeps MariaDB near SQLite's pace): every
/// statement sent with the text protocol, every prepare, every execute of a prepared statement and
/// every warning probe counts one; connecting counts one per connection (the handshake and the
/// session settings after it are counted as statements).
///
/// With `IAPCTL_MYSQL_ROUND_TRIPS=1` in the environment the total, and the statements that made
/// them, are printed to standard error when the process exits (a line starting
/// `mysql round trips:`), for `scripts/bench`. Without it nothing is printed: commands' output is
/// unchanged.
enum RoundTrips {
    private static let total = Atomic<Int>(0)
    private static let perStatement = Mutex<[String: Int]>([:])
    /// Whether the report is wanted; read once, when the first connection opens.
    static let reporting: Bool = {
        guard let value = getenv("IAPCTL_MYSQL_ROUND_TRIPS"), String(cString: value) == "1" else { return false }
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

    /// The round trips so far in this process.
    static var count: Int { total.load(ordering: .relaxed) }

    private static func report() {
        var text = "mysql round trips: \(count)\n"
        let counts = perStatement.withLock { $0 }
        for (what, n) in counts.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            text += "  \(n)\t\(what.count > 160 ? String(what.prefix(160)) + "…" : what)\n"
        }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// One connection's round trips (each also counts in the process's ``RoundTrips``): what tests
/// of one connection read, whatever other connections of the process do meanwhile.
final class RoundTripCounter {
    private(set) var count = 0

    func add(_ what: @autoclosure () -> String) {
        count += 1
        RoundTrips.count(what())
    }
}
