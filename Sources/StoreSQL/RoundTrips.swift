import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client/server round trips this process made to one kind of database server (what keeps a
/// server backend near SQLite's pace): every statement sent as text, every prepare, every
/// execution of a prepared statement and every extra probe counts one; connecting counts one per
/// connection.
///
/// With `IAPCTL_<BACKEND>_ROUND_TRIPS=1` in the environment (`IAPCTL_MYSQL_ROUND_TRIPS`,
/// `IAPCTL_POSTGRES_ROUND_TRIPS`) the total, and the statements that made them, are printed to
/// standard error when the process exits (a line starting `<backend> round trips:`), for
/// `scripts/bench`. Without it nothing is printed: commands' output is unchanged.
public final class RoundTrips: Sendable {
    /// The backend's name as the report and the environment variable spell it (`mysql`, `postgres`).
    public let backend: String
    /// Whether the report is wanted; read once, when this counter is made (a backend makes its
    /// counter on first use).
    public let reporting: Bool
    private let total = Atomic<Int>(0)
    private let perStatement = Mutex<[String: Int]>([:])

    /// The counters whose report is printed at exit.
    private static let reported = Mutex<[RoundTrips]>([])

    public init(backend: String) {
        self.backend = backend
        let variable = "IAPCTL_\(backend.uppercased())_ROUND_TRIPS"
        reporting = getenv(variable).map { String(cString: $0) == "1" } ?? false
        guard reporting else { return }
        let first = Self.reported.withLock { counters in
            counters.append(self)
            return counters.count == 1
        }
        if first { atexit { RoundTrips.reportAll() } }
    }

    /// One round trip for `what` (a statement's text, or a short label such as `connect`).
    public func count(_ what: @autoclosure () -> String) {
        total.add(1, ordering: .relaxed)
        guard reporting else { return }
        let key = what()
        perStatement.withLock { $0[key, default: 0] += 1 }
    }

    /// The round trips so far in this process.
    public var count: Int { total.load(ordering: .relaxed) }

    /// The report `IAPCTL_<BACKEND>_ROUND_TRIPS=1` prints: the total, then each statement's count,
    /// most first (texts cut at 160 characters).
    public var report: String {
        var text = "\(backend) round trips: \(count)\n"
        let counts = perStatement.withLock { $0 }
        for (what, n) in counts.sorted(by: { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }) {
            text += "  \(n)\t\(what.count > 160 ? String(what.prefix(160)) + "…" : what)\n"
        }
        return text
    }

    private static func reportAll() {
        for counter in reported.withLock({ $0 }) {
            let bytes = Array(counter.report.utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
    }
}

/// One connection's round trips (each also counts in the process's ``RoundTrips`` of its
/// backend): what tests of one connection read, whatever other connections of the process do
/// meanwhile.
public final class RoundTripCounter {
    public private(set) var count = 0
    private let process: RoundTrips

    public init(_ process: RoundTrips) { self.process = process }

    public func add(_ what: @autoclosure () -> String) {
        count += 1
        process.count(what())
    }
}
