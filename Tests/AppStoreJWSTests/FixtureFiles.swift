import AppStoreJWS
import Foundation

/// Reads files of this test target's `Fixtures` folder (copied into the test bundle).
enum FixtureFiles {
    static var root: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try data(path))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func list(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path).sorted()
    }
}

/// Milliseconds for an ISO-8601 instant (test helper).
func ms(_ iso: String) -> Int64 {
    guard let value = Timestamp.parseISO8601(iso) else { fatalError("bad test date \(iso)") }
    return value
}
