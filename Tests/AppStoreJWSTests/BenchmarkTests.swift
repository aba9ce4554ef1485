import AppStoreJWS
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Throughput of DID_RENEW verification (notification + 2 nested JWS = 3 ES256 checks).
/// Runs only with IAPCTL_BENCH=1 (use a release build: `swift test -c release -Xswiftc -enable-testing`).
@Suite("Benchmark", .enabled(if: ProcessInfo.processInfo.environment["IAPCTL_BENCH"] == "1"))
struct BenchmarkTests {
    @Test func didRenewThroughput() throws {
        let jws = try FixtureFiles.text("real/03-loki-did-renew.jws")
        let verifier = try AppStoreVerifier(
            configuration: TrustConfiguration(bundleId: "com.loki-project.loki-messenger", environments: ["Sandbox"]))
        #expect(verifier.verify(jws).isValid)
        let count = Int(ProcessInfo.processInfo.environment["IAPCTL_BENCH_COUNT"] ?? "3000") ?? 3000
        func cpu() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        let start = cpu()
        for _ in 0..<count { precondition(verifier.verify(jws).isValid) }
        let seconds = cpu() - start
        print(
            "DID_RENEW: \(Int(Double(count) / seconds)) notifications/s, \(Int(3 * Double(count) / seconds)) ES256/s, \(Int(seconds / Double(count) * 1e6)) µs CPU each (1 thread)"
        )
    }
}
