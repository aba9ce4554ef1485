import AppStoreJWS
import Synchronization
import Testing

/// A settable clock for tests.
final class TestClock: Sendable {
    private let value: Mutex<Int64>
    init(_ ms: Int64) { value = Mutex(ms) }
    func set(_ ms: Int64) { value.withLock { $0 = ms } }
    var now: Int64 { value.withLock { $0 } }
}

@Suite("Chain cache")
struct ChainCacheTests {
    static let lokiFiles = [
        "02-loki-subscribed-resubscribe.jws", "03-loki-did-renew.jws", "04-loki-did-change-renewal-status-auto-renew-disabled.jws",
        "05-loki-expired-voluntary.jws", "06-loki-did-change-renewal-pref-upgrade.jws",
    ]

    static func verifier(_ time: TrustConfiguration.ValidationTime = .signedDate) throws -> AppStoreVerifier {
        try AppStoreVerifier(
            configuration: TrustConfiguration(
                bundleId: "com.loki-project.loki-messenger", environments: ["Sandbox"], validationTime: time,
                clock: { ms("2026-06-01T00:00:00Z") }))
    }

    @Test func batchBuildsTheChainOnce() throws {
        let verifier = try Self.verifier()
        for file in Self.lokiFiles {
            let report = verifier.verify(try FixtureFiles.text("real/" + file))
            #expect(report.isValid)
            #expect(report.nested.count == 2)
        }
        // 5 notifications × (1 + 2 nested) JWS under the same header: one chain evaluation.
        let stats = verifier.chainCacheStatistics
        #expect(stats.misses == 1)
        #expect(stats.hits == 14)
        #expect(stats.entries == 1)
        let again = verifier.verify(try FixtureFiles.text("real/03-loki-did-renew.jws"))
        #expect(again.check("chain")?.detail.contains("cached") == true)
    }

    @Test func timeOutsideTheWindowIsNotServedFromCache() throws {
        // 2025 leaf valid 2025-09-19 … 2027-10-13.
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let inside = try Self.verifier()
        #expect(inside.verify(jws).isValid)
        #expect(inside.verify(jws).isValid)
        #expect(inside.chainCacheStatistics.hits == 5)  // 2 nested on the first call, 3 on the second

        // Same JWS, fixed times on both sides of the window, with a warm cache each time.
        for (time, valid) in [
            ("2025-09-20T00:00:00Z", true), ("2025-09-19T19:44:50Z", false), ("2025-09-19T19:44:51Z", true),
            ("2027-10-13T17:47:22Z", true), ("2027-10-13T17:47:23Z", false), ("2026-01-01T00:00:00Z", true),
            ("2030-01-01T00:00:00Z", false),
        ] {
            let verifier = try Self.verifier(.fixed(ms(time)))
            let r = verifier.verify(jws)
            #expect(r.isValid == valid, "\(time) \(r.failure.map { "\($0)" } ?? "")")
            #expect(verifier.verify(jws).isValid == valid, "\(time) cached")
        }
    }

    @Test func warmCacheDoesNotOutliveTheCertificates() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let clock = TestClock(ms("2026-06-01T00:00:00Z"))
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(
                bundleId: "com.loki-project.loki-messenger", environments: ["Sandbox"], validationTime: .now,
                clock: { clock.now }))
        #expect(verifier.verify(jws).isValid)
        #expect(verifier.chainCacheStatistics.entries == 1)
        clock.set(ms("2027-10-13T17:47:23Z"))
        let expired = verifier.verify(jws)
        #expect(expired.failure?.code == .certificateExpiredOrNotYetValid)
        clock.set(ms("2027-10-13T17:47:22Z"))
        #expect(verifier.verify(jws).isValid)
    }

    @Test func concurrentVerificationIsSafe() async throws {
        let verifier = try Self.verifier()
        let texts = try Self.lokiFiles.map { try FixtureFiles.text("real/" + $0) }
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<40 {
                group.addTask { verifier.verify(texts[i % texts.count]).isValid }
            }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 40)
        #expect(results.allSatisfy { $0 })
    }
}
