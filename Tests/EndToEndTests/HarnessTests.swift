import Testing

@Suite("E2E harness")
struct HarnessTests {
    @Test func runsTheBinaryAndCapturesOutputAndStatus() throws {
        let cli = try CLI()
        let version = try cli.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("iapctl "))
        let bad = try cli.run(["no-such-command"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("error:"))
    }
}
