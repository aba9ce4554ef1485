import Testing

@testable import IAPFoundation

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Small files read whole, refused past their limit.
@Suite("Bounded file reads")
struct BoundedFileTests {
    @Test func readsUpToTheLimitAndRefusesMore() throws {
        let path = "/tmp/iapctl-bounded-\(UInt64.random(in: 0..<UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }  // more than one 64 KiB read
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path, maxBytes: 70_000) == bytes)
        #expect(throws: BoundedFile.Failure.tooLarge(maxBytes: 69_999)) { try BoundedFile.read(path, maxBytes: 69_999) }
        #expect(throws: BoundedFile.Failure.cannotOpen(errno: 2)) { try BoundedFile.read(path + ".missing", maxBytes: 10) }
        #expect(throws: BoundedFile.Failure.cannotRead(errno: 21)) { try BoundedFile.read("/tmp", maxBytes: 10) }
    }
}
