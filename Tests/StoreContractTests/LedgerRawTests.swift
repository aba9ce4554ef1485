import JWSForge
import StoreSQL
import SubscriptionEngine
import SubscriptionModel
import Testing

/// The ledger stores each raw as one zstd frame (a re-delivery of the same
/// bytes by reference), and every item reads back byte for byte, on every backend. (Rows of the
/// former packed forms, versions 1–4: StoredFormsTests' migration test.)
@Suite("Store contract: ledger raw text, byte for byte")
struct LedgerRawTests {
    /// A replay of hundreds of items of every shape the ledger receives: signed notifications from two
    /// CAs, webhook bodies, whitespace around, re-deliveries (identical and not), non-canonical
    /// base64url, garbage and non-ASCII text. Every item is read back and compared.
    static let replay: [(uuid: String?, raw: String)] = {
        var items: [(uuid: String?, raw: String)] = []
        do {
            let first = try TestPKI.make()
            let second = try TestPKI.make()
            let tokens = (0..<60).map { SubscriptionSeries.uuid(seed: 0xdead, counter: Int64($0)) }
            var series = SubscriptionSeries(orders: 60, renewals: 3, tokens: tokens)
            series.seed = 17
            let builder = PayloadBuilder(pki: first, bundleId: "com.example.app", environment: "Sandbox")
            try series.generate(with: builder) { jws in
                let uuid = "n-\(items.count)"
                switch items.count % 10 {
                case 3: items.append((uuid, #"{"signedPayload":""# + jws + #""}"#))
                case 5: items.append((uuid, "  " + jws + "\r\n"))
                default: items.append((uuid, jws))
                }
            }
            series.seed = 18
            let other = PayloadBuilder(pki: second, bundleId: "com.example.app", environment: "Production")
            series.orders = 20
            series.renewals = 1
            try series.generate(with: other) { items.append(("m-\(items.count)", $0)) }
        } catch {
            Issue.record("cannot forge the replay: \(error)")
        }
        let sample = items[7].raw
        let parts = sample.split(separator: ".", omittingEmptySubsequences: false)
        // Re-deliveries: the same bytes (stored as a reference), and other bytes under the same UUID.
        items += items[0..<40].map { ($0.uuid, $0.raw) }
        items.append((items[1].uuid, items[2].raw))
        items += [
            // Not canonical base64url: padding, a non-zero trailing bit, a bad character.
            (nil, parts[0] + "==." + parts[1] + "." + parts[2]),
            (nil, String(parts[0].dropLast()) + "B." + parts[1] + "." + parts[2]),
            (nil, parts[0] + "." + parts[1] + "." + parts[2].dropLast() + "+"),
            (nil, parts[0] + "." + parts[1]),
            ("u-1", ""),
            ("u-2", "not a JWS at all: ✓ ünïcödé \u{202E} \u{1F600}\ttab"),
            (nil, "{\"signedPayload\": \"a.b.c\", \"x\": \"" + String(repeating: "A", count: 100) + "\"}"),
            (nil, "...."),
            (nil, String(repeating: "eyJ", count: 40) + "." + String(repeating: "x", count: 30) + "."),
        ]
        return items
    }()

    @Test(arguments: StoreBackend.available)
    func everyItemOfALargeReplayReadsBackByteForByte(backend: StoreBackend) throws {
        let items = Self.replay
        #expect(items.count >= 300)
        try withStore(backend) { store in
            var ids: [Int64] = []
            // Chunks of 64 items with a savepoint each (as notify does); every 16th item's savepoint
            // rolls back after its write, so a chain inserted there must be inserted again later.
            for chunk in stride(from: 0, to: items.count, by: 64) {
                let chunkIds: [Int64] = try store.write { s in
                    var chunkIds: [Int64] = []
                    for k in chunk..<min(chunk + 64, items.count) {
                        if k % 16 == 0 {
                            _ = try? s.savepoint { () throws -> Int64 in
                                _ = try s.appendLedger(Self.entry(items[k], verdict: .rejected))
                                throw Boom()
                            }
                        }
                        chunkIds.append(try s.savepoint { try s.appendLedger(Self.entry(items[k], verdict: .applied)) })
                    }
                    return chunkIds
                }
                ids += chunkIds
            }
            try store.read { s throws in
                for (id, item) in zip(ids, items) {
                    let entry = try #require(try s.ledgerEntry(id: id))
                    #expect(Array(entry.raw.utf8) == Array(item.raw.utf8), "ledger item \(id)")
                    #expect(entry.notificationUUID == item.uuid)
                }
                // The other read paths rebuild the same text.
                let mentioning = try s.ledger(transactionIds: ["t"], originalTransactionIds: [], appAccountTokens: [])
                #expect(mentioning.count == items.count)
                #expect(Set(mentioning.map(\.raw)) == Set(items.map(\.raw)))
                let processed = try #require(try s.processedLedgerEntry(notificationUUID: items[3].uuid!))
                #expect(processed.raw == items[3].raw)
            }
        }
    }

    /// A new transaction (a fresh session) rebuilds rows whose chain was stored by another one.
    @Test(arguments: StoreBackend.available)
    func chainsAreSharedAcrossTransactions(backend: StoreBackend) throws {
        let items = Array(Self.replay[0..<5])
        try withStore(backend) { store in
            var ids: [Int64] = []
            for item in items { ids.append(try store.write { try $0.appendLedger(Self.entry(item, verdict: .applied)) }) }
            // A dry run (rolled back) must not leave a chain that a later write relies on.
            let pki = try TestPKI.make()
            let fresh = try PayloadBuilder(pki: pki, bundleId: "b", environment: "Sandbox").testNotification(
                uuid: "dry", signedDate: 1)
            try store.write(commit: false) { _ = try $0.appendLedger(Self.entry(("dry", fresh), verdict: .applied)) }
            let kept = try store.write { try $0.appendLedger(Self.entry(("dry", fresh), verdict: .applied)) }
            try store.read { s throws in
                for (id, item) in zip(ids, items) { #expect(try s.ledgerEntry(id: id)?.raw == item.raw) }
                #expect(try s.ledgerEntry(id: kept)?.raw == fresh)
            }
        }
    }

    static func entry(_ item: (uuid: String?, raw: String), verdict: Verdict) -> LedgerEntry {
        LedgerEntry(
            receivedAt: 1, source: .apple, notificationUUID: item.uuid, transactionId: "t", verdict: verdict,
            detail: nil, raw: item.raw)
    }
}

/// The former packed form (read only by schema v10's conversion): exact, and refusing to guess.
@Suite("Ledger packing (schema v9's form)")
struct LedgerPackingTests {
    @Test func aSignedNotificationPacksToASmallFractionAndBack() throws {
        let raw = LedgerRawTests.replay[0].raw
        let packed = try #require(LedgerPacking.pack(raw))
        #expect(packed.chains.count == 1, "the outer and both nested JWS share one chain")
        #expect(packed.bytes.count * 8 < raw.utf8.count, "\(packed.bytes.count) bytes for \(raw.utf8.count)")
        let chains = Dictionary(uniqueKeysWithValues: packed.chains.map { ($0.digest, $0.text) })
        #expect(try LedgerPacking.unpack(packed.bytes) { chains[$0] } == raw)
        #expect(packed.chains[0].text.count > 1000)
        #expect(LedgerPacking.pack(raw)?.bytes == packed.bytes, "deterministic, so re-deliveries compare equal")
    }

    @Test func unpackingRefusesMissingChainsAndDamage() throws {
        let raw = LedgerRawTests.replay[0].raw
        let packed = try #require(LedgerPacking.pack(raw))
        #expect(throws: LedgerPacking.UnpackError.missingChain(packed.chains[0].digest)) {
            try LedgerPacking.unpack(packed.bytes) { _ in nil }
        }
        let chains = Dictionary(uniqueKeysWithValues: packed.chains.map { ($0.digest, $0.text) })
        var damaged = packed.bytes
        damaged[damaged.count - 3] ^= 0x55
        #expect(throws: (any Error).self) { try LedgerPacking.unpack(damaged) { chains[$0] } }
        #expect(throws: (any Error).self) { try LedgerPacking.unpack([9, 0]) { chains[$0] } }
        #expect(throws: (any Error).self) { try LedgerPacking.unpack(Array(packed.bytes.prefix(40))) { chains[$0] } }
    }

    @Test func textThatIsNotACanonicalJWSIsLeftAlone() {
        #expect(LedgerPacking.pack("") == nil)
        #expect(LedgerPacking.pack("short") == nil)
        let garbage = String(repeating: "z", count: 500)
        if let packed = LedgerPacking.pack(garbage) {
            #expect((try? LedgerPacking.unpack(packed.bytes) { _ in nil }) == garbage)
        }
    }
}

/// The claim tells the session whether the ledger holds a copy of the notification
/// (MariaDB: in the claim's own round trip); a claimed re-delivery is still stored by reference.
@Suite("Store contract: claimed re-deliveries")
struct ClaimedRedeliveryTests {
    static func rawOf(_ id: Int64, _ store: any Store) throws -> Int64? {
        let connection = try #require(store as? any SQLStoreBackend).transactions.connection
        return try store.read { _ in
            try connection.query("SELECT raw_of FROM iap_ledger WHERE id = ?", [.int(id)]).rows.first?.optionalInt(0)
        }
    }

    @Test(arguments: StoreBackend.available)
    func aClaimedRedeliveryIsStoredByReferenceAndReadsBack(backend: StoreBackend) throws {
        let raws = LedgerRawTests.replay.prefix(3).map(\.raw)
        try withStore(backend) { store in
            // Unmatched: the claim is released, the row holds the raw.
            let first = try store.write { s in
                #expect(try s.claimNotification("r-1"))
                let id = try s.appendLedger(LedgerRawTests.entry(("r-1", raws[0]), verdict: .unmatched))
                try s.releaseNotificationClaim("r-1")
                return id
            }
            // Delivered again: claimed afresh, stored as a reference to the first copy.
            let again = try store.write { s in
                #expect(try s.claimNotification("r-1"))
                return try s.appendLedger(LedgerRawTests.entry(("r-1", raws[0]), verdict: .applied))
            }
            // In one transaction: a fresh claim, its row, the claim released and taken again.
            let (fresh, twice) = try store.write { s in
                #expect(try s.claimNotification("r-2"))
                let fresh = try s.appendLedger(LedgerRawTests.entry(("r-2", raws[1]), verdict: .unmatched))
                try s.releaseNotificationClaim("r-2")
                #expect(try s.claimNotification("r-2"))
                return (fresh, try s.appendLedger(LedgerRawTests.entry(("r-2", raws[1]), verdict: .applied)))
            }
            // A fresh claim whose first row is rolled back, then claimed and written again.
            let kept = try store.write { s in
                _ = try? s.savepoint { () throws -> Void in
                    #expect(try s.claimNotification("r-3"))
                    _ = try s.appendLedger(LedgerRawTests.entry(("r-3", raws[2]), verdict: .applied))
                    throw Boom()
                }
                #expect(try s.claimNotification("r-3"))
                return try s.appendLedger(LedgerRawTests.entry(("r-3", raws[2]), verdict: .applied))
            }
            #expect(try Self.rawOf(first, store) == nil)
            #expect(try Self.rawOf(again, store) == first)
            #expect(try Self.rawOf(fresh, store) == nil)
            #expect(try Self.rawOf(twice, store) == fresh)
            #expect(try Self.rawOf(kept, store) == nil)
            try store.read { s throws in
                for (id, raw) in [(first, raws[0]), (again, raws[0]), (fresh, raws[1]), (twice, raws[1]), (kept, raws[2])] {
                    #expect(try s.ledgerEntry(id: id)?.raw == raw, "ledger row \(id)")
                }
            }
        }
    }
}
