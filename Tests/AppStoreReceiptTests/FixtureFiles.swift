import AppStoreJWS
import Foundation

/// Reads files of this test target's `Fixtures` folder (copied into the test bundle).
enum FixtureFiles {
    static var root: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(path)))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ path: String) throws -> JSONValue {
        try JSONParser.parse(try bytes(path))
    }
}

/// Milliseconds for an ISO-8601 instant (test helper).
func ms(_ iso: String) -> Int64 {
    guard let value = Timestamp.parseISO8601(iso) else { fatalError("bad test date \(iso)") }
    return value
}
