#if canImport(Glibc)
    import Glibc
#endif

/// The compact stored form of the store's longer texts (to keep the database small): a ledger row's
/// `detail`, an audit row's before/after JSON, a fact's canonical JSON body. The same texts,
/// rebuilt exactly.
///
/// A packed value is a format byte (``format``) and one Zstandard frame (``ZstdCodec``) without
/// its 4-byte magic number (always the same, put back before decoding), compressed with the
/// preset dictionary of its ``Kind``. The frame's content is the texts in order, each as a varint
/// (0 for nil, else its UTF-8 length + 1) and its bytes: an audit row's before and after go in one
/// frame, so the after JSON is mostly references to the before. Before compression, each
/// occurrence of one of the row's own values (`context`: ids the same row holds in other columns,
/// such as a fact's key) becomes byte 0x01 and the value's index + 1; a 0x01 of the texts
/// becomes 0x01 0x00. ``pack(_:_:context:)`` proves its result (unpacks it and compares) and
/// returns nil, meaning "store the texts as they are", when it would not be smaller, does not
/// rebuild them exactly, or libzstd cannot be loaded.
public enum TextPacking {
    /// What the texts are: each kind has its own dictionary.
    public enum Kind: Sendable, CaseIterable {
        case detail, audit, factBody
    }

    /// The format written: one zstd frame, magic number left out, the kind's dictionary of format 1.
    static let format: UInt8 = 1
    private static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// Level 5 (as the ledger's raws): on the bench's texts within 3 % of level 19's size, at a tenth
    /// of its CPU time; level 3 is 10 % larger.
    private static let level: Int32 = 5
    private static let escape: UInt8 = 0x01
    /// Shorter row values are left as they are.
    private static let minimumContext = 4

    private static let detailCodec = ZstdCodec.Shared(dictionary: Array(detailDictionary.utf8), level: level, checksum: false)
    private static let auditCodec = ZstdCodec.Shared(dictionary: Array(auditDictionary.utf8), level: level, checksum: false)
    private static let factCodec = ZstdCodec.Shared(dictionary: Array(factDictionary.utf8), level: level, checksum: false)

    private static func codec(_ kind: Kind) -> ZstdCodec.Shared? {
        switch kind {
        case .detail: return detailCodec
        case .audit: return auditCodec
        case .factBody: return factCodec
        }
    }

    /// The packed form of `texts`, or nil when it would not be smaller or not rebuild them exactly.
    /// `context`: the row's values to refer to (the same, in the same order, to unpack).
    public static func pack(_ texts: [String?], _ kind: Kind, context: [String?] = []) -> [UInt8]? {
        let context = usableContext(context)
        var content: [UInt8] = []
        var plain = 0
        for text in texts {
            guard let text else {
                content.append(0)
                continue
            }
            plain += text.utf8.count
            let bytes = substitute(Array(text.utf8), context, escape: escape)
            LedgerPacking.appendVarint(&content, bytes.count + 1)
            content += bytes
        }
        guard plain > 0, let frame = ZstdCodec.compress(content, with: codec(kind)),
            frame.count > magic.count, Array(frame.prefix(magic.count)) == magic
        else { return nil }
        let packed = [format] + frame.dropFirst(magic.count)
        guard packed.count < plain, let rebuilt = try? unpack(packed, kind, count: texts.count, values: context),
            rebuilt == texts
        else { return nil }
        return packed
    }

    /// The `count` texts of a packed value.
    public static func unpack(
        _ packed: [UInt8], _ kind: Kind, count: Int, context: [String?] = []
    ) throws(LedgerPacking.UnpackError) -> [String?] {
        try unpack(packed, kind, count: count, values: usableContext(context))
    }

    private static func unpack(
        _ packed: [UInt8], _ kind: Kind, count: Int, values context: [[UInt8]]
    ) throws(LedgerPacking.UnpackError) -> [String?] {
        guard packed.first == format else {
            throw .malformed("unknown packed text format \(packed.first.map(String.init) ?? "(empty)")")
        }
        let content = try ZstdCodec.decompress((magic + packed.dropFirst())[...], with: codec(kind))
        var texts: [String?] = []
        var offset = 0
        while texts.count < count {
            guard let value = varint(content, &offset) else { throw .malformed("packed text truncated") }
            if value == 0 {
                texts.append(nil)
                continue
            }
            guard value - 1 <= content.count - offset else { throw .malformed("packed text past the end") }
            let bytes = try restore(content[offset..<(offset + value - 1)], context, escape: escape)
            texts.append(String(decoding: bytes, as: UTF8.self))
            offset += value - 1
        }
        guard offset == content.count else { throw .malformed("packed text has \(content.count - offset) bytes left over") }
        return texts
    }

