import AppStoreJWS
import Dispatch
import SubscriptionEngine
import SubscriptionModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where ``VerifiedBatches`` reads its items: the command layer's input framing (one JWS per line,
/// webhook bodies, API responses), which may wait for a pipe that stays open.
public protocol IngestInput {
    /// Whether any non-blank input was seen.
    var isEmpty: Bool { get }
    /// Whether `next()` can answer without waiting more than `milliseconds` for input.
    func isReady(waiting milliseconds: Int32) -> Bool
    /// The next item, or nil at the end of the input.
    mutating func next() throws -> WebhookBody.Item?
}

/// Streams `notify`'s input as chunks of verified items, in input order.
///
/// The calling thread reads and frames the input; the signatures of the chunks ahead are verified
/// on all cores while the caller applies the current one, so reading, verifying and writing overlap
/// and memory stays bounded by a few chunks whatever the input size.
public final class VerifiedBatches {
    private var items: any IngestInput
    private let verifier: AppStoreVerifier
    private let chunkSize: Int
    private let timings: PhaseTimings
    /// Chunks being verified in the background, oldest first.
    private var inFlight: [VerificationJob] = []
    /// How many chunks may be read ahead: the workers keep verifying while the writer waits for
    /// its disk (COMMIT, checkpoints); memory stays bounded by `depth` chunks.
    private let depth: Int
    /// A read error met while reading ahead: thrown once the items before it were handed out.
    private var deferredError: (any Error)?
    private var reachedEnd = false
    /// Set while `next()` reads ahead with a chunk in hand: reading must not wait then.
    private var handingOut = false
    /// Runs the chunks' verification one chunk at a time, oldest first (each on all cores).
    private let queue = DispatchQueue(label: "iapctl.notify.verify")

    /// The number of threads verification uses (the online cores, at least 1).
    public static var threadCount: Int {
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return cores > 0 ? cores : 1
    }

    public init(
        _ items: any IngestInput, verifier: AppStoreVerifier, chunkSize: Int = 512, depth: Int = 3, timings: PhaseTimings
    ) {
        self.items = items
        self.verifier = verifier
        self.chunkSize = max(1, chunkSize)
        self.depth = max(1, depth)
        self.timings = timings
    }

    deinit {
        for job in inFlight { job.wait() }
    }

    /// Whether any non-blank input was seen.
    public var isEmpty: Bool { items.isEmpty }

    /// The next verified chunk (never empty), or nil at the end of the input. A read error is
    /// thrown after every item read before it was returned.
    public func next() throws -> [VerifiedItem]? {
        fill()
        guard !inFlight.isEmpty else {
            if let error = deferredError {
                deferredError = nil
                throw error
            }
            return nil
        }
        let job = inFlight.removeFirst()
        // Read the following chunk while this one is being verified, then start verifying it
        // (only from input already there: this one is waiting to be handed out).
        handingOut = true
        fill()
        handingOut = false
        let waited = timings.start()
        job.wait()
        timings.add(.verifyWait, since: waited)
        timings.addVerifyCPU(job.cpuNanoseconds)
        return job.results()
    }

    /// Starts chunks until `depth` are in flight, the input ends, or it pauses.
    private func fill() {
        while inFlight.count < depth, !reachedEnd {
            guard startNext() else { break }
        }
    }

    /// How long a chunk waits for more input before it is handed out as it is: a pipe that stays
    /// open (`tail -f log | iapctl notify`, a webhook relay) gets each complete line applied
    /// within about this time, not only at 512 items or at the end of the input.
    public static let idleMilliseconds: Int32 = 200

    /// Reads up to `chunkSize` items and starts verifying them in the background; false when
    /// nothing was started (the input ended, or paused while other chunks are in flight).
    @discardableResult
    private func startNext() -> Bool {
        guard !reachedEnd else { return false }
        let started = timings.start()
        var chunk: [WebhookBody.Item] = []
        chunk.reserveCapacity(chunkSize)
        do {
            while chunk.count < chunkSize {
                // Never wait for input while there is work to hand out: a read-ahead chunk starts
                // only on input already there, and a started chunk ends when the input pauses.
                if !chunk.isEmpty || !inFlight.isEmpty || handingOut,
                    !items.isReady(waiting: chunk.isEmpty ? 0 : Self.idleMilliseconds)
                {
                    break
                }
                guard let item = try items.next() else {
                    reachedEnd = true
                    break
                }
                chunk.append(item)
            }
        } catch {
            deferredError = error
            reachedEnd = true
        }
        timings.add(.read, since: started)
        guard !chunk.isEmpty else { return false }
        let job = VerificationJob(chunk, verifier: verifier, threads: Self.threadCount, measureCPU: timings.enabled)
        job.start(on: queue)
        inFlight.append(job)
        return true
    }
}

/// The verification of one chunk on a background queue, spread over `threads` workers. A worker
/// keeps its results to itself and hands them over once, under a lock, when it is done; they are
/// put back in input order after `wait()`.
///
/// `@unchecked Sendable`: the workers share only the immutable inputs and `finished` (a `Mutex`);
/// `waited` is read and written only by the thread that owns the job (the writer, and `deinit`).
private final class VerificationJob: @unchecked Sendable {
    private let chunk: [WebhookBody.Item]
    private let verifier: AppStoreVerifier
    private let threads: Int
    private let measureCPU: Bool
    /// What the workers finished: each item with its index in `chunk`, and their CPU time.
    private let finished = Mutex<(items: [(index: Int, item: VerifiedItem)], cpu: Int64)>(([], 0))
    private let group = DispatchGroup()
    private var waited = false

