import CryptoDigest
import IAPFoundation

/// How `member_contracts.snapshot` is kept checked: the engine's snapshot text after one line
/// `check <SHA-256 of the text, hex> <number of the subscription's facts> <their highest id>`.
/// Read back, the snapshot is used only when the digest matches the text and the subscription's
/// facts are still the ones it was computed from; otherwise the reader gets nil and the engine
/// decides from every fact (and writes a new snapshot). A snapshot written before this check (no
/// line) is never used.
public enum ContractSnapshotCheck {
    static let prefix = "check "

    /// The stored form of `text` computed from `facts`.
    public static func stored(_ text: String, facts: (count: Int64, highestId: Int64)) -> String {
        prefix + Hex.encode(SHA256Digest.of(text)) + " \(facts.count) \(facts.highestId)\n" + text
    }

    /// The snapshot text of `stored` when it checks out against itself and `facts`, else nil.
    public static func text(of stored: String, facts: (count: Int64, highestId: Int64)) -> String? {
        guard stored.hasPrefix(prefix), let newline = stored.firstIndex(of: "\n") else { return nil }
        let fields = stored[stored.index(stored.startIndex, offsetBy: prefix.count)..<newline].split(separator: " ")
        let text = String(stored[stored.index(after: newline)...])
        guard fields.count == 3, fields[0] == Hex.encode(SHA256Digest.of(text)), Int64(fields[1]) == facts.count,
            Int64(fields[2]) == facts.highestId
        else { return nil }
        return text
    }
}