    /// The varint at `offset` (moved past it), or nil when it is truncated or too long.
    static func varint(_ bytes: [UInt8], _ offset: inout Int) -> Int? {
        var value = 0
        var shift = 0
        while offset < bytes.count, shift < 35 {
            let byte = bytes[offset]
            offset += 1
            value |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// The context values long enough to refer to, as bytes (nil and short ones kept as empty, so
    /// indexes stay the caller's).
    static func usableContext(_ context: [String?]) -> [[UInt8]] {
        context.prefix(200).map { value in
            guard let value, value.utf8.count >= minimumContext else { return [] }
            return Array(value.utf8)
        }
    }

    /// `text` with every occurrence of a context value (the longest first at each position)
    /// replaced by `escape` and its index + 1, and `escape` itself by `escape` 0.
    static func substitute(_ text: [UInt8], _ context: [[UInt8]], escape: UInt8) -> [UInt8] {
        var referred = false
        return substitute(text, context, escape: escape, referred: &referred)
    }

    /// The same; `referred` tells whether any value was referred to.
    static func substitute(_ text: [UInt8], _ context: [[UInt8]], escape: UInt8, referred: inout Bool) -> [UInt8] {
        let order = context.indices.filter { !context[$0].isEmpty }.sorted { context[$0].count > context[$1].count }
        // Which bytes may start a reference (or need escaping): every other byte is copied in runs.
        var starts = [Bool](repeating: false, count: 256)
        starts[Int(escape)] = true
        for index in order { starts[Int(context[index][0])] = true }
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 16)
        var found = false
        text.withUnsafeBufferPointer { text in
            let n = text.count
            var run = 0
            var i = 0
            scan: while i < n {
                let byte = text[i]
                guard starts[Int(byte)] else {
                    i += 1
                    continue
                }
                if byte == escape {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: text[run..<i]))
                    out += [escape, 0]
                    i += 1
                    run = i
                    continue
                }
                for index in order {
                    let count = context[index].count
                    guard count <= n - i,
                        context[index].withUnsafeBufferPointer({ memcmp($0.baseAddress!, text.baseAddress! + i, count) == 0 })
                    else { continue }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: text[run..<i]))
                    out += [escape, UInt8(index + 1)]
                    found = true
                    i += count
                    run = i
                    continue scan
                }
                i += 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[run..<n]))
        }
        if found { referred = true }
        return out
    }

    /// The inverse of ``substitute(_:_:escape:)``.
    static func restore(
        _ bytes: ArraySlice<UInt8>, _ context: [[UInt8]], escape: UInt8
    ) throws(LedgerPacking.UnpackError) -> [UInt8] {
        guard var next = bytes.firstIndex(of: escape) else { return Array(bytes) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        var run = bytes.startIndex
        while true {
            out += bytes[run..<next]
            guard next + 1 < bytes.endIndex else { throw .malformed("packed text ends inside a reference") }
            let reference = Int(bytes[next + 1])
            if reference == 0 {
                out.append(escape)
            } else {
                guard reference <= context.count, !context[reference - 1].isEmpty else {
                    throw .malformed("packed text refers to row value \(reference), which the row does not hold")
                }
                out += context[reference - 1]
            }
            run = next + 2
            guard let following = bytes[run...].firstIndex(of: escape) else { break }
            next = following
        }
        out += bytes[run...]
        return out
    }

    // MARK: dictionaries (part of the stored format: never change one, add a format)

    /// What ledger details repeat: the engine's change summaries and its usual sentences.
    static let detailDictionary =
        "no change: contract  is already expired; every fact it carries was already recorded: nothing to change"
        + "notification  was already processed (ledger #: duplicate)signed , before facts signed  that already decide "
        + "the rows: facts recorded, rows unchanged; its facts are kept and recorded for replay (fix the cause, then run "
        + "`iapctl notify --replay-unmatched`)no order with no =  and no contract replayed: transaction  is already order "
        + "; contract  updated: status active → expired, auto_renew true → false, next_product_id ∅ → , "
        + "status active → canceled, status paid → refunded, status active → revoked, status billing_retry → active"
        + "; order  updated: status pending → paid, trade_no ∅ → , origin_no ∅ → , purchase_date ∅ → 2026-01-01T00:00:00Z"
        + ", expires_date ∅ → 2026-02-01T00:00:00Z, environment ∅ → Production, price ∅ → , currency ∅ → USD"
        + "; contract  created: contract_id ∅ → , user_id ∅ → , product_id ∅ → , status ∅ → active, auto_renew ∅ → true"
        + ", expires_date ∅ → 2025-12-01T00:00:00Z, environment ∅ → Sandbox"
        + "order  created: no ∅ → , user_id ∅ → , product_id ∅ → , status ∅ → paid, trade_no ∅ → , origin_no ∅ → "
        + ", purchase_date ∅ → 2025-01-01T00:00:00Z, expires_date ∅ → 2025-02-01T00:00:00Z, environment ∅ → Sandbox"
        + ", price ∅ → , currency ∅ → USD; contract  updated: expires_date 2025-01-01T00:00:00Z → 2025-02-01T00:00:00Z"

    /// What audit rows repeat: orders and contracts as sorted-keys JSON, commands and reasons.
    static let auditDictionary =
        "orders updatecontracts updateaudit undoorders createrestore --applyverify --applyapple reconcile"
        + "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLEDEXPIRED/VOLUNTARYREFUNDapple_api submission"
        + "SUBSCRIBED/RESUBSCRIBEnotifyDID_RENEWnotifySUBSCRIBED/INITIAL_BUY"
        + #"{"createdAt":1700000000000,"id":1,"no":"","productId":"","status":"pending","updatedAt":1700000000000,"userId":""}"#
        + #"{"autoRenew":false,"contractId":"","createdAt":1700000000000,"environment":"Production","#
        + #""expiresDate":1700000000000,"id":1,"lastEventDate":1700000000000,"nextProductId":"","productId":"","#
        + #""status":"expired","updatedAt":1700000000000,"userId":""}"#
        + #"{"createdAt":1700000000000,"currency":"EUR","environment":"Production","expiresDate":1700000000000,"id":1,"#
        + #""no":"","originNo":"","price":4990,"productId":"","purchaseDate":1700000000000,"status":"refunded","#
        + #""tradeNo":"","updatedAt":1700000000000,"userId":""}"#
        + #"{"autoRenew":true,"contractId":"","createdAt":1700000000000,"environment":"Sandbox","#
        + #""expiresDate":1700000000000,"id":1,"lastEventDate":1700000000000,"productId":"","#
        + #""status":"active","updatedAt":1700000000000,"userId":""}"#
        + #"{"createdAt":1700000000000,"currency":"USD","environment":"Sandbox","expiresDate":1700000000000,"id":1,"#
        + #""no":"","originNo":"","price":9990,"productId":"","purchaseDate":1700000000000,"status":"paid","#
        + #""tradeNo":"","updatedAt":1700000000000,"userId":""}"#

    /// What fact bodies repeat: canonical (sorted-keys) transactions, renewal infos, notifications.
    static let factDictionary =
        #"{"notificationType":"DID_CHANGE_RENEWAL_STATUS","status":1,"subtype":"AUTO_RENEW_DISABLED","transactionId":""}"#
        + #"{"notificationType":"EXPIRED","status":2,"subtype":"VOLUNTARY","transactionId":""}"#
        + #"{"notificationType":"REFUND","status":5,"transactionId":""}"#
        + #"{"appAccountToken":"","appTransactionId":"","currency":"EUR","environment":"Production","#
        + #""expiresDate":1700000000000,"inAppOwnershipType":"FAMILY_SHARED","isFromReceipt":false,"isUpgraded":true,"#
        + #""offerIdentifier":"","offerPeriod":"P1M","offerType":1,"originalPurchaseDate":1700000000000,"#
        + #""originalTransactionId":"","price":4990,"productId":"","purchaseDate":1700000000000,"#
        + #""revocationDate":1700000000000,"revocationReason":0,"revocationType":"REFUND_FULL","revocationPercentage":100000,"#
        + #""transactionId":"","transactionReason":"PURCHASE","type":"Non-Consumable"}"#
        + #"{"autoRenewProductId":"","autoRenewStatus":0,"expirationIntent":1,"gracePeriodExpiresDate":1700000000000,"#
        + #""isInBillingRetryPeriod":true,"offerIdentifier":"","offerType":2,"productId":"","renewalDate":1700000000000}"#
        + #"{"autoRenewProductId":"","autoRenewStatus":1,"productId":"","renewalDate":1700000000000}"#
        + #"{"appAccountToken":"","currency":"USD","environment":"Sandbox","expiresDate":1700000000000,"#
        + #""inAppOwnershipType":"PURCHASED","isFromReceipt":false,"originalPurchaseDate":1700000000000,"#
        + #""originalTransactionId":"","price":9990,"productId":"","purchaseDate":1700000000000,"#
        + #""transactionId":"","transactionReason":"RENEWAL","type":"Auto-Renewable Subscription"}"#
        + #"{"notificationType":"DID_RENEW","status":1,"transactionId":""}"#
        + #"{"notificationType":"SUBSCRIBED","status":1,"subtype":"INITIAL_BUY","transactionId":""}"#
}