    init(_ chunk: [WebhookBody.Item], verifier: AppStoreVerifier, threads: Int, measureCPU: Bool) {
        self.chunk = chunk
        self.verifier = verifier
        self.threads = max(1, min(threads, chunk.count))
        self.measureCPU = measureCPU
    }

    deinit { wait() }

    /// Starts on `queue` (serial: the chunks ahead wait their turn).
    func start(on queue: DispatchQueue) {
        queue.async(group: group) { [self] in
            if threads == 1 {
                work(worker: 0)
            } else {
                DispatchQueue.concurrentPerform(iterations: threads) { work(worker: $0) }
            }
        }
    }

    /// Worker `w` verifies items w, w + threads, w + 2·threads… (neighbouring items cost the same).
    private func work(worker: Int) {
        let before = measureCPU ? PhaseTimings.threadCPUNanoseconds() : 0
        var done: [(index: Int, item: VerifiedItem)] = []
        var index = worker
        while index < chunk.count {
            done.append((index, VerifiedItem.verify(chunk[index], with: verifier)))
            index += threads
        }
        let spent = measureCPU ? PhaseTimings.threadCPUNanoseconds() - before : 0
        finished.withLock {
            $0.items += done
            $0.cpu += spent
        }
    }

    func wait() {
        guard !waited else { return }
        group.wait()
        waited = true
    }

    var cpuNanoseconds: Int64 {
        wait()
        return finished.withLock { $0.cpu }
    }

    /// Every item's result in input order.
    func results() -> [VerifiedItem] {
        wait()
        let done = finished.withLock { $0.items }
        precondition(done.count == chunk.count, "a verification worker did not finish")
        var ordered = [VerifiedItem?](repeating: nil, count: chunk.count)
        for (index, item) in done { ordered[index] = item }
        return ordered.map { $0! }
    }
}

/// The opt-in (`IAPCTL_TIMINGS=1`) per-phase breakdown `notify` prints on stderr.
///
/// Wall times are on the calling (writer) thread, whose phases add up to the run's time; the
/// verification that overlaps them is reported as CPU time summed over the workers, plus the wall
/// time the writer waited for it.
public final class PhaseTimings {
    public enum Phase: Int, CaseIterable {
        case read, verifyWait, engine, commit, output
    }

    /// A start mark: wall and this thread's CPU clock.
    public struct Mark {
        public var wall: Int64 = 0
        public var cpu: Int64 = 0

        public init(wall: Int64 = 0, cpu: Int64 = 0) {
            self.wall = wall
            self.cpu = cpu
        }
    }

    public let enabled: Bool
    private var wall = [Int64](repeating: 0, count: Phase.allCases.count)
    private var cpu = [Int64](repeating: 0, count: Phase.allCases.count)
    private var verifyCPU: Int64 = 0
    private let began: Int64

    public init(enabled: Bool) {
        self.enabled = enabled
        began = enabled ? Self.monotonicNanoseconds() : 0
    }

    /// A start mark (zero when disabled).
    public func start() -> Mark {
        enabled ? Mark(wall: Self.monotonicNanoseconds(), cpu: Self.threadCPUNanoseconds()) : Mark()
    }

    /// The time since `mark` (zero when disabled).
    public func elapsed(since mark: Mark) -> Mark {
        guard enabled else { return Mark() }
        return Mark(wall: Self.monotonicNanoseconds() - mark.wall, cpu: Self.threadCPUNanoseconds() - mark.cpu)
    }

    /// Adds the time since `mark` to `phase`.
    public func add(_ phase: Phase, since mark: Mark) {
        add(phase, elapsed(since: mark))
    }

    /// Adds `spent` to `phase`; a negative amount takes time away (e.g. a body measured inside a transaction).
    public func add(_ phase: Phase, _ spent: Mark) {
        guard enabled else { return }
        wall[phase.rawValue] += spent.wall
        cpu[phase.rawValue] += spent.cpu
    }

    public func addVerifyCPU(_ nanoseconds: Int64) {
        guard enabled else { return }
        verifyCPU += nanoseconds
    }

    /// The breakdown line, or nil when disabled: `phase wall/cpu` in seconds.
    public func summary(items: Int, threads: Int, cache: (hits: Int, misses: Int, entries: Int)) -> String? {
        guard enabled else { return nil }
        let total = Self.monotonicNanoseconds() - began
        func s(_ ns: Int64) -> String {
            let ms = (ns + 500_000) / 1_000_000
            let frac = String(ms % 1000)
            return "\(ms / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
        }
        func phase(_ p: Phase) -> String { "\(s(wall[p.rawValue]))/\(s(cpu[p.rawValue]))s" }
        let rate = total > 0 ? Int64(items) * 1_000_000_000 / total : 0
        return "notify timings: \(items) items in \(s(total))s (\(rate)/s), wall/cpu: "
            + "read/parse \(phase(.read)); "
            + "verify cpu \(s(verifyCPU))s on \(threads) thread\(threads == 1 ? "" : "s") "
            + "(writer waited \(s(wall[Phase.verifyWait.rawValue]))s); "
            + "engine+store \(phase(.engine)); "
            + "begin/commit \(phase(.commit)); "
            + "output \(phase(.output)); "
            + "process cpu \(s(Self.processCPUNanoseconds()))s; "
            + "chain cache \(cache.hits) hits, \(cache.misses) misses"
    }

    public static func monotonicNanoseconds() -> Int64 { clock(CLOCK_MONOTONIC) }
    public static func threadCPUNanoseconds() -> Int64 { clock(CLOCK_THREAD_CPUTIME_ID) }
    public static func processCPUNanoseconds() -> Int64 { clock(CLOCK_PROCESS_CPUTIME_ID) }

    private static func clock(_ id: clockid_t) -> Int64 {
        var t = timespec()
        guard clock_gettime(id, &t) == 0 else { return 0 }
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}
