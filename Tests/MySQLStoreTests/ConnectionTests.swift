import Foundation
import SubscriptionEngine
import SubscriptionModel
import Testing

@_spi(Testing) @testable import MySQLStore

@Suite("MySQLStore connections and errors", .enabled(if: TestServer.isConfigured, TestServer.skipReason))
struct ConnectionTests {
    @Test func wrongPasswordIsAccessDeniedAndNeverEchoed() throws {
        let secret = "Wr0ng-Secret-\(UInt32.random(in: 0...UInt32.max))"
        let error = expectStoreError(\.isAccessDenied) {
            _ = try MySQLStore(url: TestServer.baseURL(), password: secret)
        }
        let text = try #require(error).description
        #expect(!text.contains(secret))
        #expect(text.contains("1045"))
    }

    @Test func unknownDatabaseIsNotFound() throws {
        let url = try TestServer.uniqueURL()
        let error = expectStoreError(\.isNotFound) { _ = try MySQLStore(url: url, password: TestServer.password) }
        let text = try #require(error).description
        #expect(text.contains(url.database))
        #expect(!text.contains(try #require(TestServer.password)))
    }

    @Test func createMakesAMissingDatabase() throws {
        let url = try TestServer.uniqueURL()
        let store = try MySQLStore(url: url, password: TestServer.password, create: true)
        #expect(try store.schemaVersion().current == 0)
        // Opening it again without `create` works now.
        _ = try MySQLStore(url: url, password: TestServer.password)
        // Dropped over another connection: then it is gone.
        try MySQLStore.dropDatabase(url: url, password: TestServer.password)
        expectStoreError(\.isNotFound) { _ = try MySQLStore(url: url, password: TestServer.password) }
    }

    @Test func unreachableSocketIsUnavailable() throws {
        var url = try TestServer.baseURL()
        url.socket = "/nonexistent-dir-\(UInt32.random(in: 0...UInt32.max))/mysql.sock"
        let error = expectStoreError(\.isUnavailable) { _ = try MySQLStore(url: url, password: TestServer.password) }
        let text = try #require(error).description
        #expect(text.contains("2002"))
        #expect(text.contains("retry"))
        #expect(!text.contains(try #require(TestServer.password)))
    }

    @Test func optionFileSuppliesUserAndPassword() throws {
        let base = try TestServer.baseURL()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("iapctl-my-\(UUID().uuidString).cnf")
        let password = try #require(TestServer.password)
        try "[client]\nuser=\(try #require(base.user))\npassword=\(password)\n".write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var url = base
        url.user = nil
        url.optionFile = file.path
        // Readable by others, a file holding a password is refused (like ssh and libpq); private, it is used.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let exposed = expectStoreError(\.isAccessDenied) { _ = try MySQLStore(url: url, password: nil) }
        #expect(try #require(exposed).description.contains("chmod 600"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let store = try MySQLStore(url: url, password: nil)
        #expect(try store.schemaVersion().supported == Schema.supported)
        #expect(!store.serverVersion.isEmpty)
    }

    @Test func unreadableOptionFileIsReported() throws {
        var url = try TestServer.baseURL()
        url.optionFile = "/nonexistent-\(UInt32.random(in: 0...UInt32.max)).cnf"
        let error = expectStoreError(\.isAccessDenied) { _ = try MySQLStore(url: url, password: nil) }
        #expect(error?.description.contains("option file") == true)
    }

    @Test func textRoundTripsExactly() throws {
        try TestServer.withFreshStore { store throws in
            // utf8mb4: 4-byte characters survive; ids compare exactly, trailing spaces included.
            let order = Sample.order("ü-🙂", user: "user 🙂 ")
            _ = try store.write { try $0.insertOrder(order) }
            let back = try #require(try store.read { try $0.order(no: "ü-🙂") })
            #expect(back.userId == "user 🙂 ")
            #expect(try store.read { try $0.order(no: "u-🙂") } == nil)
        }
    }
}
