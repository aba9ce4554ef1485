import SubscriptionEngine

/// What one ledger row stores for its raw text: the text itself (rows written before ledger
/// compaction, and text packing cannot shrink), the packed bytes, or the id of the first copy.
public struct StoredRaw: Sendable, Equatable {
    public var text: String
    public var packed: [UInt8]?
    public var rawOf: Int64?
    /// The row's ids packed bytes may refer to (``LedgerPacking`` version 4): not a column of its
    /// own, the row's (``StoredTexts/ledgerContext(_:)``).
    public var context: [String?]

    public init(text: String, packed: [UInt8]?, rawOf: Int64?, context: [String?] = []) {
        self.text = text
        self.packed = packed
        self.rawOf = rawOf
        self.context = context
    }
}

/// The ledger-raw logic both backends share, for one transaction: how a raw is stored (packed,
/// chains once, a re-delivery as a reference) and how the exact text is rebuilt. The backend gives
/// the few statements it needs as closures.
public final class LedgerRawCodec {
    /// Chain texts by digest: content-addressed, so never stale.
    private var chainTexts: [[UInt8]: [UInt8]] = [:]
    /// Digests known to be in `iap_ledger_chains` in this transaction. A savepoint rollback may
    /// undo an insert, so ``forgetWrites()`` empties it.
    private var chainsPresent: Set<[UInt8]> = []

    public init() {}

    /// Call after rolling back to a savepoint.
    public func forgetWrites() { chainsPresent.removeAll() }

    /// What to store for `raw`. `firstCopy(uuid, packed)` finds an earlier row with the same
    /// notification UUID and identical packed bytes; `insertChain` stores a chain unless its digest
    /// is already there (an insert that ignores a duplicate digest).
    public func storedForm(
        raw: String, notificationUUID: String?, context: [String?],
        firstCopy: (String, [UInt8]) throws(StoreError) -> Int64?,
        insertChain: (LedgerPacking.Chain) throws(StoreError) -> Void
    ) throws(StoreError) -> StoredRaw {
        guard let packed = LedgerPacking.pack(raw, context: context) else { return StoredRaw(text: raw, packed: nil, rawOf: nil) }
        if let uuid = notificationUUID, let first = try firstCopy(uuid, packed.bytes) {
            return StoredRaw(text: "", packed: nil, rawOf: first)
        }
        for chain in packed.chains where !chainsPresent.contains(chain.digest) {
            try insertChain(chain)
            chainsPresent.insert(chain.digest)
            chainTexts[chain.digest] = chain.text
        }
        return StoredRaw(text: "", packed: packed.bytes, rawOf: nil)
    }

    /// The exact raw text of a row. `rowById` reads the stored raw of the row a reference points
    /// to; `chainByDigest` reads a chain's text.
    public func text(
        of stored: StoredRaw, rowId: Int64,
        rowById: (Int64) throws(StoreError) -> StoredRaw?,
        chainByDigest: ([UInt8]) throws(StoreError) -> [UInt8]?
    ) throws(StoreError) -> String {
        var stored = stored
        if let first = stored.rawOf {
            guard let target = try rowById(first), target.rawOf == nil else {
                throw StoreError.failure(
                    "ledger row \(rowId) refers to row \(first) for its raw text, which does not hold it")
            }
            stored = target
        }
        guard let packed = stored.packed else { return stored.text }
        do {
            return try LedgerPacking.unpack(packed, context: stored.context) { digest in
                if let text = chainTexts[digest] { return text }
                let text = try chainByDigest(digest)
                if let text { chainTexts[digest] = text }
                return text
            }
        } catch let error as LedgerPacking.UnpackError {
            throw StoreError.failure("ledger row \(rowId): \(error)")
        } catch {
            // `unpack` throws only its own errors and what `chainByDigest` throws (a StoreError).
            throw error as? StoreError ?? .failure("ledger row \(rowId): \(error)")
        }
    }
}
