import Synchronization

/// Verified chains by JOSE header, so a batch signed under one certificate chain pays for
/// chain building once and every further JWS only for its ES256 check.
///
/// The key is the exact header segment (it fixes `alg` and all three `x5c` certificates); the
/// root set is fixed per verifier, which owns its cache. An entry is only created for a chain
/// that fully verified, and it answers only for validation times inside the window where every
/// certificate on the path is valid, so a time outside it is evaluated afresh.
final class ChainCache: Sendable {
    /// A cached verdict: the decoded header and the verified chain.
    struct Entry: Sendable {
        let header: JSONValue
        let chain: ValidatedChain
    }

    /// Header segment text with its hash computed outside the lock.
    struct Key: Hashable, Sendable {
        let text: String
        let hashValue_: Int

        init(_ segment: Substring) {
            text = String(segment)
            // The length and the first 1 KiB (alg and most of the leaf certificate, whose serial
            // number differs between chains) spread the keys; equality still compares the whole text.
            var hasher = Hasher()
            var copy = text
            copy.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[0..<min(bytes.count, 1024)]))
            }
            hashValue_ = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hashValue_) }

        static func == (a: Key, b: Key) -> Bool { a.hashValue_ == b.hashValue_ && a.text == b.text }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var hits = 0
        var misses = 0
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The entry for `key` when its chain is valid at `seconds`; counts a hit or a miss.
    func lookup(_ key: Key, at seconds: Int64) -> Entry? {
        state.withLock { state in
            if let entry = state.entries[key], entry.chain.contains(seconds: seconds) {
                state.hits += 1
                return entry
            }
            state.misses += 1
            return nil
        }
    }

    /// The decoded header cached for `key`, whatever the time (saves re-parsing it).
    func header(for key: Key) -> JSONValue? {
        state.withLock { $0.entries[key]?.header }
    }

    func insert(_ key: Key, _ entry: Entry) {
        state.withLock { state in
            if state.entries.count >= capacity, state.entries[key] == nil {
                state.entries.removeAll(keepingCapacity: true)
            }
            state.entries[key] = entry
        }
    }

    var statistics: (hits: Int, misses: Int, entries: Int) {
        state.withLock { ($0.hits, $0.misses, $0.entries.count) }
    }
}
